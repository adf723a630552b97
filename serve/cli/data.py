"""``purr data planted|make|querygen``: datasets (the planted dev set, PURR training data, query
generator distillation data).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from retrieval.files import GracefulStop, write_text
from serve.cli.common import add_ray_args, interrupted, ray_job
from serve.cli.data_real import (
    add_fava_parser,
    add_multi_answers_parser,
    add_real_claims_parser,
    add_real_errors_parser,
)
from serve.cli.data_spans import add_spans_parser
from serve.cli.judge import add_rows_parser
from training.args import option, switch
from training.data import rerank_pairs
from training.data.planted import ALL_ERROR_TYPES, ERROR_TYPES, make_planted


def add_make_parser(dsub: argparse._SubParsersAction) -> None:
    p = dsub.add_parser("make", help="PURR training data: seeds -> evidence -> clean/corrupted")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--seeds", default=None, help="queries: .txt lines, .jsonl/.json 'question's")
    src.add_argument(
        "--corpus",
        default=None,
        help="trusted documents whose sentences are seeds (JSONL/files, or packaged:wiki-summaries)",
    )
    src.add_argument(
        "--from",
        dest="from_rows",
        default=None,
        help="rows of an earlier purr data make: corrupt their clean statements again (e.g. with "
        "--corruptor llm) reusing their evidence, with no research",
    )
    p.add_argument("--index", default=None, help="index to research (default: the Wikipedia one)")
    p.add_argument("--out", required=True, help="JSONL to write (appended to when resuming)")
    p.add_argument("--corruptor", choices=["rules", "llm"], default="rules")
    p.add_argument(
        "--llm",
        default=None,
        help="the LLM of --corruptor/--summarizer llm (sets llm.model: packaged:NAME, a path, a "
        "hub id, or the served model's name with --set llm.backend=openai)",
    )
    option(
        p,
        "--batch-size",
        int,
        8,
        "seeds per corruptor call and attribution batch (16-64 with an LLM corruptor)",
    )
    p.add_argument(
        "--summarizer",
        choices=["source", "llm"],
        default="source",
        help="clean statement: a source sentence, or an LLM summary of E+ (query seeds)",
    )
    option(p, "--n", int, 1000, "rows to make")
    p.add_argument("--seed", type=int, default=0)
    option(
        p, "--variants", int, 2, "corruptions per seed (distinct rows sharing one research call)"
    )
    option(p, "--per-doc", int, 2, "seed sentences per document (--corpus)")
    p.add_argument(
        "--shard",
        default=None,
        help="I/N: only every N-th seed from the I-th, to run N processes on a many-core machine "
        "(each with its own --out; concatenate the files)",
    )
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        help="rows of an earlier run (repeatable): their seeds, written or skipped, are not "
        "redone, e.g. to extend a data set with --per-doc 3 without repeating seeds",
    )
    option(p, "--relevance", float, 0.5, "E+ threshold (cross-encoder)")
    p.add_argument("--max-supported", type=float, default=0.5)
    p.add_argument("--max-edit-chars", type=int, default=80)
    switch(
        p,
        "--include-dev",
        "also use articles of the dev split (held out by default: the planted dev set)",
    )
    p.add_argument("--config", default="default")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    add_ray_args(p)
    p.set_defaults(handler=_cmd_make)


_MAKER_OPTIONS = (
    "corruptor", "summarizer", "relevance", "max_supported", "max_edit_chars", "include_dev",
    "index",
)  # fmt: skip


def build_maker(options: dict[str, Any], cfg_json: dict[str, Any], progress: bool = False):
    """The ``EditorDataMaker`` of ``purr data make``'s options, in this process or a Ray actor
    (``progress``: show the first-use index build's progress)."""
    from editor.attribution.base import build as build_attribution
    from editor.config import PipelineConfig
    from editor.factory import Components
    from editor.text.nlp import get_nlp
    from retrieval.corpus import read_wiki_summaries
    from training.data.corrupt import LLMCorruptor, LLMSummarizer, RuleCorruptor
    from training.data.editor_data import EditorDataMaker
    from training.data.planted import entity_pool

    cfg = PipelineConfig.model_validate(cfg_json)
    comp = Components(cfg, index_path=options["index"], progress=progress)
    nlp = get_nlp()
    corruptor: LLMCorruptor | RuleCorruptor = (
        LLMCorruptor(comp.llm, nlp=nlp)
        if options["corruptor"] == "llm"
        else RuleCorruptor(
            nlp, entity_pool(list(read_wiki_summaries()), nlp, cache_dir=comp.settings.cache_dir)
        )
    )
    summarizer = LLMSummarizer(comp.llm) if options["summarizer"] == "llm" else None
    return EditorDataMaker(
        comp.researcher,
        build_attribution(cfg.attribution, comp.settings),
        corruptor,
        summarizer,
        relevance=options["relevance"],
        max_supported=options["max_supported"],
        max_edit_chars=options["max_edit_chars"],
        held_out=held_out_docs(options, cfg.research.source),
    )


def held_out_docs(options: dict[str, Any], source: str) -> Callable[[str], bool] | None:
    """Which documents' snippets never enter a row: the dev split's articles of the embedded
    corpus (the planted dev set), from any seed source; none with ``--include-dev`` or an index
    of the user's own. Web pages are not the corpus's articles, so none of them is held out.

    >>> held = held_out_docs({"include_dev": False, "index": None}, "both")
    >>> held("web-579f2a2ceeee"), held_out_docs({"include_dev": True, "index": None}, "index")
    (False, None)
    """
    from retrieval.web.extract import PAGE_PREFIX
    from training.data.nli import is_dev

    if options["include_dev"] or options["index"] or source == "web":
        return None
    return lambda doc_id: not doc_id.startswith(PAGE_PREFIX) and is_dev(f"wiki-synthetic:{doc_id}")


def make_rows_worker(options: dict[str, Any], cfg_json: dict[str, Any], seed: int, variants: int):
    """A Ray worker of ``purr data make --ray``: one maker, built once, making seed batches."""
    from training.data.editor_data import batch_outcomes

    maker = build_maker(options, cfg_json)
    return lambda batch: batch_outcomes(maker, batch, seed, variants)


def _cmd_make(args: argparse.Namespace) -> int:
    from functools import partial

    from editor.config import load_config
    from editor.factory import Components, first_use_work
    from retrieval.corpus import DEFAULT_CORPUS, read_corpus
    from training.data.editor_data import make_file
    from training.data.nli import is_dev
    from training.data.seeds import corpus_seeds, parse_shard, read_seeds, row_seeds, shard

    for flag in ("n", "variants", "per_doc", "batch_size"):
        if getattr(args, flag) < 1:
            raise ValueError(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    if args.shard:
        parse_shard(args.shard)  # a bad spec fails before any model loads
    job = ray_job(args)
    if job is not None and args.shard:
        raise ValueError("--ray spreads the seeds over its workers itself; drop --shard")
    overrides = list(args.overrides) + ([f"llm.model={args.llm}"] if args.llm else [])
    cfg = load_config(args.config, overrides)
    if args.from_rows:
        seed_iter = iter(row_seeds(Path(args.from_rows)))
    elif args.seeds:
        seeds = read_seeds(Path(args.seeds))
        random.Random(args.seed).shuffle(seeds)
        seed_iter = iter(seeds)
    else:
        docs = list(read_corpus([args.corpus]))
        if not args.include_dev and args.corpus == DEFAULT_CORPUS:
            docs = [d for d in docs if not is_dev(f"wiki-synthetic:{d.id}")]
        random.Random(args.seed).shuffle(docs)
        seed_iter = corpus_seeds(docs, per_doc=args.per_doc, seed=args.seed)
    if args.shard:
        seed_iter = shard(seed_iter, *parse_shard(args.shard))
    options = {name: getattr(args, name) for name in _MAKER_OPTIONS}
    cfg_json = cfg.model_dump(mode="json")
    from training.jobs.ray_pool import ray_map, session

    run_batches, maker = None, None
    if job is None:
        maker = build_maker(options, cfg_json, progress=True)
    with session(job), GracefulStop() as stop:
        if job is not None:
            comp = Components(cfg, index_path=args.index)
            for item in first_use_work(comp):
                item.run()  # the default index and model conversions once, not once per actor
            if cfg.research.source != "web" and not args.from_rows:
                _ = comp.index  # a bad --index fails here, not in every actor
            make = partial(make_rows_worker, options, cfg_json, args.seed, args.variants)
            run_batches = partial(ray_map, job, make, stop_requested=lambda: stop.requested)
        report = make_file(
            maker,
            seed_iter,
            Path(args.out),
            args.n,
            args.seed,
            variants=args.variants,
            batch_size=args.batch_size,
            exclude=[Path(x) for x in args.exclude],
            stop=stop,
            run_batches=run_batches,
        )
    print(json.dumps({"out": args.out, **report}, indent=2))
    return interrupted(stop, report["new_rows"]) if stop.requested else 0


def add_querygen_parser(dsub: argparse._SubParsersAction) -> None:
    p = dsub.add_parser(
        "querygen", help="the prompted query generator's questions, to distil (purr train querygen)"
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--passages", default=None, help="JSONL {id?, text, context?} or .txt lines")
    src.add_argument("--corpus", default=None, help="documents whose first sentences are passages")
    p.add_argument("--out", required=True, help="JSONL to write (appended to when resuming)")
    option(p, "--n", int, 500, "rows to make")
    option(p, "--sentences", int, 3, "sentences per corpus passage")
    option(p, "--batch-size", int, 4, "passages per teacher call")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--config", default="default")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.set_defaults(handler=_cmd_querygen)


def _cmd_querygen(args: argparse.Namespace) -> int:
    from editor.config import load_config
    from editor.factory import Components
    from editor.research.querygen.llm import LLMQueryGenerator
    from retrieval.corpus import DEFAULT_CORPUS, read_corpus
    from training.data.nli import is_dev
    from training.fit.querygen import corpus_passages, make_teacher_file, read_passages

    if args.sentences < 1:
        raise ValueError(f"--sentences must be >= 1, got {args.sentences}")
    cfg = load_config(args.config, list(args.overrides))
    comp = Components(cfg)
    if args.passages:
        passages = read_passages(Path(args.passages))
    else:
        docs = list(read_corpus([args.corpus]))
        if args.corpus == DEFAULT_CORPUS:  # the planted dev set's articles stay unseen
            docs = [d for d in docs if not is_dev(f"wiki-synthetic:{d.id}")]
        random.Random(args.seed).shuffle(docs)
        passages = list(corpus_passages(docs, args.sentences))
    q = cfg.querygen
    teacher = LLMQueryGenerator(
        comp.llm, samples=q.samples, max_queries=q.max_queries, prompt=q.prompt
    )
    with GracefulStop() as stop:
        report = make_teacher_file(
            teacher, passages, Path(args.out), args.n, args.batch_size, stop=stop
        )
    print(json.dumps({"out": args.out, **report}, indent=2))
    return interrupted(stop, report["new_rows"]) if stop.requested else 0


def register(sub, common) -> None:
    """``purr data planted|make|querygen``."""
    data = sub.add_parser("data", help="make datasets (dev sets, training data)")
    dsub = data.add_subparsers(dest="data_command", required=True)
    p = dsub.add_parser("planted", help="dev set: Wikipedia passages with one planted error")
    p.add_argument("--out", required=True, help="JSONL file to write")
    option(p, "--n", int, 200, "rows (default 200)")
    p.add_argument("--seed", type=int, default=0)
    option(p, "--error-share", float, 0.5, "share of rows with an error")
    option(p, "--sentences", int, 3, "sentences per passage")
    option(p, "--pool-size", int, 1500, "documents that supply replacement names")
    p.add_argument(
        "--types",
        default=",".join(ERROR_TYPES),
        help=f"comma-separated error types to rotate, of {','.join(ALL_ERROR_TYPES)}",
    )
    p.set_defaults(handler=_cmd_planted)
    p = dsub.add_parser(
        "cited",
        help="dev set: cited answers with known faults (CLAPnq answers citing their passage, "
        "WiCE claims citing their article)",
    )
    p.add_argument("--out", required=True, help="JSONL file to write")
    option(p, "--n", int, 200, "CLAPnq rows (default 200)")
    option(p, "--wice", int, 60, "WiCE rows (default 60; 0 for none)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--data", default=None, help="the data folder that holds raw/ (default ../shared/data)"
    )
    p.add_argument(
        "--faults",
        default="correct,wrong_source,missing_citation,contradicted,unsupported",
        help="comma-separated kinds of rows to make (rotated; default all)",
    )
    p.set_defaults(handler=_cmd_cited)
    add_make_parser(dsub)
    add_querygen_parser(dsub)
    add_real_errors_parser(dsub)
    add_real_claims_parser(dsub)
    add_fava_parser(dsub)
    add_multi_answers_parser(dsub)
    add_spans_parser(dsub)
    add_rows_parser(dsub)
    rerank_pairs.add_parser(dsub)


def _cmd_cited(args) -> int:
    from collections import Counter

    from training.data.cited import DATA, make_cited

    if args.n < 0 or args.wice < 0 or args.n + args.wice < 1:
        raise ValueError("--n and --wice must be >= 0 and not both 0")
    faults = tuple(f.strip() for f in args.faults.split(",") if f.strip())
    rows = make_cited(
        args.n, args.seed, args.wice, Path(args.data) if args.data else DATA, faults=faults
    )
    out = Path(args.out)
    write_text(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    kinds = Counter(f"{r['dataset']}:{r['fault']}" for r in rows)
    print(json.dumps({"out": str(out), "rows": len(rows), "faults": kinds}, indent=2))
    return 0


def _cmd_planted(args) -> int:
    from retrieval.corpus import read_wiki_summaries

    if args.n < 1:
        raise ValueError(f"--n must be >= 1, got {args.n}")
    if not 0 <= args.error_share <= 1:
        raise ValueError(f"--error-share must be within [0, 1], got {args.error_share}")
    if args.sentences < 1:
        raise ValueError(f"--sentences must be >= 1, got {args.sentences}")
    if args.pool_size < 1:
        raise ValueError(f"--pool-size must be >= 1, got {args.pool_size}")
    rows = make_planted(
        read_wiki_summaries(),
        args.n,
        args.seed,
        args.error_share,
        args.sentences,
        pool_size=args.pool_size,
        types=tuple(t.strip() for t in args.types.split(",") if t.strip()),
    )
    out = Path(args.out)  # made in memory, written in one step: whole or not at all
    write_text(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    kinds = {k: sum(r["error_type"] == k for r in rows) for k in ERROR_TYPES}
    print(json.dumps({"out": str(out), "rows": len(rows), "with_error": kinds}, indent=2))
    return 0
