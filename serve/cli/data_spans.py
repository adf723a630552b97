"""``purr data spans``: training rows for the span judge from every corpus on hand."""

from __future__ import annotations

import argparse
from pathlib import Path

from serve.cli.data_folder import add_data_arg, data_folder, write_summary
from training.args import option, switch


def add_spans_parser(dsub: argparse._SubParsersAction) -> None:
    p = dsub.add_parser(
        "spans",
        help="span judge training rows (claim, evidence, label, flagged spans, fixes) from the "
        "packaged summaries, SciFact, SummEdits, WiCE and FEVER, split by document",
    )
    p.add_argument(
        "--out",
        required=True,
        help="folder for parsed.jsonl.xz, train/dev/test, real.jsonl.xz, stats.json and summary.json",
    )
    option(
        p,
        "--passes",
        int,
        3,
        "visits of every sentence, each with a fresh window (3: about 1M rows)",
    )
    option(p, "--workers", int, 2, "processes making rows")
    switch(
        p, "--questions", "rows with a question as context too (qa-wrong, qa-right, qa-unanswered)"
    )
    switch(
        p,
        "--restated",
        "claims that restate the sentence too (sup-restated, con-restated), and windows "
        "cut to random sizes",
    )
    option(p, "--parse-workers", int, 1, "spaCy processes")
    option(p, "--limit", int, 0, "documents to parse (0: all)")
    add_data_arg(p, "corpus")
    p.set_defaults(handler=_cmd_spans)


def _cmd_spans(args: argparse.Namespace) -> int:
    from training.data.spans.make import make
    from training.data.spans.parse import parse
    from training.data.spans.real import real_rows
    from training.data.spans.rows import write_rows

    if args.passes < 1 or args.workers < 1:
        raise ValueError(f"--passes and --workers must be >= 1, got {args.passes}, {args.workers}")
    data = data_folder(args, "corpus")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    parsed = out / "parsed.jsonl.xz"
    if not parsed.is_file():  # the slow part (spaCy), done once
        eval_dir = Path(__file__).resolve().parents[2] / "training" / "eval"
        parse(data, eval_dir, parsed, args.limit, args.parse_workers)
    stats = make(
        parsed, out, args.passes, args.workers, questions=args.questions, restated=args.restated
    )
    stats["real"] = write_rows(real_rows(data), out / "real.jsonl.xz")
    return write_summary(args, out, stats)
