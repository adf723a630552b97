"""``purr bench serve``: load on loopback against a real ``purr serve`` process.

For each ``--workers`` value a server is started (its own process), warmed up, then driven by
one client for ``--baseline-s`` seconds (the baseline) and by ``--clients`` concurrent clients
for ``--duration`` seconds. Every response is checked against its request: status 200, the
``X-Request-ID`` echoed, ``original`` equal to the text sent. Reported: throughput, latency
p50/p95/p99, errors, lost (no response), mixed-up responses, degraded results, the server's peak
memory, and throughput relative to the one-client baseline. JSON to stdout and ``--out``; a PNG
of the latency distribution beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from serve.bench.memory import memory_mb
from serve.bench.server import start_server
from training.args import option, switch
from training.bench.base import Benchmark, config_flags, out_flag, save_report
from training.figures import save_figure

if TYPE_CHECKING:
    import httpx


async def drive(
    url: str,
    passages: list[str],
    clients: int,
    duration_s: float,
    timeout_s: float,
    api_key: str | None = None,
) -> dict[str, Any]:
    """``clients`` loops posting passages for ``duration_s``; every answer checked."""
    import httpx

    from serve.bench.serve_mix import load_client

    counter = 0
    records: list[dict[str, Any]] = []
    stop_at = time.monotonic() + duration_s

    async def client(http: httpx.AsyncClient) -> None:
        nonlocal counter
        while time.monotonic() < stop_at:
            i = counter
            counter += 1
            text = passages[i % len(passages)]
            rid = f"bench-{i}"
            t = time.perf_counter()
            rec: dict[str, Any] = {"i": i, "started": t}
            try:
                r = await http.post(
                    f"{url}/v1/edit",
                    json={"text": text},
                    headers={"X-Request-ID": rid},
                    timeout=timeout_s,
                )
                rec["latency_s"] = time.perf_counter() - t
                rec["http"] = r.status_code
                if r.status_code == 200:
                    body = r.json()
                    rec["matched"] = (
                        body.get("original") == text and r.headers.get("x-request-id") == rid
                    )
                    rec["status"] = body.get("status")
            except httpx.HTTPError as e:
                rec["latency_s"] = time.perf_counter() - t
                rec["lost"] = f"{type(e).__name__}: {e}"
            records.append(rec)

    async with load_client(clients, api_key) as http:
        t0 = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(clients)))
        wall = time.perf_counter() - t0
    return summarise(records, wall, clients)


def summarise(records: list[dict[str, Any]], wall_s: float, clients: int) -> dict[str, Any]:
    """Throughput and latency percentiles of the answered requests, and every failure kind.

    >>> s = summarise([{"latency_s": 1.0, "http": 200, "matched": True, "status": "edited"}], 2.0, 1)
    >>> s["throughput_rps"], s["errors"], s["latency_s"]["p50"]
    (0.5, 0, 1.0)
    """
    ok = [r for r in records if r.get("http") == 200]
    lat = np.array([r["latency_s"] for r in ok]) if ok else np.array([np.nan])
    statuses: dict[str, int] = {}
    for r in ok:
        statuses[r.get("status") or "?"] = statuses.get(r.get("status") or "?", 0) + 1
    return {
        "clients": clients,
        "wall_s": round(wall_s, 2),
        "requests": len(records),
        "ok": len(ok),
        "throughput_rps": round(len(ok) / wall_s, 3),
        "latency_s": {
            p: round(float(np.percentile(lat, q)), 3)
            for p, q in (("p50", 50), ("p95", 95), ("p99", 99))
        },
        "errors": sum(1 for r in records if "http" in r and r["http"] != 200),
        "lost": sum(1 for r in records if "lost" in r),
        "mixed_up": sum(1 for r in ok if not r.get("matched")),
        "result_status": statuses,
        "latencies": [round(float(x), 4) for x in lat if not np.isnan(x)],
    }


def bench_serve(passages: list[str], args: argparse.Namespace) -> dict[str, Any]:
    from tqdm.auto import tqdm

    report: dict[str, Any] = {
        "passages": len(passages),
        "clients": args.clients,
        "duration_s": args.duration,
        "baseline_s": args.baseline_s,
        "cpus": os.cpu_count(),
        "runs": {},
    }
    timeout = args.deadline_s + 30
    if args.mix:
        from serve.bench.serve_mix import bench_mix

        return bench_mix(passages, args, report, timeout)
    for workers in tqdm(args.workers, desc="server configurations"):
        proc, url = start_server(workers, args)
        try:
            asyncio.run(
                drive(url, passages, 1, min(5.0, args.baseline_s), timeout, args.api_key)
            )  # warm
            base = asyncio.run(drive(url, passages, 1, args.baseline_s, timeout, args.api_key))
            load = asyncio.run(
                drive(url, passages, args.clients, args.duration, timeout, args.api_key)
            )
            ratio = load["throughput_rps"] / base["throughput_rps"] if base["ok"] else None
            report["runs"][str(workers)] = {
                "baseline_1_client": base,
                "load": load,
                "throughput_vs_baseline": round(ratio, 2) if ratio else None,
                "server_peak_rss_mb": memory_mb(proc.pid),
            }
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return report


def plot(report: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    mixes = [(name, run) for name, run in report["runs"].items() if "mix" in run]
    for k, (name, run) in enumerate(mixes):  # --mix: p50 and p95 per kind, one colour a server
        ops = list(run["mix"]["by_op"])
        x = np.arange(len(ops)) + (k - (len(mixes) - 1) / 2) * 0.8 / len(mixes)
        p50 = [run["mix"]["by_op"][op]["p50_s"] for op in ops]
        p95 = [run["mix"]["by_op"][op]["p95_s"] for op in ops]
        label = f"{name}: {run['mix']['throughput_rps']:.2f} req/s"
        bars = ax.bar(x, p95, 0.8 / len(mixes), alpha=0.35, label=f"{label} (p95)")
        ax.bar(x, p50, 0.8 / len(mixes), color=bars[0].get_facecolor()[:3], label=f"{label} (p50)")
        ax.set_xticks(np.arange(len(ops)), ops)
        ax.set_ylabel("latency (s)")
    for workers, run in report["runs"].items():
        if "mix" in run:
            continue
        for phase, style in (("baseline_1_client", "--"), ("load", "-")):
            lat = np.sort(run[phase]["latencies"])
            if len(lat):
                label = f"workers={workers}, {run[phase]['clients']} client(s)"
                ax.plot(lat, np.arange(1, len(lat) + 1) / len(lat), style, label=label)
    if any("mix" in run for run in report["runs"].values()):
        ax.set_xlabel("kind of request")
        ax.set_title("mixed load on loopback: p50 (solid) and p95 (pale) per kind")
    else:
        ax.set_xlabel("latency (s)")
        ax.set_ylabel("share of requests")
        ax.set_title("POST /v1/edit latency on loopback (CDF)")
    ax.grid(alpha=0.3)
    ax.legend()
    save_figure(fig, png)


def drop_latencies(o: Any) -> Any:
    if isinstance(o, dict):
        return {k: drop_latencies(v) for k, v in o.items() if k != "latencies"}
    return o


BENCHMARK = Benchmark("serve", "load test of purr serve on loopback (concurrent clients)")


def add_cli_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--clients", type=int, default=16)
    option(p, "--duration", float, 60, "seconds of load")
    option(p, "--baseline-s", float, 20, "seconds of the 1-client baseline")
    p.add_argument("--workers", default="2", help="comma-separated server --workers values")
    option(p, "--n", int, 40, "distinct passages sent in turn")
    p.add_argument("--data", default=None, help="JSONL with a 'text' field (default: planted set)")
    option(p, "--deadline-s", float, 120, "server PURR_DEADLINE_S")
    p.add_argument("--start-timeout-s", type=float, default=900)
    p.add_argument("--index", default=None)
    switch(
        p,
        "--mix",
        "each client cycles edit, check, score and streamed chat (through a loopback "
        "upstream); reports 5xx per kind and the server's memory before and after",
    )
    p.add_argument(
        "--batching",
        default="on,off",
        help="--mix: the dynamic batcher on, off or both (a server each, in this order)",
    )
    p.add_argument(
        "--priority",
        default="",
        help="--mix: the cheap lane's model calls first (PURR_PRIORITY) on, off or both, a "
        "server each (default: the server's own)",
    )
    p.add_argument(
        "--threads",
        default="",
        help="--mix: comma-separated PURR_THREADS values, a server each (inference threads per "
        "model call; default and 0: the server's own, the cores shared between its workers)",
    )
    p.add_argument(
        "--server-env",
        action="append",
        default=[],
        help="NAME=VALUE for every server started (repeatable), e.g. PURR_RESEARCH_CACHE=0",
    )
    option(
        p,
        "--warmup-s",
        float,
        None,
        "--mix: seconds of load at full concurrency before memory is measured "
        "(default --baseline-s)",
    )
    p.add_argument(
        "--api-key",
        default=None,
        help="the server's one API key (PURR_API_KEYS), sent by every client: measures the key "
        "check and its quota (PURR_KEY_PER_MINUTE, PURR_KEY_CONCURRENT from the environment)",
    )
    option(
        p,
        "--malloc-arenas",
        int,
        None,
        "the server's PURR_MALLOC_ARENAS (0: glibc's default; unset: the server's own)",
    )
    config_flags(p)
    out_flag(p, "serve")


def main(args: argparse.Namespace) -> dict[str, Any]:
    from training.bench.edit import bench_passages

    if args.clients < 1 or args.duration <= 0 or args.baseline_s <= 0:
        raise ValueError("--clients must be >= 1 and --duration, --baseline-s > 0")
    args.workers = [int(w) for w in str(args.workers).split(",") if w.strip()]
    args.batching = [b.strip() for b in str(args.batching).split(",") if b.strip()]
    if not args.batching or set(args.batching) - {"on", "off"}:
        raise ValueError(f"--batching takes on, off or on,off; got {args.batching}")
    args.priority = [b.strip() for b in str(args.priority).split(",") if b.strip()]
    if set(args.priority) - {"on", "off"}:
        raise ValueError(f"--priority takes on, off or on,off; got {args.priority}")
    args.threads = [int(t) for t in str(args.threads).split(",") if t.strip()]
    if (args.threads or args.priority) and not args.mix:
        raise ValueError("--threads and --priority compare servers under --mix; add --mix")
    named = {pair.partition("=")[0] for pair in args.server_env}
    for flag, env in (("--threads", "PURR_THREADS"), ("--priority", "PURR_PRIORITY")):
        if getattr(args, flag[2:]) and env in named:
            raise ValueError(f"{flag} sets {env} for each server; drop it from --server-env")
    texts = [p if isinstance(p, str) else p[0] for p in bench_passages(args.data, args.n)]
    report = bench_serve(texts, args)
    save_report(report, args.report_file, plot, indent=None)  # the file keeps every latency
    return report


def render(report: dict[str, Any]) -> str:
    """The summary without the per-request latencies (the --out file keeps them)."""
    return json.dumps(drop_latencies(report), indent=2)
