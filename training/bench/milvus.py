"""``purr bench milvus``: the Milvus backend against the local index, in the same run.

- Quality: a BEIR set (SciFact test by default) over the same snippets and the same vectors in
  both backends (the local index's vectors are exported and reused, so nothing is embedded
  twice): nDCG@10 and recall@100 for BM25, dense, hybrid and hybrid + rerank.
- Speed and size at several corpus sizes: passages synthesised from real sentences, vectors
  derived from the shipped real passage vectors (as ``purr bench retrieval`` does), query
  vectors precomputed with the real encoder, so the figures time the engines, not the encoder:
  build throughput, size on disk, and p50/p95 query latency per mode.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from retrieval.config import ChunkingConfig, IndexConfig, SearchConfig
from retrieval.types import Document
from training.args import option
from training.bench.base import Benchmark, out_flag, save_report
from training.bench.retrieval import (
    _time_queries,
    dir_mb,
    percentiles,
    sentence_pool,
    synth_passages,
)
from training.figures import save_figure

log = logging.getLogger(__name__)

MODES = ("bm25", "dense", "hybrid")


class TableEncoder:
    """Vectors looked up by text (passages and queries given up front); for timing engines."""

    def __init__(self, table: dict[str, np.ndarray], dim: int, fallback=None):
        self.table = table
        self.dim = dim
        self.name = "table"
        self.fallback = fallback

    def _get(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.table]
        if missing and self.fallback is not None:  # the fingerprint passage
            for t, v in zip(missing, self.fallback.encode_passages(missing), strict=True):
                self.table[t] = v
        return np.stack([self.table[t] for t in texts]).astype(np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        return self._get([text])[0]

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._get(texts)

    def encode_passages(self, texts: list[str], progress=None) -> np.ndarray:
        out = self._get(texts)
        if progress is not None:
            progress(len(texts))
        return out


def _time(index, queries: list[str], mode: str) -> list[float]:
    cfg = SearchConfig(mode=mode)
    return _time_queries(lambda q: index.search(q, 10, cfg), queries)


def bench_size(
    n: int, pool: list[str], queries: list[str], query_vecs: np.ndarray, workdir: Path
) -> dict[str, Any]:
    """Both backends over ``n`` synthetic passages: build rate, disk size, latency per mode."""
    from retrieval.encoders import build_encoder
    from retrieval.index import Index
    from retrieval.milvus import MilvusIndex
    from retrieval.prebuilt import VectorCache

    base = VectorCache.packaged(IndexConfig().dense)
    assert base is not None, "the shipped default-corpus vectors are missing"
    rng = np.random.default_rng(n)
    passages = synth_passages(pool, n, seed=n)
    vecs = np.asarray(base.vectors, dtype=np.float32)[rng.integers(0, len(base.vectors), n)]
    vecs = vecs + rng.normal(0, 0.03, size=vecs.shape).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    table = dict(zip(passages, vecs, strict=True)) | dict(zip(queries, query_vecs, strict=True))
    encoder = TableEncoder(table, vecs.shape[1], fallback=build_encoder(IndexConfig().dense))
    cfg = IndexConfig(chunking=ChunkingConfig(window=8, stride=8), title_in_passage=False)
    docs = [Document(f"s{i}", "", p) for i, p in enumerate(passages)]
    out: dict[str, Any] = {"passages": n}
    for backend in ("local", "milvus"):
        target = workdir / (f"{backend}-{n}" + (".db" if backend == "milvus" else ""))
        t = time.perf_counter()
        index: Index | MilvusIndex
        if backend == "local":
            index = Index.build(docs, target, cfg, encoder=encoder, progress=False)
        else:
            index = MilvusIndex.build(docs, str(target), cfg, encoder=encoder, progress=False)
        build_s = time.perf_counter() - t
        row: dict[str, Any] = {
            "build_s": round(build_s, 1),
            "passages_per_s": round(len(index) / build_s, 1),
            "disk_mb": round(dir_mb(target), 1),
        }
        for mode in MODES:
            row[mode] = percentiles(_time(index, queries, mode))
        index.close()
        out[backend] = row
        shutil.rmtree(target, ignore_errors=True)
    return out


def bench_quality(
    index_dir: Path,
    corpus: Path,
    queries_path: Path,
    qrels_path: Path,
    workdir: Path,
    limit: int | None = None,
    rerank_depth: int = 30,
) -> dict[str, Any]:
    """nDCG@10 / recall@100 of each run on the local index and on a Milvus copy of it."""
    from retrieval.config import RerankConfig
    from retrieval.corpus import read_corpus
    from retrieval.encoders import build_encoder
    from retrieval.index import Index, export_vectors
    from retrieval.milvus import MilvusIndex
    from retrieval.prebuilt import CachedEncoder, VectorCache
    from training.eval.retrieval import evaluate, load_beir

    local = Index.open(index_dir)
    queries = (
        load_beir(queries_path, qrels_path)[:limit]
        if limit
        else load_beir(queries_path, qrels_path)
    )
    export_vectors(index_dir, workdir / "vectors")
    encoder: Any = CachedEncoder(
        build_encoder(local.cfg.dense), VectorCache.load(workdir / "vectors")
    )
    t = time.perf_counter()
    milvus = MilvusIndex.build(
        read_corpus([corpus]), str(workdir / "quality.db"), local.cfg, encoder=encoder
    )
    build_s = time.perf_counter() - t
    if len(milvus) != len(local):
        raise ValueError(
            f"{corpus} chunks into {len(milvus)} passages but {index_dir} has {len(local)}; "
            "pass the corpus the index was built from"
        )
    runs = ["bm25", "dense", "hybrid", "hybrid+rerank"]
    rerank = RerankConfig()
    report: dict[str, Any] = {
        "queries": len(queries),
        "passages": len(local),
        "milvus_build_from_vectors_s": round(build_s, 1),
    }
    for name, index in (("local", local), ("milvus", milvus)):
        report[name] = evaluate(index, queries, runs, rerank, rerank_depth=rerank_depth)
    report["delta"] = {
        run: {
            m: round(report["milvus"][run][m] - report["local"][run][m], 4)
            for m in ("ndcg@10", "recall@100")
        }
        for run in runs
    }
    milvus.close()
    return report


def run(
    out: Path,
    sizes: list[int],
    n_queries: int = 100,
    quality: dict[str, Path] | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    from retrieval.encoders import build_encoder

    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="purr-bench-milvus-") as tmp:
        work = Path(tmp)
        if quality is not None:
            report["quality"] = bench_quality(
                quality["index"], quality["corpus"], quality["queries"], quality["qrels"],
                work, limit,
            )  # fmt: skip
        if sizes:
            pool = sentence_pool([])
            rng = np.random.default_rng(7)
            queries = [pool[i] for i in rng.integers(0, len(pool), n_queries)]
            query_vecs = build_encoder(IndexConfig().dense).encode_queries(queries)
            report["sizes"] = [
                bench_size(n, pool, queries, query_vecs, work)
                for n in tqdm(sizes, desc="sizes", unit="size")
            ]
    return report


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = int("quality" in report) + int(bool(report.get("sizes")))
    fig, axes = plt.subplots(1, max(panels, 1), figsize=(6 * max(panels, 1), 4), squeeze=False)
    ax_i = 0
    if "quality" in report:
        ax = axes[0][ax_i]
        ax_i += 1
        runs = list(report["quality"]["local"])
        x = np.arange(len(runs))
        for j, backend in enumerate(("local", "milvus")):
            vals = [report["quality"][backend][r]["ndcg@10"] for r in runs]
            ax.bar(x + (j - 0.5) * 0.4, vals, 0.4, label=backend)
        ax.set_xticks(x, runs)
        ax.set_ylabel("nDCG@10")
        ax.set_title(f"quality ({report['quality']['queries']} queries)")
        ax.legend()
    if report.get("sizes"):
        ax = axes[0][ax_i]
        labels, vals, colors = [], [], []
        for s in report["sizes"]:
            for backend, color in (("local", "tab:blue"), ("milvus", "tab:orange")):
                for mode in MODES:
                    labels.append(f"{s['passages'] // 1000}k {mode}\n{backend}")
                    vals.append(s[backend][mode]["p50"])
                    colors.append(color)
        ax.bar(range(len(vals)), vals, color=colors)
        ax.set_xticks(range(len(vals)), labels, fontsize=6, rotation=90)
        ax.set_yscale("log")
        ax.set_ylabel("p50 ms per query")
        ax.set_title("query latency (blue local, orange Milvus)")
    save_figure(fig, path)


BENCHMARK = Benchmark(
    "milvus",
    "the Milvus backend against the local index: SciFact quality per mode, build "
    "throughput, disk size and query latency at several sizes",
)


def add_cli_args(p: argparse.ArgumentParser) -> None:
    from training.data.nli import default_data_dir

    shared = default_data_dir()
    p.add_argument("--sizes", default="10000,100000", help="synthetic corpus sizes ('' to skip)")
    option(p, "--queries", int, 100, "timed queries per mode and size")
    p.add_argument(
        "--index", default=None, help="a local index of --corpus for the quality comparison"
    )
    p.add_argument("--corpus", default=str(shared / "corpus" / "scifact.jsonl"))
    p.add_argument("--beir-queries", default=str(shared / "raw" / "scifact" / "queries.jsonl"))
    p.add_argument("--qrels", default=str(shared / "raw" / "scifact" / "qrels_test.tsv"))
    option(p, "--limit", int, None, "first N quality queries only")
    out_flag(p, "milvus")


def main(args: argparse.Namespace) -> dict[str, Any]:
    sizes = [int(x) for x in str(args.sizes).split(",") if x.strip()]
    if any(n < 100 for n in sizes) or args.queries < 1:
        raise ValueError("--sizes must each be >= 100 passages and --queries >= 1")
    quality = None
    if args.index:
        quality = {
            "index": Path(args.index),
            "corpus": Path(args.corpus),
            "queries": Path(args.beir_queries),
            "qrels": Path(args.qrels),
        }
        for name, path in quality.items():
            if not path.exists():
                raise ValueError(f"--{name} {path}: no such file or folder")
    report = run(Path(args.out or "."), sizes, args.queries, quality, args.limit)
    save_report(report, args.report_file, plot)
    return report
