"""``purr index`` and ``purr search``."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from serve.cli.common import check_query, config_from


def cmd_index(args: argparse.Namespace) -> int:
    from retrieval.corpus import read_corpus
    from retrieval.index import Index

    cfg = config_from(args)
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


def cmd_search(args: argparse.Namespace) -> int:
    from editor.factory import Components
    from serve.render import hit_json

    if args.k < 1:
        raise ValueError(f"-k must be >= 1, got {args.k}")
    query = check_query(args.query)
    cfg = config_from(args)
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


def register(sub, common) -> None:
    """``purr index`` and ``purr search``."""
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
    common(p, index=False)
    p.set_defaults(handler=cmd_index)

    p = sub.add_parser("search", help="search an index")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=5, help="results to show")
    p.add_argument("--mode", choices=["bm25", "dense", "hybrid"], default=None)
    p.add_argument("--no-rerank", action="store_true", help="first-stage ranking only")
    p.add_argument("--json", action="store_true")
    common(p)
    p.set_defaults(handler=cmd_search)
