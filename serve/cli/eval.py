"""``purr eval edits|attribution|retrieval``: the evaluation harness over a dataset. Each writes
``metrics.json`` and its plots into the ``--out`` folder.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from retrieval.files import GracefulStop, write_text
from serve.cli.common import interrupted
from serve.cli.train import _check_data_dir, _positive_int
from training.evaluate import ORACLE, editor_choices, run_eval
from training.retrieval_eval import RUNS, calibrate_reranker, evaluate, load_beir, load_clapnq, plot


def _add_edits(esub, common) -> None:
    p = esub.add_parser(
        "edits", help="run the pipeline over a dataset: metrics.json, results.jsonl, plots"
    )
    p.add_argument("data", help="JSONL rows {id, text, context?, reference?, evidence?}")
    p.add_argument("--out", required=True)
    p.add_argument(
        "--index",
        default=None,
        help="index for rows without evidence (default: the Wikipedia index)",
    )
    p.add_argument(
        "--editor",
        choices=editor_choices(),
        default=None,
        help="editor alone, or causal+substitute (default: the config's editor); oracle: the "
        "row's reference as the revision",
    )
    p.add_argument("--limit", type=int, default=None)
    p.add_argument(
        "--retry-degraded",
        action="store_true",
        help="redo rows an earlier run of this --out left 'degraded' (a deadline, an upstream down)",
    )
    p.add_argument(
        "--probe",
        choices=["ablation"],
        default=None,
        help="ablation: factual-ablation probe of a fid/causal editor on `purr data make` rows",
    )
    common(p, index=False)
    p.set_defaults(handler=_cmd_eval)


def _cmd_eval(args: argparse.Namespace) -> int:
    from editor.config import dump_config, editor_name, editor_overrides, load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline

    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit must be >= 1, got {args.limit}")
    src = Path(args.data)
    if not src.is_file():
        raise ValueError(f"{src}: no such file")
    overrides = list(args.overrides)
    if args.editor is not None:
        choice = "identity" if args.editor == ORACLE else args.editor
        overrides = [*editor_overrides(choice), *overrides]
    cfg = load_config(args.config, overrides)
    if args.probe == "ablation":
        return _cmd_probe(cfg, src, Path(args.out), args.limit)
    editor = args.editor if args.editor == ORACLE else editor_name(cfg.editor)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "config.yaml", dump_config(cfg))
    pipeline = Pipeline(Components(cfg, index_path=args.index))
    with GracefulStop() as stop:
        metrics = run_eval(
            pipeline, src, out, editor, args.limit, stop=stop, retry_degraded=args.retry_degraded
        )
    shown = {k: v for k, v in metrics.items() if k != "bad_rows"}
    print(json.dumps(shown, indent=2))
    if metrics["bad_rows"]:
        print(f"{len(metrics['bad_rows'])} rows skipped: {metrics['bad_rows'][:3]}")
    return interrupted(stop, metrics["resume"]["written"]) if stop.requested else 0


def _cmd_probe(cfg, src: Path, out: Path, limit: int | None) -> int:
    from editor.revision.editors.base import build as build_editor
    from training.probe import ablation_probe, write_probe
    from training.train_editor import read_rows

    if cfg.editor.type not in {"fid", "causal"}:
        raise ValueError(
            f"--probe ablation scores a trained editor: use --editor fid or causal "
            f"(got {cfg.editor.type})"
        )

    def no_model() -> Any:  # fid and causal editors need neither an attribution model nor an LLM
        raise RuntimeError("not used by trained editors")

    editor = build_editor(cfg.editor, no_model, no_model, cfg.llm)
    rows = read_rows(src)[:limit]
    report = ablation_probe(editor, rows, getattr(editor, "max_evidence", 4))
    write_probe(report, out)
    print(json.dumps({k: v for k, v in report.items() if k != "margins"}, indent=2))
    return 0


def _add_attribution(esub, common) -> None:

    e = esub.add_parser("attribution", help="evaluate an attribution model on the dev splits")
    e.add_argument("--model", required=True, help="trained folder, or an HF NLI model path / id")
    e.add_argument("--out", required=True, help="folder for metrics.json and metrics.png")
    e.add_argument(
        "--data-dir", default=None, help="the shared/data folder (default ../shared/data)"
    )
    e.add_argument(
        "--sources",
        default="shared",
        help="comma-separated NLI sets or aliases (shared, extra, eval-only); the mean is theirs",
    )
    e.add_argument("--limit", type=_positive_int, default=None, help="dev rows per source")
    e.add_argument("--max-length", type=_positive_int, default=256)
    e.add_argument("--windowed", action="store_true", help="score training-style premise windows")
    e.add_argument(
        "--whole-hypothesis",
        action="store_true",
        help="score a multi-sentence hypothesis whole (default: per sentence, all must hold)",
    )
    e.add_argument("--device", default="auto", help="auto (cuda when available), cpu or cuda")
    e.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    e.set_defaults(handler=run_eval_attribution)


def run_eval_attribution(args: argparse.Namespace) -> int:
    from training.eval_attribution import run_eval
    from training.nli_sources import expand

    _check_data_dir(args.data_dir)
    model = Path(args.model).expanduser()
    if not args.model.startswith("packaged:") and not model.exists() and "/" not in args.model:
        raise ValueError(f"--model {args.model} is neither a folder nor a hub id (org/name)")
    report = run_eval(
        args.model,
        args.out,
        data_dir=args.data_dir,
        sources=expand([s.strip() for s in args.sources.split(",") if s.strip()]),
        limit=args.limit,
        max_length=args.max_length,
        windowed=args.windowed,
        per_sentence=not args.whole_hypothesis,
        device=args.device,
    )
    json.dump(
        {"out": args.out, "rows": report["rows"], "metrics": report["metrics"]},
        sys.stdout,
        indent=2,
        default=float,
    )
    sys.stdout.write("\n")
    return 0


def _add_retrieval(esub, common) -> None:
    p = esub.add_parser(
        "retrieval", help="nDCG@10 / recall@k of an index on BEIR-style or CLAPnq queries"
    )
    p.add_argument(
        "--index", required=True, help="index directory built from the evaluation corpus"
    )
    p.add_argument("--queries", help="BEIR queries.jsonl")
    p.add_argument("--qrels", help="BEIR qrels TSV")
    p.add_argument("--clapnq", help="CLAPnq corpus JSONL (questions are read from it)")
    p.add_argument(
        "--runs", default=",".join(RUNS), help=f"comma-separated subset of {','.join(RUNS)}"
    )
    p.add_argument("--rerank-depth", type=int, default=30, help="passages reranked per query")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument(
        "--calibrate",
        action="store_true",
        help="instead of evaluating, fit the reranker's Platt calibration on these queries "
        "(use a train split) and print the rerank.calibration_* settings",
    )
    p.add_argument("--out", required=True, help="folder for metrics.json and the plot")
    common(p, index=False)
    p.set_defaults(handler=run_eval_retrieval)


def run_eval_retrieval(args: argparse.Namespace) -> int:
    from editor.config import load_config
    from retrieval.backends import open_index

    cfg = load_config(args.config, args.overrides)
    if args.clapnq:
        queries = load_clapnq(args.clapnq)
    elif args.queries and args.qrels:
        queries = load_beir(args.queries, args.qrels)
    else:
        raise ValueError("pass --queries and --qrels (BEIR format) or --clapnq CORPUS.jsonl")
    queries = queries[: args.limit] if args.limit else queries
    if not queries:
        raise ValueError(
            "no query with relevance judgements was read; --clapnq needs rows with a 'question', "
            "--queries/--qrels BEIR files whose query ids match"
        )
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    bad = [r for r in runs if r not in RUNS]
    if bad:
        raise ValueError(f"unknown run(s) {bad}; choose from {', '.join(RUNS)}")
    index = open_index(args.index)
    if args.calibrate:
        result = calibrate_reranker(index, queries, cfg, Path(args.out), args.rerank_depth)
        print(json.dumps(result, indent=2))
        print(
            f"use: --set rerank.calibration_scale={result['scale']} "
            f"--set rerank.calibration_bias={result['bias']}"
        )
        return 0
    report = evaluate(index, queries, runs, cfg.rerank, rerank_depth=args.rerank_depth)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text(
        out / "metrics.json",
        json.dumps(
            {"index": str(args.index), "runs": report, "config": cfg.model_dump(mode="json")},
            indent=2,
        ),
    )
    plot(report, out / "retrieval.png")
    width = max(len(r) for r in report)
    cols = ["ndcg@10", "recall@1", "recall@5", "recall@100", "ms_per_query"]
    print(f"{'run':<{width}}  " + "  ".join(f"{c:>12}" for c in cols))
    for run, m in report.items():
        print(f"{run:<{width}}  " + "  ".join(f"{m[c]:>12}" for c in cols))
    return 0


def _add_slots(esub, common) -> None:
    p = esub.add_parser(
        "slots", help="slot-level contradiction checks on a planted dev set: recall by error type"
    )
    p.add_argument("data", help="JSONL rows of `purr data planted`")
    p.add_argument(
        "--results",
        default=None,
        help="results.jsonl of a `purr eval edits` run: check against the evidence it retrieved "
        "(default: each row's source article)",
    )
    p.add_argument("--out", required=True, help="folder for metrics.json and slots.png")
    p.add_argument(
        "--verifier",
        action="store_true",
        help="judge with the configured verifier (attribution model; the fused one by default) "
        "instead of the slot checks alone",
    )
    p.add_argument("--config", default="default", help="preset or YAML (with --verifier)")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p.set_defaults(handler=_cmd_slots)


def _cmd_slots(args: argparse.Namespace) -> int:
    from training.slot_eval import evaluate_slots, plot, retrieved_evidence, source_evidence

    src = Path(args.data)
    if not src.is_file():
        raise ValueError(f"{src}: no such file; make one with `purr data planted --out FILE`")
    rows = [json.loads(line) for line in src.read_text("utf-8").splitlines() if line.strip()]
    if args.results:
        evidence = retrieved_evidence(Path(args.results))
    else:
        evidence = source_evidence(rows)
    checker = None
    if args.verifier:
        from editor.attribution.base import build
        from editor.config import load_config
        from training.slot_eval import VerifierCheck

        checker = VerifierCheck(build(load_config(args.config, args.overrides).attribution))
    report = evaluate_slots(rows, evidence, checker)
    report["checker"] = "verifier" if args.verifier else "slot checks"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "metrics.json", json.dumps(report, indent=2, ensure_ascii=False))
    plot(report, out / "slots.png")
    shown = {k: v for k, v in report.items() if k not in {"missed", "false_contradictions"}}
    print(json.dumps(shown, indent=2))
    return 0


def _add_citations(esub, common) -> None:
    p = esub.add_parser(
        "citations",
        help="check and repair on cited answers with known faults (rows of `purr data cited`)",
    )
    p.add_argument("data", help="JSONL rows of `purr data cited`")
    p.add_argument("--out", required=True, help="folder for results.jsonl, metrics.json, plot")
    p.add_argument("--limit", type=int, default=None, help="first N rows only")
    p.add_argument(
        "--via",
        choices=("sources", "evidence"),
        default="sources",
        help="sources: check and repair (default); evidence: plain `purr edit --evidence` with "
        "the sources as evidence (unchanged share, markers kept)",
    )
    common(p)
    p.set_defaults(handler=_cmd_citations)


def _cmd_citations(args: argparse.Namespace) -> int:
    from editor.citations.check import CitationChecker
    from editor.citations.repair import CitationRepairer
    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline
    from retrieval.files import GracefulStop
    from serve.cli.common import interrupted
    from training.cited_eval import run

    rows = _read_rows(
        Path(args.data), ("id", "text", "sources", "fault", "truth"), "purr data cited"
    )
    rows = rows[: args.limit] if args.limit else rows
    pipeline = Pipeline(Components(load_config(args.config, list(args.overrides))))
    pipeline.prepare(research=False)
    if args.via == "evidence":
        from training.cited_eval import run_evidence

        with GracefulStop() as stop:
            metrics = run_evidence(pipeline, rows, Path(args.out), stop=stop)
        print(json.dumps(metrics, indent=2))
        return interrupted(stop, metrics["done"]) if metrics.get("interrupted") else 0
    cfg = pipeline.cfg
    repairer = CitationRepairer(
        CitationChecker(pipeline.attribution, cfg.attribution.threshold), pipeline.editor
    )
    with GracefulStop() as stop:
        metrics = run(repairer, rows, Path(args.out), stop=stop)
    print(json.dumps(metrics, indent=2))
    return interrupted(stop, metrics["done"]) if metrics.get("interrupted") else 0


def _add_nuggets(esub, common) -> None:
    p = esub.add_parser(
        "nuggets",
        help="score cited reports against nuggets (ARGUE): nugget recall, sentence precision",
    )
    p.add_argument(
        "data", help="JSONL rows {id, text, sources?, nuggets: [{question, answers, ...}]}"
    )
    p.add_argument("--out", required=True, help="folder for results.jsonl, metrics.json, plot")
    p.add_argument("--group", default=None, help="a row field to score by as well (e.g. fault)")
    p.add_argument("--limit", type=int, default=None, help="first N rows only")
    common(p)
    p.set_defaults(handler=_cmd_nuggets)


def _cmd_nuggets(args: argparse.Namespace) -> int:
    from editor.citations.check import CitationChecker
    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline
    from retrieval.files import GracefulStop
    from serve.cli.common import interrupted
    from training.nuggets import run

    rows = _read_rows(Path(args.data), ("id", "text", "nuggets"), "purr eval nuggets")
    for n, row in enumerate(rows, 1):
        nuggets = row["nuggets"]
        if not isinstance(nuggets, list) or not all(
            isinstance(x, dict) and isinstance(x.get("question"), str) for x in nuggets
        ):
            raise ValueError(
                f"{args.data}: row {n}: 'nuggets' must be a list of {{question, answers}} objects"
            )
    rows = rows[: args.limit] if args.limit else rows
    pipeline = Pipeline(Components(load_config(args.config, list(args.overrides))))
    pipeline.prepare(research=False)
    checker = CitationChecker(pipeline.attribution, pipeline.cfg.attribution.threshold)
    with GracefulStop() as stop:
        metrics = run(checker, rows, Path(args.out), args.group, stop=stop)
    print(json.dumps(metrics, indent=2))
    return interrupted(stop, metrics["done"]) if metrics.get("interrupted") else 0


def _read_rows(src: Path, required: tuple[str, ...], what: str) -> list[dict]:
    if not src.is_file():
        raise ValueError(f"{src}: no such file")
    rows = []
    for n, line in enumerate(src.read_text("utf-8").splitlines(), 1):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{src}:{n}: invalid JSON ({e.msg})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{src}:{n}: expected a JSON object")
            missing = [k for k in required if k not in row]
            if missing:
                raise ValueError(f"{src}:{n}: missing {missing}; see `{what} --help`")
            rows.append(row)
    if not rows:
        raise ValueError(f"{src}: no rows")
    return rows


def _add_factuality(esub, common) -> None:
    p = esub.add_parser(
        "factuality",
        help="MAFE (QA-based factuality) and the verifier against human labels (QAGS, "
        "SummEdits dev)",
    )
    p.add_argument("--out", required=True, help="folder for results.jsonl, metrics.json, plot")
    p.add_argument("--sets", default="qags,summedits", help="labelled sets (default both)")
    p.add_argument("--limit", type=int, default=300, help="dev rows per set (default 300)")
    p.add_argument("--data", default=None, help="the data folder (default ../shared/data)")
    common(p)
    p.set_defaults(handler=_cmd_factuality)


def _cmd_factuality(args: argparse.Namespace) -> int:
    from editor.attribution.base import build
    from editor.config import load_config
    from retrieval.files import GracefulStop
    from serve.cli.common import interrupted
    from training.eval_attribution import load_dev_sets
    from training.factuality_eval import run

    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit must be >= 1, got {args.limit}")
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    sets = load_dev_sets(args.data, names, limit=args.limit)
    if not any(sets.values()):
        raise ValueError(f"no dev rows in {names}; check --data and --sets")
    cfg = load_config(args.config, list(args.overrides))
    model = build(cfg.attribution)
    model.load()
    with GracefulStop() as stop:
        metrics = run(model, sets, Path(args.out), cfg.attribution.threshold, stop=stop)
    print(json.dumps(metrics, indent=2))
    return interrupted(stop, metrics["done"]) if metrics.get("interrupted") else 0


def _add_extraction(esub, common) -> None:
    p = esub.add_parser(
        "extraction",
        help="main-text extraction of saved web pages against a hand check: article kept, "
        "boilerplate dropped",
    )
    p.add_argument("--out", required=True, help="folder for results.jsonl, metrics.json, plot")
    p.add_argument(
        "--pages",
        default=None,
        help="folder of saved .html pages (default ../shared/data/web/pages)",
    )
    p.add_argument(
        "--check",
        default=None,
        help="hand check JSON (default retrieval/web/extraction_check.json)",
    )
    p.add_argument("--methods", default=None, help="comma-separated subset of the methods")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per page (median)")
    common(p)
    p.set_defaults(handler=_cmd_extraction)


def _cmd_extraction(args: argparse.Namespace) -> int:
    from training.extraction_eval import CHECK, METHODS, run
    from training.nli_data import default_data_dir

    if args.repeats < 1:
        raise ValueError(f"--repeats must be >= 1, got {args.repeats}")
    pages = Path(args.pages) if args.pages else default_data_dir() / "web" / "pages"
    methods = tuple(m.strip() for m in args.methods.split(",")) if args.methods else METHODS
    check = Path(args.check) if args.check else CHECK
    if not check.is_file():
        raise ValueError(f"{check}: no such hand-check file")
    metrics = run(pages, Path(args.out), check, methods, args.repeats)
    print(json.dumps(metrics, indent=2))
    return 0


def register(sub, common) -> None:
    """``purr eval`` and its evaluations."""
    ev = sub.add_parser(
        "eval",
        help="evaluations: edits, attribution, retrieval, slots, citations, nuggets, "
        "factuality, extraction",
    )
    esub = ev.add_subparsers(dest="eval_command", required=True)
    _add_edits(esub, common)
    _add_attribution(esub, common)
    _add_retrieval(esub, common)
    _add_slots(esub, common)
    _add_citations(esub, common)
    _add_nuggets(esub, common)
    _add_factuality(esub, common)
    _add_extraction(esub, common)
