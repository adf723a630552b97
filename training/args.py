"""Argument helpers shared by the modules that declare their own ``purr`` arguments
(``add_cli_args``): argparse types and checks of the common flags.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1.

    >>> positive_int("3")
    3
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number > 0.

    >>> positive_float("0.5")
    0.5
    """
    return _float(text, lambda v: v > 0, "> 0")


def non_negative_float(text: str) -> float:
    """An argparse type: a number >= 0.

    >>> non_negative_float("0")
    0.0
    """
    return _float(text, lambda v: v >= 0, ">= 0")


def _float(text: str, ok: Callable[[float], bool], what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or not ok(value):
        raise argparse.ArgumentTypeError(f"expected a number {what}, got {value}")
    return value


def switch(p: argparse.ArgumentParser | argparse._ArgumentGroup, flag: str, help: str) -> None:
    """A ``--flag`` that is off unless given.

    >>> p = argparse.ArgumentParser(); switch(p, "--dry-run", "print, write nothing")
    >>> p.parse_args(["--dry-run"]).dry_run, p.parse_args([]).dry_run
    (True, False)
    """
    p.add_argument(flag, action="store_true", help=help)


def option(
    p: argparse.ArgumentParser | argparse._ArgumentGroup,
    flag: str,
    type: Callable[[str], object],
    default: object,
    help: str,
) -> None:
    """A ``--flag`` read by ``type``, ``default`` when not given.

    >>> p = argparse.ArgumentParser(); option(p, "--n", positive_int, 20, "rows")
    >>> p.parse_args(["--n", "3"]).n, p.parse_args([]).n
    (3, 20)
    """
    p.add_argument(flag, type=type, default=default, help=help)


def check_data_dir(path: str | None) -> None:
    """Refuse a ``--data-dir`` that is not a folder."""
    if path is not None and not Path(path).is_dir():
        raise ValueError(f"--data-dir {path} is not a folder; point it at shared/data")


def add_dev_set_args(
    p: argparse.ArgumentParser,
    out: str,
    *,
    model: str = "a verifier folder, large/medium, or an HF id",
    model_required: bool = True,
    data_dir: str = "the shared/data folder (default ../shared/data)",
    sources: str = "shared",
    sources_help: str = "NLI sets or aliases",
    limit: int | None = None,
    limit_help: str = "dev rows read per source",
    max_length: int | None = None,
) -> None:
    """``--model --out --data-dir --sources --limit`` (and ``--max-length``) of a command that
    scores a verifier on the NLI dev sets; ``out`` is the help of ``--out``."""
    p.add_argument("--model", required=model_required, help=model)
    p.add_argument("--out", required=True, help=out)
    p.add_argument("--data-dir", default=None, help=data_dir)
    p.add_argument("--sources", default=sources, help=sources_help)
    option(p, "--limit", positive_int, limit, limit_help)
    if max_length is not None:
        option(p, "--max-length", positive_int, max_length, "tokens per premise window")


def add_device_args(p: argparse.ArgumentParser) -> None:
    """``--device`` (auto, cpu or cuda) and ``-v``, the last arguments of a model's command."""
    p.add_argument("--device", default="auto", help="auto (cuda when available), cpu or cuda")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")


def read_rows(src: Path, required: tuple[str, ...], hint: str) -> list[dict]:
    """The JSON objects of a JSONL file (``retrieval.corpus.jsonl_rows``), each with the
    ``required`` keys; an error naming the file and line otherwise, ending with ``hint`` (what
    makes such rows, or where they are described)."""
    from retrieval.corpus import jsonl_rows

    if not src.is_file():
        raise ValueError(f"{src}: no such file")
    rows = []
    for n, row in jsonl_rows(src):
        if not isinstance(row, dict):
            raise ValueError(f"{src}:{n}: expected a JSON object")
        missing = [k for k in required if k not in row]
        if missing:
            raise ValueError(f"{src}:{n}: missing {missing}; {hint}")
        rows.append(row)
    if not rows:
        raise ValueError(f"{src}: no rows")
    return rows
