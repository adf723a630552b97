"""The shape every ``purr data`` command that makes a folder of rows shares: ``--out FOLDER``,
``--data`` (the shared data folder it reads, checked before any work), and ``summary.json``
(the command that made the folder and its rows counted), printed when done."""

from __future__ import annotations

import argparse
import json
import shlex
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path


def add_data_arg(p: argparse.ArgumentParser, holds: str) -> None:
    """``--data``: the folder that holds ``holds`` (default ``../shared/data``)."""
    p.add_argument(
        "--data", default=None, help=f"the data folder that holds {holds} (default ../shared/data)"
    )


def data_folder(args: argparse.Namespace, needs: str = "") -> Path:
    """The shared data folder of ``args``, once it is known to hold ``needs``."""
    from training.data.cited import DATA

    data = Path(args.data) if args.data else DATA
    if needs and not (data / needs).exists():
        raise ValueError(f"{data / needs} not found; pass --data FOLDER that holds {needs}")
    return data


def command_of(args: argparse.Namespace) -> str:
    """The command line that ran ``args`` (as the user typed it)."""
    return shlex.join(("purr", *getattr(args, "argv", ())))


def write_summary(args: argparse.Namespace, out: Path, summary: dict) -> int:
    """``out/summary.json``: ``command``, ``out`` and ``summary``; printed too."""
    from retrieval.files.atomic import write_text

    body = {"command": command_of(args), "out": str(out), **summary}
    write_text(out / "summary.json", json.dumps(body, indent=2) + "\n")
    print(json.dumps(body, indent=2))
    return 0


def write_splits(
    args: argparse.Namespace,
    rows: list[dict],
    kind: Callable[[dict], str],
    splits: Iterable[str] = ("dev", "test"),
    **summary: object,
) -> int:
    """``out/{split}.jsonl`` from ``rows`` (by their ``split``) and the summary counting the rows
    of each ``kind(row)``."""
    from retrieval.files.atomic import write_text

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for split in splits:
        lines = [json.dumps(r, ensure_ascii=False) + "\n" for r in rows if r["split"] == split]
        write_text(out / f"{split}.jsonl", "".join(lines))
    counts = dict(sorted(Counter(kind(r) for r in rows).items()))
    return write_summary(args, out, {**summary, "rows": counts})


def made_by(folder: Path, default: str) -> str:
    """The command that made ``folder`` (its ``summary.json``), else ``default``."""
    path = folder / "summary.json"
    try:
        return str(json.loads(path.read_text("utf-8"))["command"])
    except (OSError, ValueError, KeyError, TypeError):
        return default
