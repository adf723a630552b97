"""``purr eval NAME``: the evaluations listed in ``training.eval.EVALUATIONS``. Each module
declares its arguments and runs in ``main``; this prints its report (JSON, or the module's
``render``) and, for a run a signal stopped, how to resume it.
"""

from __future__ import annotations

import argparse
import importlib
import json
from types import ModuleType

from serve.cli.common import resume_hint
from training.eval import EVALUATIONS


def _run(module: ModuleType, args: argparse.Namespace) -> int:
    report = module.main(args)
    stopped = report.pop("stopped", None)
    render = getattr(module, "render", None)
    print(render(report) if render else json.dumps(report, indent=2))
    return resume_hint(**stopped) if stopped else 0


def register(sub, common) -> None:
    """``purr eval`` and its evaluations."""
    modules = [importlib.import_module(f"training.eval.{name}") for name in EVALUATIONS]
    ev = sub.add_parser("eval", help="evaluations: " + ", ".join(EVALUATIONS))
    esub = ev.add_subparsers(dest="eval_command", required=True)
    for module in modules:
        spec = module.EVALUATION
        p = esub.add_parser(spec.name, help=spec.help)
        module.add_cli_args(p, common)
        p.set_defaults(handler=lambda args, module=module: _run(module, args))
