"""The contract of a benchmark (``purr bench NAME`` → one module).

Each benchmark module declares ``BENCHMARK`` (its name and help line),
``add_cli_args(parser)`` and ``main(args) -> dict``, imports heavy things inside ``main``, and is
listed in ``serve.bench.BENCHMARKS``, the one list the CLI and the docs read. ``main`` writes its
JSON report and PNG plot and returns the report; the CLI prints it (JSON, or the module's
``render(report)``). Benchmarks measure speed and memory: medians of several runs, ratios
against a baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Benchmark:
    """What ``purr bench NAME`` measures."""

    name: str
    help: str


def out_flag(p: argparse.ArgumentParser, name: str) -> None:
    """``--out FOLDER``: the report goes to ``FOLDER/bench_NAME.json``, its plot beside it. The
    CLI resolves it into ``args.report_file`` (``None`` without ``--out``)."""
    p.add_argument(
        "--out",
        default=None,
        help=f"folder for bench_{name.replace('-', '_')}.json and its plot (a .json path, the old form, still works)",
    )
    p.set_defaults(report_name=name)


def report_file(out: str | None, name: str) -> Path | None:
    """Where a benchmark's JSON report goes: ``OUT/bench_NAME.json``; a path ending in .json is
    the old form, kept for one release.

    >>> report_file("runs/b", "cold-start").as_posix()
    'runs/b/bench_cold_start.json'
    """
    if not out:
        return None
    if out.endswith(".json"):
        return Path(out)
    return Path(out) / f"bench_{name.replace('-', '_')}.json"


def config_flags(p: argparse.ArgumentParser) -> None:
    """``--config`` (a preset or YAML file) and ``--set KEY=VALUE`` overrides."""
    p.add_argument("--config", default="default")
    p.add_argument("--set", dest="overrides", action="append", default=[])


def save_report(
    report: dict[str, Any],
    path: Path | None,
    plot: Callable[[dict[str, Any], Path], None] | None = None,
    indent: int | None = 2,
) -> None:
    """With ``path``, write ``report`` there as JSON (its folder made first) and its ``plot``
    beside it (.png)."""
    from retrieval.files import write_text

    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(report, indent=indent) + "\n")
        if plot is not None:
            plot(report, path.with_suffix(".png"))
