"""The ``purr`` command line."""

from __future__ import annotations

import argparse
import gc
import json
import logging
import sys
import time
from pathlib import Path

from editor.config import ConfigError, PipelineConfig, dump_config, load_config
from retrieval.assets import AssetNotFoundError
from retrieval.corpus import CorpusError
from retrieval.index import IndexNotFoundError

log = logging.getLogger("purr")
USER_ERRORS = (
    ConfigError,
    CorpusError,
    IndexNotFoundError,
    AssetNotFoundError,
    FileExistsError,
    FileNotFoundError,
    ValueError,
)
MAX_QUERY_CHARS = 10_000


def _common(p: argparse.ArgumentParser, index: bool = True) -> None:
    p.add_argument(
        "--config", default="default", help="preset name (configs/NAME.yaml) or a YAML path"
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field, e.g. --set search.mode=bm25 (repeatable)",
    )
    if index:
        p.add_argument(
            "--index",
            default=None,
            help="index directory (default: the packaged Wikipedia index, built on first use)",
        )
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="purr", description="Research and revise LLM outputs against evidence."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="build (or extend) an index from corpus files")
    p.add_argument(
        "corpus",
        nargs="+",
        help="JSONL files {id,title,text,url?}, .txt/.md/.html files or folders, or packaged:wiki-summaries",
    )
    p.add_argument("--out", required=True, help="index directory to write")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--append", action="store_true", help="add documents to an existing index")
    g.add_argument("--overwrite", action="store_true", help="replace an existing index")
    p.add_argument(
        "--no-dense",
        action="store_true",
        help="BM25 only (fast to build; no dense or hybrid search)",
    )
    _common(p, index=False)

    p = sub.add_parser("search", help="search an index")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=5, help="results to show")
    p.add_argument("--mode", choices=["bm25", "dense", "hybrid"], default=None)
    p.add_argument("--no-rerank", action="store_true", help="first-stage ranking only")
    p.add_argument("--json", action="store_true")
    _common(p)

    p = sub.add_parser("research", help="generate questions about a passage and gather evidence")
    p.add_argument("text")
    p.add_argument("--context", default=None, help="the dialogue the passage answers")
    p.add_argument(
        "--querygen",
        choices=["sentence", "entity", "llm", "passage"],
        default=None,
        help="query generator (overrides querygen.type)",
    )
    p.add_argument("--json", action="store_true")
    _common(p)

    p = sub.add_parser("config", help="print the resolved configuration")
    _common(p, index=False)

    from editor.bench import add_bench_parser as add_research_bench
    from retrieval.bench import add_bench_parser as add_retrieval_bench
    from training.cli_train import add_train_parser
    from training.evaluate import add_eval_parser
    from training.retrieval_eval import add_eval_retrieval_parser
    from training.scoring import add_score_parser

    bench = sub.add_parser("bench", help="benchmarks (speed and memory)")
    bsub = bench.add_subparsers(dest="bench", required=True)
    add_retrieval_bench(bsub)
    add_research_bench(bsub)
    from editor.bench_models import add_bench_parser as add_model_bench

    add_model_bench(bsub)
    from serve.bench_serve import add_bench_serve_parser

    add_bench_serve_parser(bsub)
    from serve.bench_cold import add_bench_cold_parser

    add_bench_cold_parser(bsub)
    from retrieval.bench_batch import add_bench_batch_parser

    add_bench_batch_parser(bsub)
    add_eval_parser(sub)
    add_train_parser(sub)
    add_eval_retrieval_parser(sub)
    add_score_parser(sub)
    from serve.edit_cli import add_edit_parser
    from training.planted import add_data_parser

    add_edit_parser(sub, _common)
    add_data_parser(sub)
    from serve.serve_cli import add_serve_parsers

    add_serve_parsers(sub, _common)
    return parser


def _config(args: argparse.Namespace) -> PipelineConfig:
    overrides = list(args.overrides)
    if getattr(args, "mode", None):
        overrides.append(f"search.mode={args.mode}")
    if getattr(args, "no_rerank", False):
        overrides.append("rerank.enabled=false")
    if getattr(args, "querygen", None):
        overrides.append(f"querygen.type={args.querygen}")
    if getattr(args, "no_dense", False):
        overrides.append("index.dense_enabled=false")
    return load_config(args.config, overrides)


def cmd_index(args: argparse.Namespace) -> int:
    from retrieval.corpus import read_corpus
    from retrieval.index import Index

    cfg = _config(args)
    out = Path(args.out)
    t = time.perf_counter()
    if args.append:
        index = Index.open(out)
        added = index.append(read_corpus(args.corpus))
        print(
            f"appended {added} passages to {out} ({len(index)} in total) in {time.perf_counter() - t:.1f} s"
        )
        return 0
    index = Index.build(
        read_corpus(args.corpus),
        out,
        cfg.index,
        overwrite=args.overwrite,
        extra_config=cfg.model_dump(mode="json"),
    )
    stats = index.stats()
    print(
        f"indexed {stats['documents']} documents as {stats['passages']} passages into {out} in {time.perf_counter() - t:.1f} s"
    )
    return 0


