"""``purr bench span-judge``: the span judge at fp32 (torch) and as its int8 ONNX graph
(``quantize: int8``, ``editor.attribution.span_onnx``) on real dev pairs, WiCE's and SummEdits'
(never trained on): pairs/s (medians of several runs, the two interleaved, so the ratio holds
on a busy machine) and how far int8 moves what the judge says: each pair's largest probability
shift (mean, 99th percentile, max), the pair label, every claim token's tag, the flagged spans
and the pointer's evidence words. JSON to stdout and ``--out``, with a histogram of the shifts.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from editor.verdicts import CONTRADICTED
from training.args import option
from training.bench.base import Benchmark, out_flag, save_report

BENCHMARK = Benchmark("span-judge", "span judge pairs/s and agreement, fp32 vs int8 ONNX")


def _outputs(judge: Any, items: list[tuple[str, str]], batch: int, marked: list) -> dict:
    """Pair and claim-token probabilities, flagged spans, and where the pointer lands for each
    of ``marked`` (claim, contradicted span, evidence): the same marked spans for both forms."""
    from editor.attribution.span_model import first_segment, layout

    probs, tokens, spans = [], [], []
    for i in range(0, len(items), batch):
        chunk = items[i : i + batch]
        firsts = [first_segment(c) for c, _ in chunk]
        forward = judge._forward([f for f, _ in firsts], [e for _, e in chunk])
        p, tok, _, encs = forward
        probs.append(p)
        for t, enc in zip(tok, encs, strict=True):  # the claim's own tokens only
            tokens.append(t[[k for k, _, _ in layout(enc)[1] if enc.special_tokens_mask[k] == 0]])
        judged = judge._judgements(chunk, firsts, forward)  # from the same forward pass
        spans.extend([(s.start, s.end, s.kind) for s in j.spans] for j in judged)
    points = [
        p for i in range(0, len(marked), batch) for p in judge.point_batch(marked[i : i + batch])
    ]
    return {"probs": np.concatenate(probs), "tokens": tokens, "spans": spans, "points": points}


def bench_span_judge(model: str | None, n: int, runs: int, batch_size: int, data: Path) -> dict:
    from editor.attribution.span_judge import SpanJudge
    from editor.attribution.span_onnx import build
    from training.eval.span_rows import human_rows

    rows = human_rows(data)
    random.Random(0).shuffle(rows)
    items = [(r.claim, r.evidence) for r in rows[:n]]
    judges = {q: SpanJudge(model, batch_size=batch_size, quantize=q) for q in ("none", "int8")}
    judges["none"].load()
    with tempfile.TemporaryDirectory() as fresh:  # the build a first use does, timed
        t = time.perf_counter()
        build(judges["none"]._model, judges["none"].path, Path(fresh) / "int8")
        build_s = time.perf_counter() - t
    t = time.perf_counter()
    judges["int8"].load()  # from the cache (built there on its own first use)
    load_s = time.perf_counter() - t
    times: dict[str, list[float]] = {q: [] for q in judges}
    for r in range(runs):
        for q in ("none", "int8") if r % 2 == 0 else ("int8", "none"):
            judge = judges[q]
            t = time.perf_counter()
            judge._pair_probabilities([(e, c) for c, e in items])
            times[q].append(time.perf_counter() - t)
    fp32 = _outputs(judges["none"], items, batch_size, [])
    marked = [
        (c, (s[0], s[1]), e)
        for (c, e), found in zip(items, fp32["spans"], strict=True)
        for s in found
        if s[2] == CONTRADICTED
    ]
    outs = {q: _outputs(judge, items, batch_size, marked) for q, judge in judges.items()}
    a, b = outs["none"], outs["int8"]
    shift = np.abs(a["probs"] - b["probs"]).max(-1)
    tags = [(x.argmax(-1) == y.argmax(-1)) for x, y in zip(a["tokens"], b["tokens"], strict=True)]
    speed = {q: round(len(items) / statistics.median(ts), 1) for q, ts in times.items()}
    return {
        "model": str(judges["none"].path),
        "pairs": len(items),
        "runs": runs,
        "batch_size": batch_size,
        "int8_build_s": round(build_s, 1),
        "int8_load_s": round(load_s, 1),
        "pairs_per_s": speed,
        "runs_s": {q: [round(x, 2) for x in ts] for q, ts in times.items()},
        "int8_speedup": round(speed["int8"] / speed["none"], 2),
        "pair_shift": {
            "mean": round(float(shift.mean()), 4),
            "p99": round(float(np.quantile(shift, 0.99)), 4),
            "max": round(float(shift.max()), 4),
        },
        "same_pair_label": round(float(np.mean(a["probs"].argmax(-1) == b["probs"].argmax(-1))), 4),
        "same_token_tag": round(float(np.concatenate(tags).mean()), 4),
        "same_spans": round(
            float(np.mean([x == y for x, y in zip(a["spans"], b["spans"], strict=True)])), 4
        ),
        "pointer": _pointers(a["points"], b["points"]),
        "shifts": [round(float(x), 4) for x in shift],
    }


def at_lengths(model: str | None, lengths: list[int], n: int, runs: int, batch: int) -> dict:
    """Pairs/s of both forms on ``n`` pairs filling each of ``lengths`` tokens (packaged
    summaries, ``training.bench.attribution.fixed_length_pairs``), medians of ``runs``."""
    from transformers import PreTrainedTokenizerFast

    from editor.attribution.span_judge import SpanJudge
    from training.bench.attribution import fixed_length_pairs

    top = max(lengths)  # its own judges: the real-pair bench keeps the trained length
    judges = {
        q: SpanJudge(model, max_length=top, batch_size=batch, quantize=q) for q in ("none", "int8")
    }
    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(judges["none"].path / "tokenizer.json"))
    out: dict[str, dict[str, float]] = {}
    for length in lengths:
        pairs = fixed_length_pairs(tokenizer, n, length)
        times: dict[str, list[float]] = {q: [] for q in judges}
        for r in range(runs):
            for q in ("none", "int8") if r % 2 == 0 else ("int8", "none"):
                t = time.perf_counter()
                judges[q]._pair_probabilities(pairs)
                times[q].append(time.perf_counter() - t)
        out[str(length)] = {q: round(n / statistics.median(ts), 1) for q, ts in times.items()}
    return out


def _pointers(fp32: list, int8: list) -> dict[str, int]:
    """Where the two forms point for the same marked spans: the same evidence words, both
    "the evidence does not say" (None), or not the same."""
    pairs = list(zip(fp32, int8, strict=True))
    same = sum(x == y and x is not None for x, y in pairs)
    none = sum(x is None and y is None for x, y in pairs)
    return {
        "spans": len(pairs),
        "same_words": same,
        "both_none": none,
        "differ": len(pairs) - same - none,
    }


def plot(report: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from training.figures import save_figure

    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.hist(report["shifts"], bins=40, color="tab:grey")
    ax.axvline(0.01, color="tab:red", linestyle="--", linewidth=1)
    ax.set_xlabel("largest probability shift of a pair, int8 vs fp32")
    ax.set_ylabel("pairs")
    s = report["pair_shift"]
    ax.set_title(f"mean {s['mean']}, p99 {s['p99']}; {report['int8_speedup']}x pairs/s", fontsize=9)
    save_figure(fig, png)


def add_cli_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=None, help="span judge folder (default: the shipped one)")
    option(p, "--n", int, 192, "dev pairs (WiCE and SummEdits dev)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--data", default=None, help="the development data (default ../shared/data)")
    p.add_argument(
        "--lengths", default="128,256", help="pair lengths in tokens for pairs_per_s_at_length"
    )
    out_flag(p, "span-judge")


def main(args: argparse.Namespace) -> dict[str, Any]:
    from training.data.cited import DATA

    if args.n < 1 or args.runs < 1 or args.batch_size < 1:
        raise ValueError("--n, --runs and --batch-size must be >= 1")
    data = Path(args.data) if args.data else DATA
    lengths = [int(x) for x in args.lengths.split(",") if x.strip()]
    if not lengths or min(lengths) < 16 or max(lengths) > 512:
        raise ValueError(f"--lengths takes token counts from 16 to 512, got {args.lengths!r}")
    report = bench_span_judge(args.model, args.n, args.runs, args.batch_size, data)
    report["pairs_per_s_at_length"] = at_lengths(
        args.model, lengths, min(args.n, 64), args.runs, args.batch_size
    )
    save_report(report, args.report_file, plot)
    return {k: v for k, v in report.items() if k != "shifts"}
