"""CI runs exactly what the README tells a newcomer to run."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readme_test_command_word_for_word():
    readme = (ROOT / "README.md").read_text().splitlines()
    command = readme[next(i for i, line in enumerate(readme) if line.startswith("# 2. ")) + 1]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "pytest" in command and "lint-imports" in command
    assert ci[-1] == command  # the last thing CI does is the README's command


def test_the_modules_started_first_exist():
    from conftest import LONGEST_FIRST

    assert all((ROOT / path).is_file() for path in LONGEST_FIRST), LONGEST_FIRST
