"""``purr score``: auto-AIS of a text (or a JSONL file of rows) against evidence."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from editor.report.auto_ais import score_text
from training.jobs.scoring import read_evidence_arg, score_file


def register(sub, common) -> None:
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
    from editor.attribution.base import build
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
        from retrieval.files import GracefulStop
        from serve.cli.common import interrupted

        model = build(cfg.attribution)
        with GracefulStop() as stop:
            a = cfg.attribution
            counts = score_file(
                model,
                src,
                Path(args.output),
                cfg.judge.attributed_min,
                stop=stop,
                decompose=a.decompose,
                contradicted_min=cfg.judge.contradicted_min,
            )
        print(
            f"scored {counts['scored']} rows into {args.output} ({counts['skipped']} already "
            f"there, {counts['redone']} redone); {counts['errors']} rows had errors (see their "
            "'error' field)"
        )
        if stop.requested:
            return interrupted(stop, counts["written"])
        return 0 if counts["scored"] or counts["skipped"] or not counts["errors"] else 2
    if args.text is None:
        raise ValueError("pass the TEXT to score (or --input FILE --output FILE)")
    evidence = [e for value in args.evidence for e in read_evidence_arg(value)]
    model = build(cfg.attribution)
    a = cfg.attribution
    j = cfg.judge
    report = score_text(
        model, args.text, evidence, args.context, j.attributed_min, a.decompose, j.contradicted_min
    ).to_json()
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
        mark = "n/a " if not s["applicable"] else f"{s['attribution']:.2f} {s.get('verdict') or ''}"
        print(f"  [{mark}] {s['decontextualized']}", file=sys.stdout)
    return 0
