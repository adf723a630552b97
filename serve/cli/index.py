"""``purr index`` and ``purr search``."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from serve.cli.common import check_query, config_from
from training.args import switch


def cmd_index(args: argparse.Namespace) -> int:
    from retrieval.backends import build_index, open_index
    from retrieval.corpus import read_corpus
    from retrieval.milvus_client import is_milvus

    cfg = config_from(args)
    out = args.out if is_milvus(args.out) else Path(args.out)
    if args.backend == "local" and is_milvus(args.out):
        raise ValueError(
            f"--backend local writes a folder, and {args.out} (a URI, or a name ending in .db) "
            "would be read back as Milvus; name the folder otherwise or use --backend milvus"
        )
    if bool(args.corpus) == bool(args.delete):
        raise ValueError(
            "pass corpus files to index, or --delete DOC_ID ... to remove documents (not both)"
        )
    t = time.perf_counter()
    from editor.config import PipelineConfig

    # a config naming its own encoder must match the collection's (as Components.dense_override)
    dense = cfg.index.dense if cfg.index.dense != PipelineConfig().index.dense else None
    if args.delete:
        index = open_index(out)
        if not hasattr(index, "delete"):
            raise ValueError(
                f"{out} is a local index, which cannot delete documents; rebuild it without them "
                "(purr index CORPUS --out DIR --overwrite), or keep the corpus in Milvus "
                "(--backend milvus --out FILE.db)"
            )
        removed = index.delete(args.delete)
        print(
            f"deleted {removed} passages of {len(set(args.delete))} document id(s) from {out} "
            f"({len(index)} left) in {time.perf_counter() - t:.1f} s"
        )
        return 0
    if args.append:
        index = open_index(out, dense=dense)
        added = index.append(read_corpus(args.corpus))
        print(
            f"appended {added} passages to {out} ({len(index)} in total) in {time.perf_counter() - t:.1f} s"
        )
        return 0
    index = build_index(
        read_corpus(args.corpus),
        out,
        cfg.index,
        backend=args.backend,
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
        nargs="*",
        help="JSONL files {id,title,text,url?}, .txt/.md/.html files or folders, or packaged:wiki-summaries",
    )
    p.add_argument(
        "--out",
        required=True,
        help="index to write: a folder (local), FILE.db (Milvus Lite) or http(s)://HOST:PORT "
        "(a Milvus server; token in PURR_MILVUS_TOKEN); add #NAME for a collection other than purr",
    )
    p.add_argument(
        "--backend",
        choices=("auto", "local", "milvus"),
        default="auto",
        help="local: bm25s + FAISS files; milvus: BM25, dense and hybrid inside Milvus "
        "(pip install 'purr-edit[milvus]'); auto: milvus for FILE.db or a URI",
    )
    p.add_argument(
        "--delete",
        nargs="+",
        metavar="DOC_ID",
        default=None,
        help="remove these documents from a Milvus index",
    )
    g = p.add_mutually_exclusive_group()
    switch(g, "--append", "add documents to an existing index")
    switch(g, "--overwrite", "replace an existing index")
    switch(p, "--no-dense", "BM25 only (fast to build; no dense or hybrid search)")
    common(p, index=False)
    p.set_defaults(handler=cmd_index)

    p = sub.add_parser("search", help="search an index")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=5, help="results to show")
    p.add_argument("--mode", choices=["bm25", "dense", "hybrid"], default=None)
    switch(p, "--no-rerank", "first-stage ranking only")
    p.add_argument("--json", action="store_true")
    common(p)
    p.set_defaults(handler=cmd_search)
