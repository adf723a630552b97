"""``purr bench NAME``: the benchmarks listed in ``serve.bench.BENCHMARKS`` (speed and memory).
Each module declares its arguments and runs in ``main``, writing a JSON report and a PNG plot;
this prints the report (JSON, or the module's ``render``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from types import ModuleType

from serve.bench import BENCHMARKS
from training.bench.base import report_file


def resolve_report_file(args: argparse.Namespace) -> Path | None:
    """Where a benchmark with ``--out`` writes its report (``args.report_file``); the old
    ``--out FILE.json`` form still works, with a warning."""
    name = args.report_name
    if args.out and args.out.endswith(".json"):
        print(
            f"purr bench {name}: --out FILE.json is deprecated; pass a folder "
            f"(the report goes to FOLDER/bench_{name}.json)",
            file=sys.stderr,
        )
    return report_file(args.out, name)


def _run(module: ModuleType, args: argparse.Namespace) -> int:
    if getattr(args, "report_name", None) is not None:
        args.report_file = resolve_report_file(args)
    report = module.main(args)
    render = getattr(module, "render", None)
    print(render(report) if render else json.dumps(report, indent=2))
    return 0


def register(sub, common) -> None:
    """``purr bench`` and its benchmarks."""
    bench = sub.add_parser("bench", help="benchmarks (speed and memory)")
    bsub = bench.add_subparsers(dest="bench", required=True)
    for name, path in BENCHMARKS:
        module = importlib.import_module(path)
        if module.BENCHMARK.name != name:
            raise RuntimeError(f"{path} declares benchmark {module.BENCHMARK.name!r}, not {name!r}")
        p = bsub.add_parser(name, help=module.BENCHMARK.help)
        module.add_cli_args(p)
        p.set_defaults(handler=lambda args, module=module: _run(module, args))
