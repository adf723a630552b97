"""``purr bench retrieval``: indexing throughput, query latency and index size at several sizes.

Corpora of 10k-1M passages are synthesised from real sentences (the packaged Wikipedia summaries
plus any JSONL corpora given) so that term statistics are natural. Embedding a million passages
on a laptop CPU takes hours, so dense search at large sizes runs on vectors derived from real
embeddings (each a real passage vector plus small Gaussian noise, re-normalised): FAISS latency
depends on the index structure and size, not on what the vectors mean. Encoding throughput is
measured separately on real passages. rank-bm25 is measured beside bm25s as the baseline.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from retrieval.files import write_text
from training.args import option
from training.bench.base import Benchmark
from training.figures import save_figure

log = logging.getLogger(__name__)


def rss_mb() -> float:
    """Resident memory of this process in MiB (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def dir_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def percentiles(ms: list[float]) -> dict[str, float]:
    """p50 / p95 of a list of milliseconds.

    >>> percentiles([1.0, 2.0, 3.0, 4.0])["p50"]
    2.5
    """
    q = np.percentile(np.asarray(ms), [50, 95])
    return {"p50": round(float(q[0]), 3), "p95": round(float(q[1]), 3)}


def sentence_pool(extra_corpora: list[str]) -> list[str]:
    from retrieval.corpus import read_corpus, read_wiki_summaries
    from retrieval.sentences import split

    pool = [s for d in read_wiki_summaries() for s in split(d.text)]
    if extra_corpora:
        pool += [s for d in read_corpus(extra_corpora) for s in split(d.text)]
    return [s for s in pool if 20 <= len(s) <= 400]


def synth_passages(pool: list[str], n: int, seed: int = 0) -> list[str]:
    """``n`` passages of 4 random real sentences each."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(pool), size=(n, 4))
    return [" ".join(pool[j] for j in row) for row in idx]


def _time_queries(fn, queries: list[str], repeats: int = 1) -> list[float]:
    fn(queries[0])  # warm-up
    out = []
    for _ in range(repeats):
        for q in queries:
            t = time.perf_counter()
            fn(q)
            out.append((time.perf_counter() - t) * 1000)
    return out


def bench_bm25(passages: list[str], queries: list[str], workdir: Path, baseline: bool) -> dict:
    from retrieval.bm25 import BM25Index
    from retrieval.config import BM25Config

    res: dict = {}
    t = time.perf_counter()
    ix = BM25Index.build(passages, BM25Config(), show_progress=False)
    res["index_passages_per_s"] = round(len(passages) / (time.perf_counter() - t), 1)
    path = workdir / "bm25"
    path.mkdir()
    ix.save(path)
    del ix
    res["disk_mb"] = round(dir_mb(path), 1)
    before = rss_mb()
    ix = BM25Index.load(path, mmap=True)
    lat = _time_queries(lambda q: ix.search(q, 100), queries)
    res["rss_mb_after_queries"] = round(rss_mb() - before, 1)
    res["query_ms"] = percentiles(lat)
    if baseline:
        from rank_bm25 import BM25Okapi

        from retrieval.bm25 import _split_words

        t = time.perf_counter()
        ref = BM25Okapi([_split_words(p) for p in passages])
        res["rank_bm25_index_passages_per_s"] = round(len(passages) / (time.perf_counter() - t), 1)
        lat_ref = _time_queries(
            lambda q: ref.get_top_n(_split_words(q), passages, n=100), queries[:20]
        )
        res["rank_bm25_query_ms"] = percentiles(lat_ref)
        res["speedup_vs_rank_bm25_p50"] = round(
            res["rank_bm25_query_ms"]["p50"] / max(res["query_ms"]["p50"], 1e-6), 1
        )
    return res


def bench_dense(
    base_vectors: np.ndarray, n: int, query_vectors: np.ndarray, workdir: Path, index_type: str
) -> dict:
    from retrieval.config import DenseConfig
    from retrieval.dense import DenseIndex

    rng = np.random.default_rng(1)
    vecs = base_vectors[rng.integers(0, len(base_vectors), size=n)]
    vecs = vecs + rng.normal(0, 0.03, size=vecs.shape).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    cfg = DenseConfig(index_type=index_type)
    t = time.perf_counter()
    dense = DenseIndex.build(vecs, cfg)
    build_s = time.perf_counter() - t
    path = workdir / f"dense-{index_type}.faiss"
    dense.save(path)
    kind = dense.kind
    # Recall of the approximate index against exact search on a few queries.
    exact = vecs @ query_vectors[:20].T  # (n, 20)
    truth = np.argsort(-exact, axis=0)[:10].T
    del dense, vecs, exact
    before = rss_mb()
    dense = DenseIndex.load(path, cfg, mmap=True)
    lat = _time_queries(lambda q: dense.search(q[None, :], 100), list(query_vectors))
    found = [dense.search(q[None, :], 10)[0][0] for q in query_vectors[:20]]
    recall = float(
        np.mean(
            [len(set(f.tolist()) & set(t.tolist())) / 10 for f, t in zip(found, truth, strict=True)]
        )
    )
    return {
        "index": kind,
        "build_vectors_per_s": round(n / build_s, 1),
        "disk_mb": round(path.stat().st_size / 2**20, 1),
        "rss_mb_after_queries": round(rss_mb() - before, 1),
        "search_ms": percentiles(lat),
        "recall@10_vs_exact": round(recall, 3),
    }


def bench_encoder_and_rerank(passages: list[str], queries: list[str], repeats: int) -> dict:
    from retrieval.config import DenseConfig, RerankConfig
    from retrieval.encoders import build_encoder
    from retrieval.rerank import build_reranker

    enc = build_encoder(DenseConfig())
    sample = passages[:512]
    enc.encode_passages(sample[:16])
    t = time.perf_counter()
    base = enc.encode_passages(sample)
    enc_rate = len(sample) / (time.perf_counter() - t)
    q_lat = _time_queries(enc.encode_query, queries)
    qvecs = enc.encode_queries(queries)
    words100 = [" ".join((p + " " + p).split()[:100]) for p in passages[:50]]
    out = {"encode_passages_per_s": round(enc_rate, 1), "encode_query_ms": percentiles(q_lat)}
    for max_len in (256, 128):
        rr = build_reranker(RerankConfig(max_length=max_len))
        rr.scorer.logits(queries[0], words100)
        lat = []
        for i in range(repeats):
            t = time.perf_counter()
            rr.scorer.logits(queries[i % len(queries)], words100)
            lat.append((time.perf_counter() - t) * 1000)
        out[f"rerank_50x100words_ms_maxlen{max_len}"] = percentiles(lat)
    return {"encoder": out, "_base": base, "_qvecs": qvecs}


def run_bench(
    sizes: list[int], n_queries: int, extra: list[str], out: Path, baseline_max: int, repeats: int
) -> dict:
    pool = sentence_pool(extra)
    queries = [s.rstrip(".") for s in synth_passages(pool, n_queries, seed=7)]
    queries = [" ".join(q.split()[:12]) for q in queries]
    report: dict = {
        "cpu_count": os.cpu_count(),
        "sentences_in_pool": len(pool),
        "queries": n_queries,
        "sizes": {},
    }
    enc = bench_encoder_and_rerank(synth_passages(pool, 600, seed=3), queries, repeats)
    base, qvecs = enc.pop("_base"), enc.pop("_qvecs")
    report.update(enc)
    enc_q = report["encoder"]["encode_query_ms"]["p50"]
    for n in tqdm(sizes, desc="sizes", unit="size"):
        work = Path(tempfile.mkdtemp(prefix=f"purr-bench-{n}-"))
        try:
            passages = synth_passages(pool, n)
            row = {"bm25": bench_bm25(passages, queries, work, baseline=n <= baseline_max)}
            del passages
            row["dense"] = bench_dense(base, n, qvecs, work, "auto")
            row["dense"]["query_ms_with_encoding_p50"] = round(
                row["dense"]["search_ms"]["p50"] + enc_q, 3
            )
            row["hybrid_query_ms_p50_estimate"] = round(
                row["bm25"]["query_ms"]["p50"] + row["dense"]["query_ms_with_encoding_p50"], 3
            )
            report["sizes"][str(n)] = row
            log.info("size %d: %s", n, row)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "bench_retrieval.json", json.dumps(report, indent=2))
    _plot(report, out / "bench_retrieval.png")
    return report


def _plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted(int(s) for s in report["sizes"])
    rows = [report["sizes"][str(s)] for s in sizes]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(sizes, [r["bm25"]["query_ms"]["p50"] for r in rows], "o-", label="bm25s p50")
    ax.plot(sizes, [r["dense"]["search_ms"]["p50"] for r in rows], "s-", label="FAISS search p50")
    ax.plot(
        sizes,
        [r["dense"]["query_ms_with_encoding_p50"] for r in rows],
        "^-",
        label="dense incl. encoding p50",
    )
    ref = [
        (s, r["bm25"]["rank_bm25_query_ms"]["p50"])
        for s, r in zip(sizes, rows, strict=True)
        if "rank_bm25_query_ms" in r["bm25"]
    ]
    if ref:
        ax.plot(*zip(*ref, strict=True), "x--", label="rank-bm25 p50 (baseline)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("passages")
    ax.set_ylabel("ms per query")
    ax.legend(fontsize=8)
    save_figure(fig, path)


BENCHMARK = Benchmark(
    "retrieval", "indexing throughput, query latency, index size at several corpus sizes"
)


def add_cli_args(b: argparse.ArgumentParser) -> None:
    b.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated passage counts")
    option(b, "--queries", int, 100, "queries timed per size")
    option(b, "--repeats", int, 7, "runs of the rerank timing (median reported)")
    b.add_argument(
        "--corpus", action="append", default=[], help="extra JSONL corpora for the sentence pool"
    )
    option(b, "--baseline-max", int, 100_000, "largest size at which rank-bm25 is also timed")
    b.add_argument(
        "--out", default="runs/bench", help="folder for bench_retrieval.json and the plot"
    )
    b.add_argument("-v", "--verbose", action="store_true")


def main(args: argparse.Namespace) -> dict[str, Any]:
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if not sizes or min(sizes) < 100:
        raise ValueError(f"--sizes must be passage counts >= 100, got {args.sizes}")
    report = run_bench(
        sizes, args.queries, args.corpus, Path(args.out), args.baseline_max, args.repeats
    )
    return {**report, "written": str(Path(args.out) / "bench_retrieval.json")}


def render(report: dict[str, Any]) -> str:
    """The summary, a line per corpus size, and where the report went."""
    lines = [
        json.dumps({k: v for k, v in report.items() if k not in {"sizes", "written"}}, indent=2)
    ]
    for n, row in report["sizes"].items():
        b, d = row["bm25"], row["dense"]
        extra = (
            f", rank-bm25 {b['rank_bm25_query_ms']['p50']} ms ({b['speedup_vs_rank_bm25_p50']}x)"
            if "rank_bm25_query_ms" in b
            else ""
        )
        bm25 = f"bm25 p50 {b['query_ms']['p50']} ms p95 {b['query_ms']['p95']} ms{extra}"
        dense = (
            f"{d['index']} search p50 {d['search_ms']['p50']} ms p95 {d['search_ms']['p95']} ms "
            f"recall@10 {d['recall@10_vs_exact']}"
        )
        disk = f"disk bm25 {b['disk_mb']} MB + faiss {d['disk_mb']} MB"
        lines.append(f"{int(n):>9,} passages | {bm25} | {dense} | {disk}")
    lines.append(f"wrote {report['written']}")
    return "\n".join(lines)
