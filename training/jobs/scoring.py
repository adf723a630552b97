"""Scoring a JSONL file of texts against their evidence (``purr score --input``): the rows
checked, each scored by ``editor.report.auto_ais.score_text``, bad rows reported in place."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from editor.policy import CONTRADICTED_MIN
from editor.report.auto_ais import score_text
from retrieval.corpus import jsonl_rows, read_utf8
from retrieval.files import RowJournal

log = logging.getLogger(__name__)

MAX_EVIDENCE = 5000


class RowError(ValueError):
    """One input row is unusable; the message names the field."""


def read_evidence_arg(value: str) -> list[str]:
    """An ``--evidence`` value: literal text, or a file (.txt: one evidence; .jsonl: rows with
    ``text``; anything else: read as one text)."""
    path = Path(value)
    if not (len(value) < 4096 and path.is_file()):
        return [value]
    if path.suffix.lower() == ".jsonl":
        out = []
        for lineno, row in jsonl_rows(path):
            text = row.get("text") if isinstance(row, dict) else row
            if not isinstance(text, str):
                raise ValueError(
                    f"{path}:{lineno}: expected a string or an object with a 'text' string"
                )
            out.append(text)
        return out
    return [read_utf8(path)]


def check_row(row: Any, lineno: int) -> tuple[str, str, list[str], str | None]:
    """``(id, text, evidence, context)`` of a batch row, or RowError naming what is wrong."""
    if not isinstance(row, dict):
        raise RowError(f"line {lineno}: expected a JSON object")
    text = row.get("text")
    if not isinstance(text, str):
        raise RowError(f"line {lineno}: field 'text' is missing or not a string")
    evidence = row.get("evidence")
    if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
        raise RowError(f"line {lineno}: field 'evidence' must be a list of strings")
    if len(evidence) > MAX_EVIDENCE:
        raise RowError(
            f"line {lineno}: {len(evidence)} evidence items; at most {MAX_EVIDENCE} are scored"
        )
    context = row.get("context")
    if context is not None and not isinstance(context, str):
        raise RowError(f"line {lineno}: field 'context' must be a string")
    return str(row.get("id", lineno)), text, evidence, context


def score_file(
    model,
    src: Path,
    dst: Path,
    threshold: float,
    progress: bool = True,
    stop: Any = None,
    decompose: bool = False,
    contradicted_min: float = CONTRADICTED_MIN,
) -> dict[str, Any]:
    """Score every row of ``src`` into ``dst`` (a ``RowJournal``: rows already there are
    skipped, so a killed run resumes). Bad rows are written as ``{id, error}`` and counted; the
    rest of the file is still processed. ``stop`` (a ``GracefulStop``) ends the run between rows."""
    lines = read_utf8(src).splitlines()
    counts: dict[str, Any] = {"scored": 0, "errors": 0}

    def row_key(item: tuple[int, str]) -> str:
        lineno, line = item
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            return str(lineno)
        return str(row.get("id", lineno)) if isinstance(row, dict) else str(lineno)

    items = [(i, line) for i, line in enumerate(lines, 1) if line.strip()]
    with RowJournal(dst) as journal:
        todo = list(journal.pending(items, key=row_key))
        for lineno, line in tqdm(todo, desc="scoring", unit="row", disable=not progress):
            if stop is not None and stop.requested:
                break
            row: Any = None
            try:
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise RowError(f"line {lineno}: invalid JSON ({e.msg})") from None
                row_id, text, evidence, context = check_row(row, lineno)
                report = score_text(
                    model, text, evidence, context, threshold, decompose, contradicted_min
                )
                result = {"id": row_id, **report.to_json()}
                counts["scored"] += 1
            except ValueError as e:  # RowError or an empty text: report the row, keep going
                log.warning("%s: %s", src, e)
                row_id = row.get("id", lineno) if isinstance(row, dict) else lineno
                result = {"id": row_id, "error": str(e)}
                counts["errors"] += 1
            journal.write(result)
    return {**counts, **journal.summary().to_json()}
