"""``purr bench schema``: schemathesis over the whole OpenAPI schema of a running ``purr serve``.

A real server (``--workers``, the given index) with a canned loopback upstream behind the chat
wrapper, then schemathesis's command line with every check but "schema-valid requests are
accepted" (limits the schema cannot state, such as batch size and text length, answer 413 by
design), ``--max-examples`` cases per operation and phase, the coverage and fuzzing phases. The
test run keeps 20 examples per operation (``tests/test_serve/test_serve_schema.py``); this is the
longer run. Reports the operations tested, the test cases generated, each failure kind with the
operations it hit, and per operation how many generated requests were accepted or rejected.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from training.args import option
from training.bench.base import Benchmark, config_flags, out_flag, save_report

BENCHMARK = Benchmark("schema", "schemathesis over every operation of a running purr serve")
EXCLUDED = "positive_data_acceptance"


def schemathesis_command() -> list[str]:
    """The schemathesis command line (a dev dependency: ``pip install -e '.[dev]'``)."""
    exe = shutil.which("schemathesis") or shutil.which("st")
    if exe is None:
        raise RuntimeError(
            "schemathesis is not installed; install the dev extra: pip install -e '.[dev]'"
        )
    return [exe]


def summarise(run: dict[str, Any]) -> dict[str, Any]:
    """The figures of a schemathesis JSON run report.

    >>> r = {"operations": {"tested": 2}, "test_cases": {"generated": 9, "with_failures": 1},
    ...      "failures": [{"code": "ST201", "title": "t", "count": 1, "operations": ["POST /a"]}],
    ...      "errors": [], "valid_rates": {"POST /a": {"coverage": {"accepted": 3, "rejected": 4}}},
    ...      "running_time": 1.5, "exit_code": 1}
    >>> s = summarise(r); s["failures"][0]["code"], s["by_operation"]["POST /a"]
    ('ST201', {'accepted': 3, 'rejected': 4})
    """
    by_op: dict[str, dict[str, int]] = {}
    for op, phases in (run.get("valid_rates") or {}).items():
        acc = sum(p.get("accepted", 0) for p in phases.values())
        rej = sum(p.get("rejected", 0) for p in phases.values())
        by_op[op] = {"accepted": acc, "rejected": rej}
    cases = run.get("test_cases") or {}
    return {
        "operations_tested": (run.get("operations") or {}).get("tested"),
        "test_cases": cases.get("generated"),
        "with_failures": cases.get("with_failures", 0),
        "failures": [
            {k: f.get(k) for k in ("code", "title", "count", "operations")}
            for f in run.get("failures") or []
        ],
        "errors": len(run.get("errors") or []),
        "by_operation": by_op,
        "schemathesis_seconds": round(float(run.get("running_time") or 0), 1),
        "exit_code": run.get("exit_code"),
    }


def run_schemathesis(url: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    cmd = [*schemathesis_command(), "run", f"{url}/openapi.json", "--checks", "all"]
    cmd += ["--exclude-checks", EXCLUDED, "-n", str(args.max_examples), "--seed", str(args.seed)]
    cmd += ["--phases", "coverage,fuzzing", "--continue-on-failure", "--no-color"]
    cmd += ["--request-timeout", str(args.request_timeout_s), "--report", "json"]
    cmd += ["--report-json-path", str(work / "run.json")]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if not (work / "run.json").is_file():
        raise RuntimeError(
            f"schemathesis wrote no report ({done.returncode}): {done.stderr[-800:]}"
        )
    out = summarise(json.loads((work / "run.json").read_text("utf-8")))
    out["command"] = " ".join(["schemathesis", *cmd[1:-2]])
    return out


def plot(report: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from training.figures import save_figure

    ops = sorted(report["by_operation"])
    fig, ax = plt.subplots(figsize=(8, 3.6))
    x = range(len(ops))
    acc = [report["by_operation"][o]["accepted"] for o in ops]
    rej = [report["by_operation"][o]["rejected"] for o in ops]
    ax.bar([i - 0.2 for i in x], acc, width=0.4, label="accepted (2xx)")
    ax.bar([i + 0.2 for i in x], rej, width=0.4, label="rejected (4xx)")
    ax.set_xticks(list(x), [o.replace("POST ", "").replace("GET ", "") for o in ops], rotation=30)
    n_fail = sum(f["count"] or 0 for f in report["failures"])
    ax.set_title(f"schemathesis: {report['test_cases']} cases, {n_fail} failures")
    ax.legend(fontsize=8)
    save_figure(fig, png)


def add_cli_args(p: argparse.ArgumentParser) -> None:
    option(p, "--max-examples", int, 100, "cases per operation and phase")
    p.add_argument("--seed", type=int, default=1)
    option(p, "--workers", int, 1, "the server's --workers")
    p.add_argument("--index", default=None, help="the server's index (default packaged)")
    p.add_argument("--request-timeout-s", type=float, default=120)
    option(p, "--deadline-s", float, 30, "server PURR_DEADLINE_S")
    p.add_argument("--start-timeout-s", type=float, default=900)
    config_flags(p)
    out_flag(p, "schema")


def main(args: argparse.Namespace) -> dict[str, Any]:
    from serve.bench.serve_mix import canned_upstream
    from serve.bench.server import start_server

    if args.max_examples < 1:
        raise ValueError("--max-examples must be >= 1")
    schemathesis_command()  # fail early, before a server starts
    args.malloc_arenas = None
    work = Path(tempfile.mkdtemp(prefix="purr-bench-schema-"))
    started = time.monotonic()
    try:
        with canned_upstream("The Eiffel Tower is a lattice tower in Paris.") as upstream:
            args.upstream_url = upstream
            proc, url = start_server(args.workers, args)
            try:
                report = run_schemathesis(url, args, work)
                report["server_alive_after"] = proc.poll() is None
            finally:
                proc.terminate()
                proc.wait(timeout=30)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report.update(max_examples=args.max_examples, seed=args.seed, python=sys.version.split()[0])
    report["wall_s"] = round(time.monotonic() - started, 1)
    save_report(report, getattr(args, "report_file", None), plot)
    return report
