"""The contract of an evaluation (``purr eval NAME`` → ``training/eval/NAME.py``).

Each evaluation module declares ``EVALUATION`` (its name, help line and primary metric),
``add_cli_args(parser, common)`` and ``main(args) -> dict``, imports heavy things inside
``main``, and is listed in ``training.eval.EVALUATIONS``, which the CLI and the docs read.
``main`` returns the report the CLI prints as JSON; a module may also define
``render(report) -> str`` for a text summary instead. A run stopped by a signal puts
``stopped(...)`` under the ``"stopped"`` key, which the CLI takes out to say how to resume.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Evaluation:
    """What ``purr eval NAME`` measures and which number it is judged by."""

    name: str
    help: str
    primary: str
    higher_is_better: bool = True


def stopped(stop: Any, written: int) -> dict[str, Any]:
    """What the CLI needs to say how to resume a run a signal stopped (``GracefulStop``).

    >>> class Stop: name, exit_code = "SIGTERM", 143
    >>> stopped(Stop(), 3)
    {'signal': 'SIGTERM', 'exit_code': 143, 'written': 3}
    """
    return {"signal": stop.name, "exit_code": stop.exit_code, "written": written}


def checking_pipeline(args: Any) -> tuple[Any, Any]:
    """The configured pipeline, prepared without research, and a citation checker over its
    judge: what the evaluations of cited text run (``--config/--set`` from ``args``)."""
    from editor.config import load_config
    from editor.factory import Components, citation_checker
    from editor.pipeline import Pipeline

    pipeline = Pipeline(Components(load_config(args.config, list(args.overrides))))
    pipeline.prepare(research=False)
    judge = getattr(pipeline.editor, "judge", None)
    return pipeline, citation_checker(pipeline.cfg, pipeline.attribution, judge)
