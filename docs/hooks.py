"""MkDocs hooks: the pages that are generated from the code at build time, so that they cannot
drift from it: the CLI reference (from purr's argparse parser), the package layout (from the
module docstrings) and the lists of benchmarks and evaluations (from their registries)."""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("editor", "retrieval", "training", "serve")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {a.dest: a.help or "" for a in action._choices_actions}
    return {}


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| argument | default | help |", "|---|---|---|"]
    for a in parser._actions:
        if isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = ", ".join(a.option_strings) or a.dest
        default = "" if a.default in (None, argparse.SUPPRESS, False, []) else f"`{a.default}`"
        text = (a.help or "").replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{name}` | {default} | {text} |")
    return rows if len(rows) > 2 else []


def cli_reference() -> str:
    """Every ``purr`` subcommand, nested ones included, with its usage and arguments."""
    sys.path.insert(0, str(ROOT))
    from serve.cli import build_parser

    out = [
        "# CLI reference",
        "",
        "Generated from `purr`'s argument parser when the docs are built. Every command takes "
        "`-h` for the same text.",
        "",
    ]

    def walk(parser: argparse.ArgumentParser, path: list[str], help_text: str) -> None:
        name = " ".join(["purr", *path])
        if path:
            out.extend([f"{'#' * min(len(path) + 1, 4)} `{name}`", ""])
            if help_text:
                out.extend([help_text, ""])
        usage = " ".join(parser.format_usage().split())
        out.extend(["```text", usage.removeprefix("usage: "), "```", ""])
        args = _arguments(parser)
        if args:
            out.extend([*args, ""])
        helps = _helps(parser)
        for sub, child in _subparsers(parser).items():
            walk(child, [*path, sub], helps.get(sub, ""))

    walk(build_parser(), [], "")
    return "\n".join(out) + "\n"


def _docline(path: Path) -> str:
    try:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    except SyntaxError:
        return ""
    return " ".join(doc.split("\n\n")[0].split())


def layout() -> str:
    """The packages as a tree, each folder and module with the first paragraph of its docstring."""
    out = [
        "# Layout",
        "",
        "Generated from the code when the docs are built: each package, folder and module with the "
        "first paragraph of its docstring. Imports point one way, serve → training → editor → "
        "retrieval (checked by `lint-imports`).",
        "",
    ]

    def walk(folder: Path, depth: int) -> None:
        init = folder / "__init__.py"
        line = _docline(init) if init.is_file() else ""
        rel = folder.relative_to(ROOT).as_posix()
        out.append(f"{'  ' * depth}- **`{rel}/`**" + (f": {line}" if line else ""))
        for path in sorted(folder.iterdir()):
            if path.is_dir() and path.name != "__pycache__" and any(path.rglob("*.py")):
                walk(path, depth + 1)
            elif path.suffix == ".py" and path.name != "__init__.py":
                doc = _docline(path)
                out.append(f"{'  ' * (depth + 1)}- `{path.name}`" + (f": {doc}" if doc else ""))

    for package in PACKAGES:
        walk(ROOT / package, 0)
    return "\n".join(out) + "\n"


def measurements() -> str:
    """``purr bench`` and ``purr eval``, each subcommand with its help, from the parser (which
    reads the registries ``serve.bench.BENCHMARKS`` and ``training.eval.EVALUATIONS``)."""
    sys.path.insert(0, str(ROOT))
    from serve.bench import BENCHMARKS
    from serve.cli import build_parser
    from training.eval import EVALUATIONS

    commands = _subparsers(build_parser())
    out = ["# Benchmarks and evaluations", ""]
    for group, modules in (
        ("bench", {name: path for name, path in BENCHMARKS}),
        ("eval", {name: f"training.eval.{name}" for name in EVALUATIONS}),
    ):
        title = "Benchmarks (speed and memory)" if group == "bench" else "Evaluations (quality)"
        out.extend([f"## {title}", "", "| command | what | module |", "|---|---|---|"])
        helps = _helps(commands[group])
        for name in _subparsers(commands[group]):
            module = modules[name].replace(".", "/") + ".py"
            out.append(f"| `purr {group} {name}` | {helps.get(name, '')} | `{module}` |")
        out.append("")
    out.append("Arguments of each: [the CLI reference](cli.md).")
    return "\n".join(out) + "\n"


GENERATED = {
    "reference/cli.md": cli_reference,
    "reference/layout.md": layout,
    "reference/measurements.md": measurements,
}


def on_files(files, config):
    """Add the generated pages to the site."""
    from mkdocs.structure.files import File

    for uri, make in GENERATED.items():
        files.append(File.generated(config, uri, content=make()))
    return files
