"""``purr bench cold-start``: the wall time of a whole ``purr edit`` process, as a user meets it.

Each run is a new process (imports, model loads, the edit, printing, exit) with warm caches: one
unmeasured run first makes sure the default index and the converted models exist. The baseline,
measured in the same run and interleaved with it, is a process that only imports the libraries
every edit needs (torch, spaCy, and transformers with its model-loading code), the floor no
edit can go below without dropping one of them. Reports medians and min-max over ``--runs``
runs, the ratio to the baseline, and the stage timings of the edit (``timings_ms``) from its
``--json`` output.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from retrieval.files import save_png
from training.bench.base import Benchmark, config_flags, out_flag, save_report

DEFAULT_TEXT = (
    "The Eiffel Tower is a lattice tower in Paris. It was designed and built by "
    "Thomas Edison's company from 1887 to 1889."
)

BASELINE = "import torch, spacy, transformers.modeling_utils"


def _timed(cmd: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd[:3])} ... exited {done.returncode}: {done.stderr[-800:]}"
        )
    return seconds, done.stdout


def spread(values: list[float]) -> dict[str, float]:
    """Median and range of a list of seconds.

    >>> spread([3.0, 1.0, 2.0])
    {'median': 2.0, 'min': 1.0, 'max': 3.0}
    """
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def bench_cold_start(
    text: str, runs: int, extra: list[str], progress: bool = True
) -> dict[str, Any]:
    from tqdm.auto import tqdm

    edit = [sys.executable, "-m", "serve.cli", "edit", text, "--json", *extra]
    base = [sys.executable, "-c", BASELINE]
    _, first = _timed(edit)  # warm the caches (index, conversions, merges); not measured
    edit_s, base_s, stages, statuses = [], [], [], []
    for _ in tqdm(range(runs), desc="cold start", unit="run", disable=not progress):
        seconds, out = _timed(edit)
        result = json.loads(out)
        edit_s.append(seconds)
        stages.append(result["timings_ms"])
        statuses.append(result["status"])
        base_s.append(_timed(base)[0])
    names = sorted({k for s in stages for k in s})
    return {
        "text": text,
        "runs": runs,
        "status": statuses,
        "edit_s": spread(edit_s),
        "baseline_s": spread(base_s),
        "baseline": f"python -c '{BASELINE}'",
        "ratio_to_baseline": round(statistics.median(edit_s) / statistics.median(base_s), 2),
        "stage_ms_median": {
            n: round(statistics.median(s.get(n, 0.0) for s in stages)) for n in names
        },
        "edit_runs_s": [round(x, 3) for x in edit_s],
        "baseline_runs_s": [round(x, 3) for x in base_s],
        "revised": json.loads(first)["revised"],
    }


def plot(report: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3))
    ax.boxplot([report["edit_runs_s"], report["baseline_runs_s"]], vert=False)
    ax.set_yticks([1, 2], ["purr edit", "imports only"])
    ax.set_xlabel("seconds per process (warm caches)")
    ax.set_title(f"cold start, {report['runs']} runs: median {report['edit_s']['median']:.2f} s")
    fig.tight_layout()
    save_png(fig, png)
    plt.close(fig)


BENCHMARK = Benchmark("cold-start", "wall time of a whole `purr edit` process (warm caches)")


def add_cli_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--text", default=DEFAULT_TEXT, help="the passage (default: the README's)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--index", default=None)
    config_flags(p)
    out_flag(p, "cold-start")


def main(args: argparse.Namespace) -> dict[str, Any]:
    if args.runs < 1:
        raise ValueError(f"--runs must be >= 1, got {args.runs}")
    extra = ["--config", args.config, *(f"--set={o}" for o in args.overrides)]
    if args.index:
        extra += ["--index", args.index]
    report = bench_cold_start(args.text, args.runs, extra)
    save_report(report, args.report_file, plot)
    return report
