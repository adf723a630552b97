"""``purr bench evidence``: research alone on answers with gold answers, under several
configurations in one run: research p50 and how often the evidence holds a gold answer.

Each ``--variant NAME=KEY=VALUE;KEY=VALUE`` is one configuration (the first is the baseline;
``NAME=`` alone is the configuration as given). Every row's research runs ``--runs`` times per
variant; its time is the median of its runs, and the variant's p50 is the median over rows,
with the ratio to the baseline's. Measured on rows with ``answers`` and ``evidence_title``
(``purr data real-errors``): a gold answer in the evidence (the kept snippets), the gold page
among the evidence's titles, and rows whose evidence is the baseline's. JSON and a PNG.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from training.args import option
from training.bench.base import Benchmark, config_flags, out_flag, save_report
from training.figures import save_figure

BENCHMARK = Benchmark(
    "evidence", "research p50 and gold answers in the evidence, per configuration"
)


def parse_variant(spec: str) -> tuple[str, list[str]]:
    """``NAME=KEY=VALUE;KEY=VALUE`` -> name and overrides.

    >>> parse_variant("student=rerank.model=x;research.rerank_depth=6")
    ('student', ['rerank.model=x', 'research.rerank_depth=6'])
    >>> parse_variant("default=")
    ('default', [])
    """
    name, sep, sets = spec.partition("=")
    if not sep or not name:
        raise ValueError(f"--variant takes NAME=KEY=VALUE;KEY=VALUE (or NAME=), got {spec!r}")
    return name, [s for s in sets.split(";") if s.strip()]


def gold_answer(evidence: list[Any], answers: list[str]) -> bool:
    from training.data.real_errors import contains_answer

    return any(contains_answer(e.text, a) for e in evidence for a in answers)


def run_variant(rows: list[dict], overrides: list[str], args: argparse.Namespace) -> dict:
    from tqdm.auto import tqdm

    from editor.config import load_config
    from editor.factory import Components
    from editor.research.researcher import unique_evidence

    comp = Components(load_config(args.config, overrides), index_path=args.index, progress=False)
    researcher = comp.researcher
    researcher.research(rows[0]["text"], rows[0].get("context"))  # loads the models
    times: list[list[float]] = [[] for _ in rows]
    kept: list[list[Any]] = [[] for _ in rows]
    for _ in tqdm(range(args.runs), desc="runs", leave=False):
        for i, row in enumerate(rows):
            t = time.perf_counter()
            results = researcher.research(row["text"], row.get("context"))
            times[i].append((time.perf_counter() - t) * 1000)
            kept[i] = unique_evidence(results)
    per_row = [statistics.median(t) for t in times]
    return {
        "overrides": overrides,
        "research_p50_ms": round(statistics.median(per_row), 1),
        "research_mean_ms": round(float(np.mean(per_row)), 1),
        "gold_answer": sum(gold_answer(k, r["answers"]) for k, r in zip(kept, rows, strict=True)),
        "gold_page": sum(
            any(e.title == r["evidence_title"] for e in k) for k, r in zip(kept, rows, strict=True)
        ),
        "evidence": [[e.id for e in k] for k in kept],
    }


def main(args: argparse.Namespace) -> dict[str, Any]:
    from tqdm.auto import tqdm

    if args.runs < 1:
        raise ValueError(f"--runs must be >= 1, got {args.runs}")
    with Path(args.data).open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    rows = [r for r in rows if r.get("answers") and r.get("evidence_title")][: args.n]
    if not rows:
        raise ValueError(f"{args.data} has no rows with answers and evidence_title")
    variants = [parse_variant(v) for v in args.variant] or [("default", [])]
    report: dict[str, Any] = {"data": args.data, "rows": len(rows), "runs": args.runs}
    runs = {}
    for name, overrides in tqdm(variants, desc="variants"):
        runs[name] = run_variant(rows, list(args.overrides) + overrides, args)
    base = runs[variants[0][0]]
    for run in runs.values():
        run["ratio_to_baseline"] = round(run["research_p50_ms"] / base["research_p50_ms"], 3)
        run["same_evidence_as_baseline"] = sum(
            a == b for a, b in zip(run["evidence"], base["evidence"], strict=True)
        )
    report["variants"] = runs
    save_report(report, args.report_file, plot)
    return report


def plot(report: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(report["variants"])
    runs = [report["variants"][n] for n in names]
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(names)), 4))
    bars = ax.bar(names, [r["research_p50_ms"] for r in runs], color="tab:blue")
    for bar, r in zip(bars, runs, strict=True):
        ax.annotate(
            f"gold answer {r['gold_answer']}/{report['rows']}",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_ylabel("research p50 (ms)")
    ax.set_title(f"research on {report['rows']} answers: time and gold answers in the evidence")
    save_figure(fig, png)


def render(report: dict[str, Any]) -> str:
    """The summary without each row's evidence ids (the --out file keeps them)."""
    slim = {
        **report,
        "variants": {
            k: {x: y for x, y in v.items() if x != "evidence"}
            for k, v in report["variants"].items()
        },
    }
    return json.dumps(slim, indent=2)


def add_cli_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, help="JSONL rows with text, answers, evidence_title")
    p.add_argument("--index", default=None, help="the index to research (default: Wikipedia's)")
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        help="NAME=KEY=VALUE;KEY=VALUE (repeatable; the first is the baseline)",
    )
    option(p, "--n", int, 1000, "rows at most")
    option(p, "--runs", int, 3, "researches of each row per variant")
    config_flags(p)
    out_flag(p, "evidence")
