"""``purr score``: auto-AIS of a text against given evidence, one text or a JSONL file of them."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from editor.types import PassageAttribution
from retrieval.corpus import jsonl_rows, read_utf8

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


def report_json(result: PassageAttribution, evidence: list[str]) -> dict[str, Any]:
    sentences = []
    for s in result.sentences:
        record = asdict(s)
        record["evidence"] = evidence[s.evidence_index] if s.evidence_index is not None else None
        sentences.append(record)
    applicable = [s for s in result.sentences if s.applicable]
    return {
        "attribution": result.attribution,
        "threshold": result.threshold,
        "applicable_sentences": len(applicable),
        "attributable_sentences": sum(bool(s.attributable) for s in applicable),
        "sentences": sentences,
    }


def score_one(
    model, text: str, evidence: list[str], context: str | None, threshold: float
) -> dict[str, Any]:
    from editor.attribution import auto_ais

    if not text.strip():
        raise ValueError("the text is empty; pass the passage to score")
    return report_json(
        auto_ais(text, evidence, model, context=context, threshold=threshold), evidence
    )


def score_file(
    model, src: Path, dst: Path, threshold: float, progress: bool = True
) -> dict[str, int]:
    """Score every row of ``src`` into ``dst``. Bad rows are written as ``{id, error}`` and
    counted; the rest of the file is still processed."""
    lines = read_utf8(src).splitlines()
    counts = {"scored": 0, "errors": 0}
    dst.parent.mkdir(parents=True, exist_ok=True)
    with open(dst, "w", encoding="utf-8") as out:
        for lineno, line in enumerate(
            tqdm(lines, desc="scoring", unit="row", disable=not progress), 1
        ):
            if not line.strip():
                continue
            row: Any = None
            try:
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise RowError(f"line {lineno}: invalid JSON ({e.msg})") from None
                row_id, text, evidence, context = check_row(row, lineno)
                result = {"id": row_id, **score_one(model, text, evidence, context, threshold)}
                counts["scored"] += 1
            except ValueError as e:  # RowError or an empty text: report the row, keep going
                log.warning("%s: %s", src, e)
                row_id = row.get("id", lineno) if isinstance(row, dict) else lineno
                result = {"id": row_id, "error": str(e)}
                counts["errors"] += 1
            out.write(json.dumps(result, ensure_ascii=False) + "\n")
    return counts


def add_score_parser(sub) -> None:
    p = sub.add_parser("score", help="auto-AIS attribution of a text against evidence")
    p.add_argument("text", nargs="?", help="the passage to score (or use --input)")
    p.add_argument(
        "--evidence",
        nargs="*",
        default=[],
        help="evidence texts or files (.txt, .jsonl rows with 'text')",
    )
    p.add_argument("--context", default=None, help="the dialogue the passage answers")
    p.add_argument("--input", help="JSONL rows {id, text, evidence: [..], context?}")
    p.add_argument("--output", help="where --input results go (JSONL)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--config", default="default")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(handler=run_score)


def run_score(args: argparse.Namespace) -> int:
    from editor.attribution import build
    from editor.config import load_config

    cfg = load_config(args.config, args.overrides)
    if args.input:
        if args.text or args.evidence:
            raise ValueError(
                "pass either TEXT --evidence ... or --input FILE --output FILE, not both"
            )
        if not args.output:
            raise ValueError("--input needs --output FILE for the scored rows")
        src = Path(args.input)
        if not src.is_file():
            raise ValueError(f"{src}: no such file")
        model = build(cfg.attribution)
        counts = score_file(model, src, Path(args.output), cfg.attribution.threshold)
        print(
            f"scored {counts['scored']} rows into {args.output}; {counts['errors']} rows had errors (see their 'error' field)"
        )
        return 0 if counts["scored"] or not counts["errors"] else 2
    if args.text is None:
        raise ValueError("pass the TEXT to score (or --input FILE --output FILE)")
    evidence = [e for value in args.evidence for e in read_evidence_arg(value)]
    model = build(cfg.attribution)
    report = score_one(model, args.text, evidence, args.context, cfg.attribution.threshold)
    if args.json:
        print(
            json.dumps(
                {"text": args.text, "context": args.context, "evidence": evidence, **report},
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    attr = report["attribution"]
    head = "not applicable (no checkable sentence)" if attr is None else f"{attr:.3f}"
    print(
        f"auto-AIS {head}  ({report['attributable_sentences']}/{report['applicable_sentences']} sentences attributable)"
    )
    for s in report["sentences"]:
        mark = "n/a " if not s["applicable"] else f"{s['attribution']:.2f}"
        print(f"  [{mark}] {s['decontextualized']}", file=sys.stdout)
    return 0
