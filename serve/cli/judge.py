"""``purr data judge-rows`` (labelled sentences of errors people wrote, ``training.data.judge_rows``)
and ``purr train judge`` (the learned judge's head, ``training.fit.judge_head``) and ``purr train
reader-head`` (its decision on the reader's proposals, ``training.fit.reader_head``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from serve.cli.data_folder import add_data_arg, data_folder, made_by, write_splits
from training.args import option, positive_int, switch


def add_rows_parser(dsub: argparse._SubParsersAction) -> None:
    p = dsub.add_parser(
        "judge-rows",
        help="train, dev and test sentences with errors people wrote (BUMP), their evidence and "
        "fixes, for purr train judge",
    )
    p.add_argument("--out", required=True, help="folder for train.jsonl, dev.jsonl, test.jsonl")
    add_data_arg(p, "raw/bump")
    p.add_argument("--planted", default=None, help="purr data planted rows to add (train/dev)")
    p.add_argument(
        "--exclude", default=None, help="planted rows whose articles to leave out (a test set)"
    )
    p.add_argument(
        "--answers",
        nargs="*",
        default=[],
        help="purr data real-errors files (made with --skip) whose answers to add (train/dev)",
    )
    p.set_defaults(handler=_cmd_rows)


def _cmd_rows(args: argparse.Namespace) -> int:
    from training.data.judge_rows import SPLITS, judge_rows

    planted = Path(args.planted) if args.planted else None
    exclude = Path(args.exclude) if args.exclude else None
    answers = [Path(a) for a in args.answers]
    for a in answers:
        if not a.is_file():
            raise ValueError(f"{a} not found; make it with `purr data real-errors --skip K`")
    rows = judge_rows(data_folder(args, "raw/bump"), planted, exclude, answers)
    docs = {s: len({r["document"] for r in rows if r["split"] == s}) for s in SPLITS}
    return write_splits(
        args,
        rows,
        lambda r: f"{r['split']}:{'wrong' if r['wrong'] else 'right'}",
        SPLITS,
        documents=docs,
    )


def add_train_parser(tsub: argparse._SubParsersAction, common) -> None:
    p = tsub.add_parser(
        "judge",
        help="train the learned judge's head on both judges' signals (purr data judge-rows)",
    )
    p.add_argument("--rows", required=True, help="the folder of purr data judge-rows")
    p.add_argument("--out", required=True, help="folder for head.json, metrics and signals")
    option(
        p,
        "--precision",
        float,
        0.9,
        "share of applied dev edits that must be right at the operating point (0.9)",
    )
    option(p, "--limit", int, None, "rows per split (a quick look)")
    common(p, index=False)
    p.set_defaults(handler=_cmd_train)


def _read(path: Path, limit: int | None) -> list[dict]:
    if not path.is_file():
        raise ValueError(f"{path} not found; make the rows with `purr data judge-rows --out DIR`")
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return rows[:limit] if limit else rows


def _cmd_train(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from editor.factory import Components
    from editor.pipeline import Pipeline
    from serve.cli.common import config_from
    from training.eval.judge_signals import collect
    from training.fit.judge_head import fit_head, report, write

    if not 0.0 < args.precision <= 1.0:
        raise ValueError(f"--precision must be in (0, 1], got {args.precision}")
    args.overrides = [*args.overrides, "judge.type=union"]
    reviser = Pipeline(Components(config_from(args))).editor
    reviser.judge.cross = True  # the other judge's decision on each edit is one of the signals
    out = Path(args.out)
    found = {}
    for split in ("train", "dev", "test"):
        rows = _read(Path(args.rows) / f"{split}.jsonl", args.limit)
        bar = lambda xs, s=split: tqdm(xs, desc=f"signals ({s})", unit="row")  # noqa: E731
        found[split] = collect(reviser, rows, out / f"signals-{split}.jsonl", bar)
    head, curve, held_out = fit_head(found["train"], found["dev"], args.precision)
    metrics = {
        "rows": {k: len(v) for k, v in found.items()},
        "apply_min": head.apply_min,
        "suggest_min": head.suggest_min,
        "precision": args.precision,
        "held_out": held_out,
        "test": report(found["test"], head),
    }
    rows_cmd = made_by(Path(args.rows), "purr data judge-rows")
    command = f"{rows_cmd} && purr train judge --rows {args.rows} --out {args.out}"
    write(out, head, curve, metrics, command)
    print(json.dumps(metrics, indent=2))
    return 0


def add_reader_head_parser(tsub: argparse._SubParsersAction, common) -> None:
    p = tsub.add_parser(
        "reader-head",
        help="train the judge's decision on the reader's proposals on question rows made "
        "from SQuAD-family passages (right answers and their wrong twins)",
    )
    p.add_argument("--data", default=None, help="the shared data folder (default ../shared/data)")
    p.add_argument("--out", required=True, help="folder for reader.json, metrics and signals")
    option(p, "--paragraphs", positive_int, 1000, "passages a source (at most)")
    p.add_argument(
        "--documents",
        default=None,
        help="a documents set (training/eval/documents.jsonl's shape) to add: its rows of even "
        "number train, of odd number dev",
    )
    p.add_argument(
        "--real",
        default=None,
        help="real answers to add (a file of purr data real-errors, made with --skip so that "
        "no evaluated passage is in it), split by evidence passage",
    )
    option(p, "--precision", float, 0.9, "applied dev edits right at apply_min")
    option(p, "--prove-precision", float, 0.95, "applied dev edits right at prove_min")
    switch(
        p,
        "--verified",
        "the verifier's P(supported) and P(contradicted) before and after each candidate's "
        "edit as signals too (the attribution model of the config)",
    )
    common(p, index=False)
    p.set_defaults(handler=_cmd_reader_head)


def _cmd_reader_head(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from editor.judge.agreement.reader import ReaderAgreement
    from editor.judge.reader_head import NAMES, VERIFIED
    from editor.reader import shared_reader
    from serve.cli.common import config_from
    from training.data.answer_rows import answer_rows, document_rows, real_rows
    from training.fit.reader_head import collect, fit, tally, write

    for name in ("precision", "prove_precision"):
        if not 0.0 < getattr(args, name) <= 1.0:
            raise ValueError(f"--{name.replace('_', '-')} must be in (0, 1]")
    cfg = config_from(args)
    policy = cfg.judge.reader
    reader = shared_reader(policy.model, policy.quantize)
    scores = None
    if args.verified:
        from editor.attribution import build as build_attribution
        from editor.attribution.recalibration import Recalibrated

        verifier = build_attribution(cfg.attribution)
        if isinstance(verifier, Recalibrated):  # as edits are decided: not recalibrated
            verifier = verifier.model
        scores = verifier.score_batch
    agreement = ReaderAgreement(
        None, reader, policy.model_copy(update={"decision": "rules", "answers": "answer"})
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = {"": answer_rows(Path(args.data) if args.data else None, args.paragraphs)}
    if args.documents:
        rows["docs-"] = document_rows(Path(args.documents))
    if args.real:
        rows["real-"] = real_rows(Path(args.real))
    found: dict[str, list] = {}
    for kind, splits in rows.items():
        for split, part in splits.items():
            cache = out / f"reader-signals-{kind}{split}.jsonl"
            if cache.is_file():
                found[kind + split] = [json.loads(x) for x in cache.read_text("utf-8").splitlines()]
                continue
            bar = lambda xs, s=kind + split: tqdm(list(xs), desc=f"reading ({s})", unit="batch")  # noqa: E731
            found[kind + split] = collect(agreement, part, policy.min_text, bar, scores)
            text = "".join(json.dumps(r) + "\n" for r in found[kind + split])
            cache.write_text(text, "utf-8")
    train = [r for k, v in found.items() if k.endswith("train") for r in v]
    dev = [r for k, v in found.items() if k.endswith("dev") for r in v]
    names = NAMES + VERIFIED if args.verified else NAMES
    head, points = fit(train, dev, args.precision, args.prove_precision, names)
    metrics = {
        "command": f"purr train reader-head --out {args.out} --paragraphs {args.paragraphs}"
        + (f" --documents {args.documents}" if args.documents else "")
        + (f" --real {args.real}" if args.real else "")
        + (" --verified" if args.verified else ""),
        "apply_min": head.apply_min,
        "prove_min": head.prove_min,
        "suggest_min": head.suggest_min,
        **{k: tally(v, head) for k, v in found.items()},
    }
    write(out, head, points, metrics)
    print(json.dumps(metrics, indent=2))
    return 0
