"""``purr data real-errors`` (real hallucinations of the packaged LLMs, with gold answers and the
evidence that fixes them, ``training/data/real_errors.py``), ``real-claims`` (human-labelled
claims) and ``fava`` (FAVA-Bench's entity errors): dev and test sets for ``purr eval edits``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from retrieval.files import write_text
from serve.cli.data_folder import add_data_arg, data_folder, write_splits
from training.args import option

FAVA = "raw/fava/annotations.json"


def add_real_errors_parser(dsub: argparse._SubParsersAction) -> None:
    from training.data.real_errors import FORMS, MODELS, SOURCES

    p = dsub.add_parser(
        "real-errors",
        help="dev and test sets: the packaged LLMs' own wrong answers to NQ-open, StrategyQA, "
        "CLAPnq and two-hop questions, with the gold answers and their evidence",
    )
    p.add_argument("--out", required=True, help="folder for dev.jsonl, test.jsonl, corpus.jsonl")
    p.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of {list(MODELS)}")
    p.add_argument("--sources", default=",".join(SOURCES), help=f"comma-separated, of {SOURCES}")
    p.add_argument("--forms", default=",".join(FORMS), help="short (one sentence), long or both")
    option(p, "--n", int, 300, "questions per source (default 300)")
    option(
        p,
        "--skip",
        int,
        0,
        "leave out the first SKIP questions of each source and every question sharing an "
        "evidence document with them: training answers a --n SKIP dev set never reads",
    )
    option(p, "--samples", int, 0, "answers sampled (temperature 0.9) per question")
    option(p, "--batch-size", int, 8, "prompts generated at once")
    add_data_arg(p, "raw")
    p.set_defaults(handler=_cmd_real_errors)


def add_real_claims_parser(dsub: argparse._SubParsersAction) -> None:
    from training.data.real_claims import DATASETS

    p = dsub.add_parser(
        "real-claims",
        help="dev and test sets of human-labelled real claims (WiCE, BEGIN, SummEdits) with "
        "their evidence, for purr eval edits",
    )
    p.add_argument("--out", required=True, help="folder for dev.jsonl and test.jsonl")
    p.add_argument(
        "--datasets", default=",".join(DATASETS), help=f"comma-separated, of {list(DATASETS)}"
    )
    option(p, "--n", int, 150, "rows of each kind per split (default 150)")
    add_data_arg(p, "raw")
    p.set_defaults(handler=_cmd_real_claims)


def _cmd_real_claims(args: argparse.Namespace) -> int:
    from training.data.real_claims import DATASETS, claim_rows

    datasets = _pick(args.datasets, DATASETS, "--datasets")
    if args.n < 1:
        raise ValueError(f"--n must be >= 1, got {args.n}")
    rows = claim_rows(data_folder(args), args.n, datasets)
    return write_splits(args, rows, lambda r: f"{r['split']}:{r['dataset']}:{r['label']}")


def add_fava_parser(dsub: argparse._SubParsersAction) -> None:
    p = dsub.add_parser(
        "fava",
        help="dev and test sets of FAVA-Bench's entity errors (LLM answers, people's fixes) "
        "whose subject the embedded corpus covers, for purr eval edits (researched evidence)",
    )
    p.add_argument("--out", required=True, help="folder for dev.jsonl and test.jsonl")
    add_data_arg(p, FAVA)
    p.set_defaults(handler=_cmd_fava)


def _cmd_fava(args: argparse.Namespace) -> int:
    from retrieval.corpus import read_wiki_summaries
    from training.data.fava import fava_rows

    path = data_folder(args, FAVA) / FAVA
    rows = fava_rows(path, (d.title for d in read_wiki_summaries()))
    return write_splits(args, rows, lambda r: f"{r['split']}:{'wrong' if r['wrong'] else 'right'}")


def _pick(value: str, allowed, flag: str) -> tuple[str, ...]:
    items = tuple(x.strip() for x in value.split(",") if x.strip())
    bad = [x for x in items if x not in allowed]
    if not items or bad:
        raise ValueError(f"{flag} takes a comma-separated list of {sorted(allowed)}, got {value!r}")
    return items


def _cmd_real_errors(args: argparse.Namespace) -> int:
    from training.data.real_errors import (
        FORMS,
        MODELS,
        SOURCES,
        answer_rows,
        beyond,
        bridge_questions,
        clapnq_questions,
        nq_open_questions,
        strategyqa_questions,
    )

    models = _pick(args.models, MODELS, "--models")
    sources = _pick(args.sources, SOURCES, "--sources")
    forms = _pick(args.forms, FORMS, "--forms")
    if args.n < 1 or args.batch_size < 1 or args.skip < 0 or args.samples < 0:
        raise ValueError("--n and --batch-size must be >= 1, --skip and --samples >= 0")
    data = data_folder(args)
    questions, want = [], args.n + args.skip
    if "nq-open" in sources:
        questions += nq_open_questions(data, want)
    if "strategyqa" in sources:
        questions += strategyqa_questions(data, want)
    if "clapnq" in sources:
        questions += clapnq_questions(data, want)
    if "bridges" in sources:
        questions += bridge_questions(want)
    questions = beyond(questions, args.skip)
    rows = [
        r
        for m in models
        for r in answer_rows(questions, m, forms, args.batch_size, samples=args.samples)
    ]
    facts = {
        q.evidence_title: {"id": q.id, "title": q.evidence_title, "text": q.evidence_text}
        for q in questions
        if q.source in ("strategyqa", "clapnq")
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text(
        out / "corpus.jsonl",
        "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in facts.values()),
    )

    def kind(r: dict) -> str:
        return f"{r['split']}:{r['model']}:{r['form']}:{'wrong' if r['wrong'] else 'right'}"

    return write_splits(args, rows, kind, questions=len(questions))


def add_multi_answers_parser(dsub: argparse._SubParsersAction) -> None:
    p = dsub.add_parser(
        "multi-answers",
        help="dev set: answers of several sentences against their own document, one wrong fact "
        "or none, made from a documents set (training/eval/documents.jsonl)",
    )
    p.add_argument("--documents", default="training/eval/documents.jsonl", help="the set to join")
    p.add_argument("--out", required=True, help="JSONL file to write")
    p.set_defaults(handler=_cmd_multi_answers)


def _cmd_multi_answers(args: argparse.Namespace) -> int:
    from training.data.multi_answers import write_multi_answers

    documents = Path(args.documents)
    if not documents.is_file():
        raise ValueError(f"{documents} not found; pass --documents a documents set (JSONL)")
    counts = write_multi_answers(documents, Path(args.out))
    print(json.dumps({"out": args.out, "rows": counts}, indent=2))
    return 0
