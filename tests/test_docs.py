"""The front door and the house rules: a short README, no file over 400 lines, and a docs site
that builds in strict mode with a CLI reference and a layout generated from the code."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 400
MAX_README_WORDS = 2500
CHECKED = (".py", ".md", ".yml", ".yaml", ".toml", ".html", ".css", ".js", ".txt", ".cfg")
EXEMPT = ("editor/models/", "configs/constraints.txt")
"""Shipped model folders (weights, tokenizers) and the generated pin list."""


def _project_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [
        ROOT / f
        for f in listed
        if f.endswith(CHECKED) and not f.startswith(EXEMPT) and (ROOT / f).is_file()
    ]


def test_the_readme_is_a_front_door():
    words = len((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert words <= MAX_README_WORDS, f"README.md has {words} words; move detail into docs/pages/"


def test_no_file_is_over_400_lines():
    files = _project_files()
    assert len(files) > 200  # the tree was listed
    over = {
        f.relative_to(ROOT).as_posix(): n
        for f in files
        if (n := len(f.read_text(encoding="utf-8", errors="replace").splitlines())) > MAX_LINES
    }
    assert not over, f"files over {MAX_LINES} lines (split them by concern): {over}"


def _subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[str]:
    names = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                names.append(" ".join(["purr", *path, name]))
                names += _subcommands(child, (*path, name))
    return names


@pytest.mark.integration
def test_the_docs_build_strictly_with_generated_reference_pages(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs need the dev extra: pip install -e '.[dev]'")
    from serve.cli import build_parser

    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "docs/mkdocs.yml"]
        + ["-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr[-3000:]
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    names = _subcommands(build_parser())
    assert len(names) > 30
    missing = [name for name in names if f"<code>{name}</code>" not in cli]
    assert not missing, f"subcommands missing from the CLI reference: {missing}"
    layout = (site / "reference" / "layout" / "index.html").read_text(encoding="utf-8")
    for module in ("training/eval/", "training/bench/", "editor/", "serve/bench/", "edits.py"):
        assert module in layout, module
    measured = (site / "reference" / "measurements" / "index.html").read_text(encoding="utf-8")
    assert "purr bench cold-start" in measured and "purr eval edits" in measured
