"""Retrieval quality: nDCG@10 and recall@k over BEIR-style queries and qrels (doc level).

Passages are mapped to their documents by first appearance in the ranking (max-pooling), as
BEIR scores documents, not windows.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from retrieval.files import write_text
from training.args import option, switch
from training.eval.base import Evaluation
from training.figures import save_figure

EVALUATION = Evaluation(
    name="retrieval",
    help="nDCG@10 / recall@k of an index on BEIR-style or CLAPnq queries",
    primary="ndcg@10",
)
RUNS = ("bm25", "dense", "hybrid", "hybrid+rerank")


@dataclass(frozen=True)
class EvalQuery:
    id: str
    text: str
    relevant: dict[str, int]  # doc id -> graded relevance


def ndcg_at_k(ranked: Sequence[str], relevant: dict[str, int], k: int = 10) -> float:
    """nDCG@k with graded gains (BEIR / trec_eval definition: gain = rel, log2 discount).

    >>> round(ndcg_at_k(["a", "b"], {"b": 1}), 3)
    0.631
    """
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranked: Sequence[str], relevant: dict[str, int], k: int) -> float:
    """Share of relevant documents found in the top k.

    >>> recall_at_k(["a", "b", "c"], {"c": 1, "d": 1}, 3)
    0.5
    """
    rel = {d for d, g in relevant.items() if g > 0}
    return len(rel.intersection(ranked[:k])) / len(rel) if rel else 0.0


def dedupe_docs(doc_ids: Sequence[str]) -> list[str]:
    """Documents in order of first appearance (max-pooling of passage ranks).

    >>> dedupe_docs(["a", "b", "a", "c"])
    ['a', 'b', 'c']
    """
    return list(dict.fromkeys(doc_ids))


def load_beir(queries_path: str | Path, qrels_path: str | Path) -> list[EvalQuery]:
    """BEIR queries.jsonl (``_id``, ``text``) and a qrels TSV (query-id, corpus-id, score)."""
    texts = {}
    with open(queries_path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                texts[str(row["_id"])] = row["text"]
    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()  # "qid docid score" or TREC "qid Q0 docid score", tabs or spaces
            if not parts or parts[0] in {"query-id", "query_id"}:
                continue
            if len(parts) not in (3, 4) or not parts[-1].lstrip("-").isdigit():
                raise ValueError(
                    f"{qrels_path}:{lineno}: expected 'query-id corpus-id score', got {line.strip()!r}"
                )
            qrels.setdefault(parts[0], {})[parts[-2]] = int(parts[-1])
    missing = [q for q in qrels if q not in texts]
    if missing:
        raise ValueError(
            f"{qrels_path}: {len(missing)} query ids have no text in {queries_path} (e.g. {missing[0]})"
        )
    return [EvalQuery(q, texts[q], rel) for q, rel in qrels.items()]


def load_clapnq(corpus_path: str | Path) -> list[EvalQuery]:
    """CLAPnq dev: each passage row carries the question whose gold passage it is."""
    out = []
    with open(corpus_path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row.get("question"):
                out.append(EvalQuery(f"q-{row['id']}", row["question"], {str(row["id"]): 1}))
    return out


def evaluate(
    index,
    queries: list[EvalQuery],
    runs: Sequence[str],
    rerank_cfg=None,
    depth: int = 100,
    rerank_depth: int = 30,
    progress: bool = True,
) -> dict[str, dict[str, float]]:
    """Metrics per run: ndcg@10, recall@1/@5/@10/@100 (doc level) and mean latency."""
    from retrieval.config import RerankConfig, SearchConfig
    from retrieval.rerank import build_reranker

    wants_rerank = any(r.endswith("+rerank") for r in runs)
    reranker = build_reranker(rerank_cfg or RerankConfig()) if wants_rerank else None
    report: dict[str, dict[str, float]] = {}
    for run in runs:
        mode = run.split("+")[0]
        search = SearchConfig(mode=mode, candidates=depth)
        sums: dict[str, float] = {}
        t0 = time.perf_counter()
        batch = 32
        for i in tqdm(range(0, len(queries), batch), desc=run, unit="batch", disable=not progress):
            chunk = queries[i : i + batch]
            results = index.search_batch([q.text for q in chunk], depth, search)
            for q, hits in zip(chunk, results, strict=True):
                if run.endswith("+rerank") and reranker is not None:
                    head = reranker.rerank(q.text, hits[:rerank_depth])
                    hits = head + hits[rerank_depth:]
                docs = dedupe_docs([h.snippet.doc_id for h in hits])
                metrics = {"ndcg@10": ndcg_at_k(docs, q.relevant, 10)}
                for k in (1, 5, 10, 100):
                    metrics[f"recall@{k}"] = recall_at_k(docs, q.relevant, k)
                for name, v in metrics.items():
                    sums[name] = sums.get(name, 0.0) + v
        n = max(1, len(queries))
        report[run] = {name: round(v / n, 4) for name, v in sums.items()}
        report[run]["ms_per_query"] = round((time.perf_counter() - t0) * 1000 / n, 1)
        report[run]["queries"] = len(queries)
    return report


def expected_calibration_error(probs: np.ndarray, labels: np.ndarray, bins: int = 10) -> float:
    """ECE: bin-size-weighted mean |accuracy - confidence| over equal-width probability bins.

    >>> expected_calibration_error(np.array([0.9, 0.1]), np.array([1, 0]))
    0.1
    """
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.digitize(probs, edges[1:-1]), 0, bins - 1)
    total = 0.0
    for b in range(bins):
        mask = which == b
        if mask.any():
            total += mask.mean() * abs(labels[mask].mean() - probs[mask].mean())
    return round(float(total), 4)


def calibration_pairs(
    index, queries: list[EvalQuery], reranker, depth: int = 10, progress: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Cross-encoder logits and 0/1 labels for the top ``depth`` hybrid hits of each query
    (a passage is relevant when its document is)."""
    from retrieval.config import SearchConfig

    logits, labels = [], []
    for q in tqdm(queries, desc="calibration pairs", unit="query", disable=not progress):
        hits = index.search(q.text, depth, SearchConfig(mode="hybrid"))
        if not hits:
            continue
        logits.extend(reranker.scorer.logits(q.text, [h.snippet.text for h in hits]).tolist())
        labels.extend(int(q.relevant.get(h.snippet.doc_id, 0) > 0) for h in hits)
    return np.asarray(logits), np.asarray(labels)


