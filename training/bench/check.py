"""``purr bench check``: latency of checking and repairing a cited answer, warm.

A 6-sentence answer citing 5 sources (two of its citations wrong, one claim uncited, one
contradicted). After one untimed warm-up call, each operation runs ``runs`` times; the report
gives the median (p50) and the spread, and the ratio to the baseline measured in the same run:
the verifier alone scoring the answer's (cited source, sentence) pairs, the least any check
must do.

- ``check``: ``Pipeline.check`` (decontextualisation, every citation and the combinations ALCE
  needs, outcomes);
- ``check_qa``: the same with MAFE;
- ``repair``: ``Pipeline.edit`` with the sources (check, candidate search, revision, check
  after, report).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from training.args import option
from training.bench.base import Benchmark, config_flags, out_flag, save_report
from training.figures import save_figure

SOURCES = [
    {
        "id": "1",
        "title": "Eiffel Tower",
        "text": "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, "
        "France. It was constructed from 1887 to 1889 as the centerpiece of the 1889 World's "
        "Fair.",
    },
    {
        "id": "2",
        "title": "Eiffel Tower",
        "text": "The tower is 330 metres tall, about the same height as an 81-storey building, "
        "and the tallest structure in Paris.",
    },
    {
        "id": "3",
        "title": "Gustave Eiffel",
        "text": "Gustave Eiffel's company designed and built the tower, which is named after him. "
        "He also worked on the internal frame of the Statue of Liberty.",
    },
    {
        "id": "4",
        "title": "Chrysler Building",
        "text": "The Chrysler Building in New York City was completed in 1930 and surpassed the "
        "Eiffel Tower as the tallest structure in the world.",
    },
    {
        "id": "5",
        "title": "Mount Everest",
        "text": "Mount Everest is Earth's highest mountain above sea level, at 8,849 metres.",
    },
]
ANSWER = (
    "The Eiffel Tower stands on the Champ de Mars in Paris [1]. "
    "It is 300 metres tall [2]. "
    "It was named after the engineer Gustave Eiffel [5]. "
    "It was the centerpiece of the 1889 World's Fair. "
    "Eiffel also worked on the frame of the Statue of Liberty [3]. "
    "The Chrysler Building overtook it as the tallest structure in 1930 [2]."
)


def _times(fn: Callable[[], Any], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def bench_check(config: str = "default", overrides: list[str] | None = None, runs: int = 5) -> dict:
    from tqdm.auto import tqdm

    from editor.attribution.verifier import judge_batch
    from editor.citations.document import CitedDocument
    from editor.citations.sources import premise_of, read_sources
    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline
    from retrieval.sentences import split

    pipeline = Pipeline(Components(load_config(config, list(overrides or [])), progress=False))
    t = time.perf_counter()
    pipeline.check(ANSWER, SOURCES)  # warm-up: loads the models
    first = time.perf_counter() - t
    sources = {s.id: s for s in read_sources(SOURCES)}
    doc = CitedDocument.parse(ANSWER, sources)
    pairs = [(premise_of(sources[c]), s.claim) for s in doc.sentences for c in s.citations]
    ops: dict[str, Callable[[], Any]] = {
        "verifier_only": lambda: judge_batch(pipeline.attribution, pairs),
        "check": lambda: pipeline.check(ANSWER, SOURCES),
        "check_qa": lambda: pipeline.check(ANSWER, SOURCES, qa=True),
        "repair": lambda: pipeline.edit(ANSWER, sources=SOURCES),
    }
    pipeline.edit(ANSWER, sources=SOURCES)  # warm-up of the editor
    results: dict[str, Any] = {}
    for name, fn in tqdm(ops.items(), desc="bench check"):
        times = _times(fn, runs)
        results[name] = {
            "p50_s": round(statistics.median(times), 4),
            "min_s": round(min(times), 4),
            "max_s": round(max(times), 4),
            "runs": runs,
        }
    base = results["verifier_only"]["p50_s"]
    for r in results.values():
        r["ratio_to_verifier_only"] = round(r["p50_s"] / base, 2) if base else None
    return {
        "answer_sentences": len(split(ANSWER)),
        "sources": len(SOURCES),
        "citation_pairs": len(pairs),
        "first_call_s": round(first, 2),
        "results": results,
    }


def plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(report["results"])
    p50 = [report["results"][n]["p50_s"] for n in names]
    lo = [p - report["results"][n]["min_s"] for n, p in zip(names, p50, strict=True)]
    hi = [report["results"][n]["max_s"] - p for n, p in zip(names, p50, strict=True)]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.bar(names, p50, yerr=[lo, hi], capsize=4, color="tab:blue")
    ax.set_ylabel("seconds (p50, min-max)")
    ax.set_title(f"{report['answer_sentences']}-sentence answer, {report['sources']} sources, warm")
    save_figure(fig, path)


BENCHMARK = Benchmark(
    "check", "latency of purr check and citation repair: 6-sentence answer, 5 sources"
)


def add_cli_args(p: argparse.ArgumentParser) -> None:
    option(p, "--runs", int, 5, "timed runs after a warm-up (default 5)")
    config_flags(p)
    out_flag(p, "check")


def main(args: argparse.Namespace) -> dict[str, Any]:
    if args.runs < 1:
        raise ValueError(f"--runs must be >= 1, got {args.runs}")
    report = bench_check(args.config, args.overrides, args.runs)
    save_report(report, args.report_file, plot)
    return report
