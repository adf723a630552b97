"""One row at a time into ``results.jsonl`` through the row journal, as every resumable
evaluation runs: rows already there are skipped, SIGTERM or Ctrl-C finishes the row in hand."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm


@dataclass(frozen=True)
class JournalRun:
    """The results of the given rows (None when the run was stopped) and the rows written."""

    results: list[dict[str, Any]] | None
    written: int


def journal_rows(
    rows: Sequence[dict[str, Any]],
    out: Path,
    fn: Callable[[dict[str, Any]], dict[str, Any]],
    desc: str,
    progress: bool = True,
    stop: Any = None,
) -> JournalRun:
    """``fn`` over the rows not yet in ``out/results.jsonl`` (keyed by ``id``), then every
    result of ``rows`` read back from the file. ``stop``: a ``GracefulStop`` the caller holds
    (one is made otherwise)."""
    from retrieval.files import GracefulStop, RowJournal

    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.jsonl"
    guard = GracefulStop() if stop is None else nullcontext(stop)
    with RowJournal(path) as journal, guard as stop:
        todo = list(journal.pending(rows, key=lambda r: str(r["id"])))
        for row in tqdm(todo, desc=desc, disable=not progress):
            if stop.requested:
                break
            journal.write(fn(row))
    if stop.requested:
        return JournalRun(None, journal.written)
    wanted = {str(r["id"]) for r in rows}
    lines = path.read_text("utf-8").splitlines()
    results = [r for r in (json.loads(x) for x in lines if x.strip()) if str(r["id"]) in wanted]
    return JournalRun(results, journal.written)