def calibrate_reranker(
    index, queries: list[EvalQuery], cfg, out: Path, depth: int
) -> dict[str, float]:
    """Fit the reranker's Platt calibration on ``queries``; the fit and its ECE before and after,
    also written to ``out/calibration.json``."""
    from retrieval.rerank import build_reranker, calibrate, fit_platt

    reranker = build_reranker(cfg.rerank)
    logits, labels = calibration_pairs(index, queries, reranker, depth)
    if labels.min() == labels.max():
        raise ValueError("calibration needs both relevant and non-relevant passages among the hits")
    scale, bias = fit_platt(logits, labels)
    before = expected_calibration_error(calibrate(logits), labels)
    after = expected_calibration_error(calibrate(logits, scale, bias), labels)
    result = {
        "pairs": int(len(labels)),
        "positive_rate": round(float(labels.mean()), 4),
        "scale": round(scale, 4),
        "bias": round(bias, 4),
        "ece_sigmoid": before,
        "ece_calibrated": after,
    }
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "calibration.json", json.dumps(result, indent=2))
    return result


def plot(report: dict[str, dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = list(report)
    metrics = ["ndcg@10", "recall@5", "recall@100"]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    width = 0.8 / len(metrics)
    for j, m in enumerate(metrics):
        ax.bar(
            [i + j * width for i in range(len(runs))], [report[r][m] for r in runs], width, label=m
        )
    ax.set_xticks([i + width for i in range(len(runs))], runs)
    ax.set_ylim(0, 1.12)
    for container in ax.containers:
        ax.bar_label(container, fmt="%.3f", fontsize=6, padding=1)
    ax.legend(loc="upper center", ncol=len(metrics), fontsize=8, frameon=False)
    ax.set_title("retrieval quality")
    save_figure(fig, path)


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    """``purr eval retrieval``'s arguments."""
    p.add_argument(
        "--index", required=True, help="index directory built from the evaluation corpus"
    )
    p.add_argument("--queries", help="BEIR queries.jsonl")
    p.add_argument("--qrels", help="BEIR qrels TSV")
    p.add_argument("--clapnq", help="CLAPnq corpus JSONL (questions are read from it)")
    p.add_argument(
        "--runs", default=",".join(RUNS), help=f"comma-separated subset of {','.join(RUNS)}"
    )
    option(p, "--rerank-depth", int, 30, "passages reranked per query")
    p.add_argument("--limit", type=int, default=None)
    switch(
        p,
        "--calibrate",
        "instead of evaluating, fit the reranker's Platt calibration on these queries "
        "(use a train split) and print the rerank.calibration_* settings",
    )
    p.add_argument("--out", required=True, help="folder for metrics.json and the plot")
    common(p, index=False)


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval retrieval``: metrics per run, or with ``--calibrate`` the fitted
    calibration."""
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
        return {"calibration": result}
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
    return {"runs": report}


def render(report: dict[str, Any]) -> str:
    """A table of the runs, or the calibration and the settings to use."""
    if "calibration" in report:
        result = report["calibration"]
        return (
            json.dumps(result, indent=2)
            + f"\nuse: --set rerank.calibration_scale={result['scale']} "
            f"--set rerank.calibration_bias={result['bias']}"
        )
    runs = report["runs"]
    width = max(len(r) for r in runs)
    cols = ["ndcg@10", "recall@1", "recall@5", "recall@100", "ms_per_query"]
    lines = [f"{'run':<{width}}  " + "  ".join(f"{c:>12}" for c in cols)]
    for run, m in runs.items():
        lines.append(f"{run:<{width}}  " + "  ".join(f"{m[c]:>12}" for c in cols))
    return "\n".join(lines)