def _check_query(text: str, what: str = "query") -> str:
    if not text.strip():
        raise ValueError(
            f'the {what} is empty; pass some text, e.g. purr search "who built the Eiffel Tower"'
        )
    if len(text) > MAX_QUERY_CHARS:
        log.warning(
            "%s is %d characters; only the first %d are used", what, len(text), MAX_QUERY_CHARS
        )
        return text[:MAX_QUERY_CHARS]
    return text


def cmd_search(args: argparse.Namespace) -> int:
    from editor.factory import Components
    from serve.render import hit_json

    if args.k < 1:
        raise ValueError(f"-k must be >= 1, got {args.k}")
    query = _check_query(args.query)
    cfg = _config(args)
    comp = Components(cfg, index_path=args.index)
    index = comp.index  # open (or, on first use, build) the index before timing
    t = time.perf_counter()
    depth = max(args.k, cfg.rerank.depth) if comp.reranker is not None else args.k
    hits = index.search(query, depth, cfg.search)
    if comp.reranker is not None:
        hits = comp.reranker.rerank(query, hits, top_k=args.k)
    hits = hits[: args.k]
    elapsed = (time.perf_counter() - t) * 1000
    if args.json:
        print(
            json.dumps(
                {
                    "query": query,
                    "mode": cfg.search.mode,
                    "reranked": comp.reranker is not None,
                    "ms": round(elapsed, 1),
                    "hits": [hit_json(h) for h in hits],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    from rich.console import Console

    console = Console()
    how = cfg.search.mode + (" + rerank" if comp.reranker else "")
    console.print(
        f"[bold]{len(hits)}[/] results for [italic]{query!r}[/] ({how}, {elapsed:.0f} ms)"
    )
    for h in hits:
        rel = f" relevance {h.relevance:.2f}" if h.relevance is not None else ""
        console.print(
            f"\n[bold cyan]{h.rank + 1}. {h.snippet.title}[/] [dim]{h.snippet.id} score {h.score:.3f}{rel}[/]"
        )
        console.print(h.snippet.text, highlight=False)
    return 0


def cmd_research(args: argparse.Namespace) -> int:
    from editor.factory import Components
    from serve.render import research_json

    text = _check_query(args.text, "text")
    cfg = _config(args)
    comp = Components(cfg, index_path=args.index)
    researcher = comp.researcher  # opens (or, on first use, builds) the index
    t = time.perf_counter()
    run = researcher.run([text], [args.context])
    total = (time.perf_counter() - t) * 1000
    results, tm = run.results[0], run.timings
    timings = {
        "querygen": tm.querygen_ms,
        "retrieval": tm.retrieval_ms,
        "rerank": tm.rerank_ms,
        "total": total,
    }
    payload = research_json(text, args.context, results, timings)
    if args.json:
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return 0
    from rich.console import Console

    console = Console()
    console.print(f"[bold]{len(results)} queries[/] ({cfg.querygen.type}), {total:.0f} ms")
    for qe in results:
        console.print(f"\n[bold]? {qe.query.text}[/]")
        for ev in qe.evidence:
            console.print(f"  [cyan]{ev.title}[/] [dim]({ev.id}, relevance {ev.relevance:.2f})[/]")
            console.print(f"  {ev.text}", highlight=False)
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    print(dump_config(_config(args)), end="")
    return 0


COMMANDS = {
    "index": cmd_index,
    "search": cmd_search,
    "research": cmd_research,
    "config": cmd_config,
}


def _limit_threads() -> None:
    """Apply ``PURR_THREADS`` to torch (ONNX Runtime reads it per session)."""
    from retrieval.settings import Settings

    threads = Settings().threads
    if threads:
        import torch

        torch.set_num_threads(threads)
        torch.set_num_interop_threads(threads)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.DEBUG if getattr(args, "verbose", False) else logging.WARNING
    stream = logging.StreamHandler()
    stream.setLevel(level)  # some libraries force their own loggers to DEBUG on import
    logging.basicConfig(
        level=level, format="%(levelname)s %(name)s: %(message)s", handlers=[stream]
    )
    handler = COMMANDS.get(args.command) or getattr(args, "handler", None)
    if handler is None:
        parser.error(f"no handler for '{args.command}'")
    try:
        _limit_threads()
        return handler(args)
    except USER_ERRORS as e:
        print(f"purr {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        # The process ends next: move every object out of the collector's reach, so that
        # interpreter shutdown does not walk the model graphs (about 0.9 s after an edit).
        gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
