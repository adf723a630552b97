"""``purr bench research``: the queries each generator writes for a passage, and latency by stage."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from training.args import option
from training.bench.base import Benchmark, config_flags

DEFAULT_PASSAGE = (
    "The Eiffel Tower was built from 1887 to 1889 as the entrance to the 1889 World's Fair. "
    "It was designed by the company of Gustave Eiffel. It is 330 metres tall."
)


def bench_research(
    text: str,
    index: str | None,
    generators: list[str],
    runs: int,
    config: str,
    overrides: list[str],
) -> dict:
    from editor.config import load_config
    from editor.factory import Components

    report: dict = {"text": text, "runs": runs, "generators": {}}
    shared = None
    for gen in generators:
        cfg = load_config(config, [*overrides, f"querygen.type={gen}"])
        comp = Components(cfg, index_path=index, progress=False)
        if shared is not None:  # reuse the opened index and models across generators
            comp.__dict__["index"] = shared.index
            comp.__dict__["reranker"] = shared.reranker
        results = comp.researcher.research(text)  # warm-up: loads models
        timings = []
        for _ in range(runs):
            t = time.perf_counter()
            run = comp.researcher.run([text])
            total = (time.perf_counter() - t) * 1000
            results, tm = run.results[0], run.timings
            timings.append(
                {
                    "querygen": tm.querygen_ms,
                    "retrieval": tm.retrieval_ms,
                    "rerank": tm.rerank_ms,
                    "total": total,
                }
            )
        report["generators"][gen] = {
            "queries": [qe.query.text for qe in results],
            "evidence": [[f"{e.title}: {e.text[:80]}" for e in qe.evidence] for qe in results],
            "median_ms": {
                k: round(statistics.median(t[k] for t in timings), 1) for k in timings[0]
            },
        }
        shared = comp
    return report


BENCHMARK = Benchmark("research", "queries per generator and research latency by stage")


def add_cli_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", nargs="?", default=DEFAULT_PASSAGE)
    p.add_argument("--index", default=None)
    p.add_argument("--generators", default="sentence,entity,llm")
    option(p, "--runs", int, 5, "timed runs per generator (median reported)")
    p.add_argument("--out", default="runs/bench")
    config_flags(p)
    p.add_argument("-v", "--verbose", action="store_true")


def main(args: argparse.Namespace) -> dict[str, Any]:
    from retrieval.files import write_text

    if args.runs < 1:
        raise ValueError(f"--runs must be >= 1, got {args.runs}")
    gens = [g.strip() for g in args.generators.split(",") if g.strip()]
    report = bench_research(args.text, args.index, gens, args.runs, args.config, args.overrides)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "bench_research.json", json.dumps(report, indent=2, ensure_ascii=False))
    return report


def render(report: dict[str, Any]) -> str:
    """Each generator's queries, each with its first evidence."""
    lines = []
    for gen, row in report["generators"].items():
        lines.append(f"\n== {gen}: {len(row['queries'])} queries, median ms {row['median_ms']}")
        for q, ev in zip(row["queries"], row["evidence"], strict=True):
            lines.append(f"  ? {q}\n    -> {ev[0] if ev else '(no evidence)'}")
    return "\n".join(lines)
