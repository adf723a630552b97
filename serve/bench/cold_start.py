"""``purr bench cold-start``: the wall time of a whole ``purr edit`` process, as a user meets it.

Each run is a new process (imports, model loads, the edit, printing, exit) with warm caches: one
unmeasured run first makes sure the default index and the ONNX graphs exist. Two baselines run
in the same loop, interleaved with the edit: a bare interpreter (``python -c pass``) and a
process that only imports the CLI (``import serve.cli``). The phase table splits the median edit
process into: the interpreter, importing the CLI (the baselines), loading the models and the
index (the edit's ``prepare``), the edit itself (parse, research, revision, report: the first
inference of every model included) and the rest (arguments, the config, printing, exit). Reports
medians and min-max over ``--runs`` runs and the ratio to each baseline.
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

from training.bench.base import Benchmark, config_flags, out_flag, save_report
from training.figures import save_figure

DEFAULT_TEXT = (
    "The Eiffel Tower is a lattice tower in Paris. It was designed and built by "
    "Thomas Edison's company from 1887 to 1889."
)

BASELINES = {"interpreter": "pass", "CLI import": "import serve.cli"}
EDIT_STAGES = ("parse", "research", "revision", "report")


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


def phases(edit_s: float, base: dict[str, float], stages: dict[str, float]) -> dict[str, float]:
    """The median edit process split into phases, in seconds (see the module doc).

    >>> phases(3.0, {"interpreter": 0.1, "CLI import": 0.5}, {"prepare": 1500, "research": 600})
    {'interpreter': 0.1, 'CLI import': 0.4, 'load models and index': 1.5, 'edit': 0.6, 'rest': 0.4}
    """
    load = stages.get("prepare", 0.0) / 1000
    edit = sum(stages.get(n, 0.0) for n in EDIT_STAGES) / 1000
    interpreter, cli = base["interpreter"], base["CLI import"]
    out = {
        "interpreter": interpreter,
        "CLI import": max(cli - interpreter, 0.0),
        "load models and index": load,
        "edit": edit,
        "rest": max(edit_s - cli - load - edit, 0.0),
    }
    return {k: round(v, 3) for k, v in out.items()}


def bench_cold_start(
    text: str, runs: int, extra: list[str], progress: bool = True
) -> dict[str, Any]:
    from tqdm.auto import tqdm

    edit = [sys.executable, "-m", "serve.cli", "edit", text, "--json", *extra]
    bases = {name: [sys.executable, "-c", code] for name, code in BASELINES.items()}
    _, first = _timed(edit)  # warm the caches (index, ONNX graphs); not measured
    edit_s, stages, statuses = [], [], []
    base_s: dict[str, list[float]] = {name: [] for name in bases}
    for _ in tqdm(range(runs), desc="cold start", unit="run", disable=not progress):
        seconds, out = _timed(edit)
        result = json.loads(out)
        edit_s.append(seconds)
        stages.append(result["timings_ms"])
        statuses.append(result["status"])
        for name, cmd in bases.items():
            base_s[name].append(_timed(cmd)[0])
    names = sorted({k for s in stages for k in s})
    stage_ms = {n: round(statistics.median(s.get(n, 0.0) for s in stages)) for n in names}
    median = statistics.median(edit_s)
    base_median = {name: statistics.median(v) for name, v in base_s.items()}
    return {
        "text": text,
        "runs": runs,
        "status": statuses,
        "edit_s": spread(edit_s),
        "baselines": {
            name: {"command": f"python -c '{BASELINES[name]}'", **spread(v)}
            for name, v in base_s.items()
        },
        "ratio_to_baseline": {
            name: round(median / max(m, 1e-9), 2) for name, m in base_median.items()
        },
        "phases_s": phases(median, base_median, stage_ms),
        "stage_ms_median": stage_ms,
        "edit_runs_s": [round(x, 3) for x in edit_s],
        "baseline_runs_s": {name: [round(x, 3) for x in v] for name, v in base_s.items()},
        "revised": json.loads(first)["revised"],
    }


def plot(report: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (box, bar) = plt.subplots(2, 1, figsize=(6, 4.5))
    runs = [report["edit_runs_s"], *report["baseline_runs_s"].values()]
    box.boxplot(runs, vert=False)
    box.set_yticks(range(1, len(runs) + 1), ["purr edit", *report["baseline_runs_s"]])
    box.set_xlabel("seconds per process (warm caches)")
    box.set_title(f"cold start, {report['runs']} runs: median {report['edit_s']['median']:.2f} s")
    left = 0.0
    for name, seconds in report["phases_s"].items():
        bar.barh([0], [seconds], left=left, label=f"{name} {seconds:.2f} s")
        left += seconds
    bar.set_yticks([])
    bar.set_xlabel("seconds (median process, by phase)")
    bar.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.35))
    save_figure(fig, png)


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
