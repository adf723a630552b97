"""``purr bench batch``: passages/s of the dense encoder and pairs/s of the cross-encoder by
batch size, on real snippets of the default corpus.

The packaged models are int8 ONNX with dynamic quantisation: activations are quantised per
batch, and a large batch of length-sorted snippets still multiplies bigger, less cache-friendly
matrices. Which batch size is fastest depends on the CPU, so this sweep is what sets the
defaults (``index.dense.batch_size``, ``rerank.batch_size``) and what a user reruns on theirs.
Each size is timed ``--runs`` times (median, min-max) and given as a ratio to the largest size.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from training.args import option
from training.bench.base import Benchmark, out_flag, save_report
from training.figures import save_figure


def corpus_snippets(n: int, seed: int = 0) -> list[str]:
    """``n`` snippets of the default corpus, as the default index cuts them."""
    from retrieval.chunking import chunk
    from retrieval.config import ChunkingConfig
    from retrieval.corpus import DEFAULT_CORPUS, read_corpus

    texts = [s.text for d in read_corpus([DEFAULT_CORPUS]) for s in chunk(d, ChunkingConfig())]
    random.Random(seed).shuffle(texts)
    return texts[:n]


def _rates(work, n_items: int, sizes: list[int], runs: int, desc: str) -> dict[str, Any]:
    """``work(batch_size)`` timed ``runs`` times per size (interleaved), as items per second."""
    seconds: dict[int, list[float]] = {b: [] for b in sizes}
    for _ in tqdm(range(runs), desc=desc, unit="run"):
        for b in sizes:
            started = time.perf_counter()
            work(b)
            seconds[b].append(time.perf_counter() - started)
    ref = statistics.median(seconds[max(sizes)])
    return {
        str(b): {
            "per_s_median": round(n_items / statistics.median(s), 1),
            "per_s_min": round(n_items / max(s), 1),
            "per_s_max": round(n_items / min(s), 1),
            "speedup_vs_largest": round(ref / statistics.median(s), 2),
        }
        for b, s in seconds.items()
    }


def bench_batch(n: int, sizes: list[int], runs: int) -> dict[str, Any]:
    from retrieval.config import DenseConfig, RerankConfig
    from retrieval.encoders import build_encoder
    from retrieval.rerank import build_reranker

    texts = corpus_snippets(n)
    encoders = {b: build_encoder(DenseConfig(batch_size=b)) for b in sizes}
    rerankers = {b: build_reranker(RerankConfig(batch_size=b)) for b in sizes}
    for b in sizes:  # sessions open, first-call costs paid
        encoders[b].encode_passages(texts[:4])
        rerankers[b].relevance("warm up", texts[:4])
    query = "who designed and built the tower"
    return {
        "snippets": n,
        "runs": runs,
        "encoder_passages_per_s": _rates(
            lambda b: encoders[b].encode_passages(texts), n, sizes, runs, "encoder"
        ),
        "reranker_pairs_per_s": _rates(
            lambda b: rerankers[b].relevance(query, texts), n, sizes, runs, "reranker"
        ),
    }


def plot(report: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for key, label in (
        ("encoder_passages_per_s", "bge-small encoder, passages/s"),
        ("reranker_pairs_per_s", "MiniLM cross-encoder, pairs/s"),
    ):
        sizes = sorted(int(b) for b in report[key])
        ax.plot(sizes, [report[key][str(b)]["per_s_median"] for b in sizes], "o-", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("batch size")
    ax.set_ylabel("items per second (median)")
    ax.legend(fontsize=8)
    save_figure(fig, png)


BENCHMARK = Benchmark("batch", "encoder and cross-encoder throughput by batch size")


def add_cli_args(p: argparse.ArgumentParser) -> None:
    option(p, "--n", int, 256, "snippets of the default corpus")
    p.add_argument("--sizes", default="4,8,16,32,64", help="comma-separated batch sizes")
    p.add_argument("--runs", type=int, default=3)
    out_flag(p, "batch")


def main(args: argparse.Namespace) -> dict[str, Any]:
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    if not sizes or sizes[0] < 1 or args.n < 1 or args.runs < 1:
        raise ValueError("--sizes must be batch sizes >= 1, and --n, --runs >= 1")
    report = bench_batch(args.n, sizes, args.runs)
    save_report(report, args.report_file, plot)
    return report
