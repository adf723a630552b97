"""``purr bench ray``: batch editing on a local Ray cluster against the plain ``purr edit
--input``, in the same run, and a run whose worker process is killed mid-way.

Each run is a whole ``purr edit`` process over the same rows (start-up, model loading and the
cluster's start included), timed by the wall clock: rows per minute is what a user waits for.
The killed run SIGKILLs one actor process once a quarter of the rows are written, then checks
the output against the input: every id once, in input order, and the same revisions as the
plain run.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from training.args import option
from training.bench.base import Benchmark, out_flag, save_report
from training.figures import save_figure


def _purr(*args: str, log: Path) -> subprocess.Popen:
    """``purr ARGS``: the summary JSON on a pipe, the progress and notices into ``log`` (a
    pipe nobody reads while waiting would fill and stall the child)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    with open(log, "w", encoding="utf-8") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "serve.cli", *args],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
        )


def actor_pids() -> list[int]:
    """Processes of purr's Ray actors on this machine (their title is ``ray::_Actor…``); run
    the bench where no other purr Ray job runs."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")[0].decode("utf-8", "replace")
        except OSError:
            continue
        if cmd.startswith("ray::_Actor"):
            pids.append(int(entry.name))
    return sorted(pids)


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def timed_run(
    src: Path, dst: Path, extra: list[str], kill_after: int | None = None
) -> dict[str, Any]:
    """One ``purr edit --input`` process; with ``kill_after``, one actor is killed once that
    many rows are written."""
    dst.unlink(missing_ok=True)
    t = time.perf_counter()
    log = dst.with_suffix(".log")
    proc = _purr("edit", "--input", str(src), "--output", str(dst), *extra, log=log)
    killed = None
    if kill_after is not None:
        while proc.poll() is None and killed is None:
            time.sleep(0.5)
            written = dst.read_bytes().count(b"\n") if dst.exists() else 0
            pids = actor_pids()
            if written >= kill_after and pids:
                killed = pids[-1]
                os.kill(killed, signal.SIGKILL)
    out, _ = proc.communicate()
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        tail = log.read_text("utf-8", "replace").strip()[-500:]
        raise RuntimeError(f"purr edit {' '.join(extra)} failed: {tail}")
    summary = json.loads(out)
    n = summary["written"]
    return {
        "args": " ".join(extra) or "(plain)",
        "rows": n,
        "wall_s": round(wall, 1),
        "rows_per_min": round(n / (wall / 60), 1),
        "killed_pid": killed,
        "edited": summary["edited"],
        "unchanged": summary["unchanged"],
        "degraded": summary["degraded"],
    }


def bench_ray(src: Path, work: Path, workers: list[int], batch_size: int) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    want_ids = [r["id"] for r in _rows(src)]
    plain = {"label": "plain purr edit --input", **timed_run(src, work / "plain.jsonl", [])}
    reference = {r["id"]: r["revised"] for r in _rows(work / "plain.jsonl")}
    runs = [plain]
    for n in workers:
        extra = ["--ray", "--ray-workers", str(n), "--ray-batch-size", str(batch_size)]
        run = {"label": f"--ray, {n} worker(s)", **timed_run(src, work / f"ray-{n}.jsonl", extra)}
        run["vs_plain"] = round(run["rows_per_min"] / plain["rows_per_min"], 2)
        runs.append(run)
    extra = ["--ray", "--ray-workers", str(max(workers)), "--ray-batch-size", str(batch_size)]
    killed = timed_run(src, work / "killed.jsonl", extra, kill_after=max(1, len(want_ids) // 4))
    got = _rows(work / "killed.jsonl")
    ids = [r["id"] for r in got]
    killed["lost"] = len(set(want_ids) - set(ids))
    killed["duplicated"] = len(ids) - len(set(ids))
    killed["in_input_order"] = ids == want_ids
    killed["same_revisions_as_plain"] = sum(reference.get(r["id"]) == r["revised"] for r in got)
    return {
        "input": str(src),
        "rows": len(want_ids),
        "cpus": os.cpu_count(),
        "runs": runs,
        "killed": killed,
    }


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = report["runs"]
    labels = [
        "plain"
        if r["args"] == "(plain)"
        else r["args"].split("--ray-workers ")[1].split()[0] + " Ray worker(s)"
        for r in runs
    ]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(
        labels,
        [r["rows_per_min"] for r in runs],
        color=["tab:gray"] + ["tab:blue"] * (len(runs) - 1),
    )
    ax.set_ylabel("rows per minute (wall clock)")
    k = report["killed"]
    ax.set_title(
        f"{report['rows']} rows, {report['cpus']} CPUs; killed worker: {k['lost']} lost, "
        f"{k['duplicated']} duplicated",
        fontsize=9,
    )
    save_figure(fig, path)


BENCHMARK = Benchmark(
    "ray",
    "purr edit --input on a local Ray cluster (1 and 2 workers) against the plain "
    "batch, rows per minute, and a run with a worker killed mid-way",
)


def add_cli_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input", required=True, help="JSONL rows (e.g. purr data planted --n 200)")
    p.add_argument("--workers", default="1,2", help="Ray worker counts to run (default 1,2)")
    option(p, "--batch-size", int, 4, "rows per actor call")
    out_flag(p, "ray")


def main(args: argparse.Namespace) -> dict[str, Any]:
    workers = [int(x) for x in str(args.workers).split(",") if x.strip()]
    if not workers or min(workers) < 1 or args.batch_size < 1:
        raise ValueError("--workers values and --batch-size must be >= 1")
    if not Path(args.input).is_file():
        raise ValueError(f"--input {args.input}: no such file")
    work = Path(args.out or ".") / "outputs"
    report = bench_ray(Path(args.input), work, workers, args.batch_size)
    save_report(report, args.report_file, plot)
    return report
