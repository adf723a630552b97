"""``purr bench attribution``: NLI throughput at a fixed pair length, fp32 vs int8, and the
fused verifier's (NLI + slot checks + fusion, when the model folder has a ``fusion.json``),
beside the pairs/s this CPU's matrix-multiply rate allows the model at best. Figures are medians
of several runs; JSON to stdout and ``--out``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from training.args import option
from training.bench.base import Benchmark, out_flag, save_report


def _cut_premise(tokenizer: Any, premise: str, hyp: str, length: int) -> str:
    """The premise's text up to the last token that fits in a ``length``-token pair."""
    enc = tokenizer(
        premise, hyp, truncation="only_first", max_length=length, return_offsets_mapping=True
    )
    ids = enc.sequence_ids()
    end = max(e for (_, e), sid in zip(enc["offset_mapping"], ids, strict=True) if sid == 0)
    return premise[:end]


def fixed_length_pairs(tokenizer: Any, n: int, length: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` (premise, hypothesis) pairs from the packaged Wikipedia summaries (consecutive
    summaries joined) whose encoded pair fills ``length`` tokens: the premise is cut where the
    tokenizer's truncation would cut it, so a model that chunks long premises (the verifier)
    sees the same one window the raw model does."""
    from retrieval.corpus import read_wiki_summaries
    from retrieval.sentences import split

    rng = random.Random(seed)
    docs = list(read_wiki_summaries())
    rng.shuffle(docs)
    pairs: list[tuple[str, str]] = []
    sentences: list[str] = []
    for d in docs:  # consecutive summaries joined until the pair is long enough
        sentences.extend(split(d.text))
        hyp = sentences[rng.randrange(len(sentences))]
        premise = " ".join(sentences)
        if length - len(tokenizer("", hyp)["input_ids"]) < length // 4:
            continue  # a hypothesis that leaves the premise no room (short lengths)
        if len(tokenizer(premise, hyp)["input_ids"]) >= length:
            pairs.append((_cut_premise(tokenizer, premise, hyp, length), hyp))
            sentences = []
        if len(pairs) >= n:
            break
    if len(pairs) < n:
        raise RuntimeError(f"only {len(pairs)} pairs of {length} tokens in the corpus; lower --n")
    return pairs


def encoder_flops(config: Any, seq_len: int) -> float:
    """Multiply-add FLOPs (2 per MAC) of one pass of a BERT-style encoder over ``seq_len``
    tokens: the four attention projections, the two feed-forward layers and the two attention
    products in every layer (embeddings, norms and the head are negligible).

    >>> from types import SimpleNamespace as C
    >>> round(encoder_flops(C(hidden_size=384, intermediate_size=1536, num_hidden_layers=6), 256) / 1e9, 2)
    6.04
    """
    d, ff, n = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    per_layer = 2 * seq_len * (4 * d * d + 2 * d * ff) + 2 * 2 * seq_len * seq_len * d
    return float(n * per_layer)


def decoder_flops(config: Any, seq_len: int) -> float:
    """Multiply-add FLOPs of one pass of a Gemma/Llama-style decoder over ``seq_len`` tokens:
    the query, key, value and output projections (grouped key-value heads), the gated
    feed-forward's three layers and the two attention products in every layer.

    >>> from types import SimpleNamespace as C
    >>> c = C(hidden_size=640, intermediate_size=2048, num_hidden_layers=18,
    ...       num_attention_heads=4, num_key_value_heads=1, head_dim=256)
    >>> round(decoder_flops(c, 128) / 1e9, 2)
    26.88
    """
    d, ff, n = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    q = config.num_attention_heads * config.head_dim
    kv = config.num_key_value_heads * config.head_dim
    proj = 2 * d * q + 2 * d * kv + 3 * d * ff
    per_layer = 2 * seq_len * proj + 2 * 2 * seq_len * seq_len * q
    return float(n * per_layer)


def matmul_peak_gflops(runs: int = 5, size: int = 2048) -> float:
    """This machine's fp32 matrix-multiply rate in GFLOP/s with torch's threads (median of
    ``runs``): the ceiling any encoder's pairs/s on this CPU is measured against."""
    import torch

    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t)
    return 2 * size**3 / statistics.median(times) / 1e9


def bench_attribution(
    model_ref: str | None, lengths: list[int], n: int, runs: int, batch_size: int
) -> dict[str, Any]:
    """Pairs per second for each length, fp32 (baseline) and int8, medians of ``runs``."""
    import torch

    from editor.attribution import default_purr_path
    from editor.attribution.decoder import DecoderNLI, is_decoder_folder
    from editor.attribution.factories import PRESETS, SHIPPED_MODELS
    from editor.attribution.fusion import FUSION_FILE, Fusion
    from editor.attribution.hf import HFSequenceClassificationNLI
    from editor.attribution.verifier import FusedVerifier
    from retrieval.settings import Settings

    ref = model_ref or str(default_purr_path())
    if ref in PRESETS:
        ref = str(SHIPPED_MODELS / PRESETS[ref])
    decoder = is_decoder_folder(Path(ref))
    report: dict[str, Any] = {
        "model": ref,
        "pairs": n,
        "runs": runs,
        "batch_size": batch_size,
        "torch_threads": torch.get_num_threads(),
        "matmul_peak_gflops": round(matmul_peak_gflops(), 1),
        "lengths": {},
    }
    models: dict[str, Any] = {
        q: DecoderNLI(
            ref,
            batch_size=batch_size,
            overlap=0,
            device="cpu",
            cache_dir=Settings().cache_dir,
            quantize=q,
        )
        if decoder
        else HFSequenceClassificationNLI(
            ref, max_length=max(lengths), batch_size=batch_size, quantize=q
        )
        for q in ("none", "int8")
    }
    for m in models.values():
        m.load()
    fusion_file = Path(ref) / FUSION_FILE
    fusion = Fusion.load(fusion_file) if fusion_file.is_file() else None
    report["verifier"] = str(fusion_file) if fusion is not None else None
    for length in lengths:
        pairs = fixed_length_pairs(models["none"]._tokenizer, n, length)
        row: dict[str, Any] = {}
        probs: dict[str, np.ndarray] = {}
        for q, m in models.items():
            m.max_length = length
            m._pair_probabilities(pairs[:batch_size])  # warm-up
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                out = [
                    m._pair_probabilities(pairs[i : i + batch_size])
                    for i in range(0, len(pairs), batch_size)
                ]
                times.append(time.perf_counter() - t)
            probs[q] = np.concatenate(out)[:, 0]
            row[q] = {
                "pairs_per_s": round(len(pairs) / statistics.median(times), 1),
                "runs_s": [round(x, 2) for x in times],
            }
        if fusion is not None:  # the verifier as purr uses it: NLI (fp32) + slot checks + fusion
            times = []
            for _ in range(runs):
                verifier = FusedVerifier(models["none"], fusion)  # a fresh slot-parse cache
                t = time.perf_counter()
                for i in range(0, len(pairs), batch_size):
                    verifier.score_batch(pairs[i : i + batch_size])
                times.append(time.perf_counter() - t)
            row["verifier"] = {
                "pairs_per_s": round(len(pairs) / statistics.median(times), 1),
                "runs_s": [round(x, 2) for x in times],
            }
        row["int8_speedup"] = round(row["int8"]["pairs_per_s"] / row["none"]["pairs_per_s"], 2)
        row["int8_vs_fp32"] = {
            "same_decision": round(
                float(np.mean((probs["none"] >= 0.5) == (probs["int8"] >= 0.5))), 4
            ),
            "mean_abs_diff": round(float(np.mean(np.abs(probs["none"] - probs["int8"]))), 4),
        }
        flops = (
            decoder_flops(models["none"].config, length)
            if decoder
            else encoder_flops(models["none"]._model.config, length)
        )
        row["gflop_per_pair"] = round(flops / 1e9, 2)
        row["fp32_gflops"] = round(row["none"]["pairs_per_s"] * flops / 1e9, 1)
        row["pairs_per_s_at_peak"] = round(report["matmul_peak_gflops"] * 1e9 / flops, 1)
        report["lengths"][str(length)] = row
    return report


BENCHMARK = Benchmark("attribution", "NLI throughput (pairs/s) at fixed lengths, fp32 vs int8")


def add_cli_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        default=None,
        help="model folder, or 'medium' / 'large' for a shipped verifier (default: the default's)",
    )
    p.add_argument("--lengths", default="256,128", help="comma-separated pair lengths in tokens")
    option(p, "--n", int, 192, "pairs per run")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    out_flag(p, "attribution")


def main(args: argparse.Namespace) -> dict[str, Any]:
    if args.n < 1 or args.runs < 1 or args.batch_size < 1:
        raise ValueError("--n, --runs and --batch-size must be >= 1")
    lengths = [int(x) for x in args.lengths.split(",") if x.strip()]
    report = bench_attribution(args.model, lengths, args.n, args.runs, args.batch_size)
    save_report(report, args.report_file)
    return report
