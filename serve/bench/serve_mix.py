"""``purr bench serve --mix``: every client cycles through the four kinds of request a
deployment gets (``/v1/edit``, ``/v1/check``, ``/v1/score`` and a streamed
``/v1/chat/completions`` through a loopback upstream that streams a canned reply), and every
answer is checked: status, a stream that ends with ``[DONE]`` and every event JSON, the text
sent coming back as the ``original``. Reported per kind: requests, 200s, 5xx, 503 overloaded,
lost, p50/p99; and the server's resident memory before and after the load.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np
from fastapi import FastAPI, Request  # module level: the handler's annotations must resolve
from fastapi.responses import StreamingResponse

from serve.bench.memory import RssSampler, memory_mb
from serve.bench.server import scraped, start_server

OPS = ("edit", "check", "score", "chat")
SOURCE = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It "
    "was built from 1887 to 1889 and is 330 metres tall."
)


@contextmanager
def canned_upstream(reply: str) -> Iterator[str]:
    """An OpenAI-style upstream on loopback that streams ``reply`` (or answers it whole)."""
    from serve.loopback_web import serve_app

    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        body = await request.json()
        base = {"id": "canned", "created": 0, "model": "canned"}
        if not body.get("stream"):
            message = {"role": "assistant", "content": reply}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            return {**base, "object": "chat.completion", "choices": [choice]}

        async def events() -> Any:
            words = reply.split(" ")
            for i in range(0, len(words), 3):
                piece = " ".join(words[i : i + 3]) + (" " if i + 3 < len(words) else "")
                choice = {"index": 0, "delta": {"content": piece}, "finish_reason": None}
                yield f"data: {json.dumps({**base, 'choices': [choice]})}\n\n"
            last = {"index": 0, "delta": {}, "finish_reason": "stop"}
            yield f"data: {json.dumps({**base, 'choices': [last]})}\n\ndata: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    with serve_app(app) as url:
        yield f"{url}/v1"


def _request(op: str, text: str) -> tuple[str, dict[str, Any]]:
    if op == "edit":
        return "/v1/edit", {"text": text}
    if op == "check":
        return "/v1/check", {"text": f"{text} [1]", "sources": [{"id": 1, "text": SOURCE}]}
    if op == "score":
        return "/v1/score", {"text": text, "evidence": [SOURCE]}
    messages = [{"role": "user", "content": "Tell me about the Eiffel Tower."}]
    return "/v1/chat/completions", {"messages": messages, "stream": True}


async def _one(http: Any, url: str, op: str, text: str, timeout_s: float) -> dict[str, Any]:
    import httpx

    path, body = _request(op, text)
    rec: dict[str, Any] = {"op": op}
    t = time.perf_counter()
    try:
        if op == "chat":
            async with http.stream("POST", url + path, json=body, timeout=timeout_s) as r:
                rec["http"] = r.status_code
                lines = [line async for line in r.aiter_lines() if line.startswith("data: ")]
                if r.status_code != 200:
                    rec["error"] = (await r.aread()).decode(errors="replace")[:300] or lines[:1]
            if rec["http"] == 200:
                events = [x[6:] for x in lines]
                whole = bool(events) and events[-1] == "[DONE]"
                parsed = [json.loads(e) for e in events[:-1]] if whole else []
                rec["matched"] = whole and bool(parsed) and "purr" in parsed[-1]
        else:
            r = await http.post(url + path, json=body, timeout=timeout_s)
            rec["http"] = r.status_code
            if r.status_code == 200 and op == "edit":
                rec["matched"] = r.json().get("original") == text
            elif r.status_code == 200:
                rec["matched"] = isinstance(r.json(), dict)
            if r.status_code == 503:
                rec["code"] = r.json()["error"]["code"]
    except (httpx.HTTPError, ValueError) as e:
        rec["lost"] = f"{type(e).__name__}: {e}"
    rec["latency_s"] = time.perf_counter() - t
    return rec


def load_client(clients: int, api_key: str | None = None) -> Any:
    """The load test's HTTP client: a connection per client, the API key on every request."""
    import httpx

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.AsyncClient(limits=limits, headers=auth)


async def drive_mix(
    url: str,
    passages: list[str],
    clients: int,
    duration_s: float,
    timeout_s: float,
    api_key: str | None = None,
) -> dict[str, Any]:
    """``clients`` loops, each cycling through ``OPS`` for ``duration_s``."""
    import httpx

    records: list[dict[str, Any]] = []
    stop_at = time.monotonic() + duration_s
    counter = 0

    async def client(http: httpx.AsyncClient, k: int) -> None:
        nonlocal counter
        n = k
        while time.monotonic() < stop_at:
            counter += 1
            op = OPS[n % len(OPS)]
            records.append(await _one(http, url, op, passages[counter % len(passages)], timeout_s))
            n += 1

    async with load_client(clients, api_key) as http:
        t0 = time.perf_counter()
        await asyncio.gather(*(client(http, k) for k in range(clients)))
        wall = time.perf_counter() - t0
    return summarise_mix(records, wall, clients)


def summarise_mix(records: list[dict[str, Any]], wall_s: float, clients: int) -> dict[str, Any]:
    """Per kind of request: counts, failures and latency percentiles of the 200s.

    >>> s = summarise_mix([{"op": "edit", "http": 200, "matched": True, "latency_s": 1.0}], 2, 1)
    >>> s["by_op"]["edit"]["ok"], s["server_errors"], s["by_op"]["edit"]["p50_s"]
    (1, 0, 1.0)
    """
    by_op: dict[str, Any] = {}
    for op in OPS:
        rows = [r for r in records if r["op"] == op]
        ok = [r for r in rows if r.get("http") == 200]
        lat = np.array([r["latency_s"] for r in ok]) if ok else np.array([np.nan])
        by_op[op] = {
            "requests": len(rows),
            "ok": len(ok),
            "wrong_answer": sum(1 for r in ok if not r.get("matched")),
            "server_errors": sum(
                1 for r in rows if r.get("http", 0) >= 500 and r.get("code") != "overloaded"
            ),
            "overloaded_503": sum(1 for r in rows if r.get("code") == "overloaded"),
            "lost": sum(1 for r in rows if "lost" in r),
            "other_status": sorted({r["http"] for r in rows if r.get("http", 200) != 200}),
            "p50_s": round(float(np.percentile(lat, 50)), 3),
            "p95_s": round(float(np.percentile(lat, 95)), 3),
            "p99_s": round(float(np.percentile(lat, 99)), 3),
        }
    return {
        "clients": clients,
        "wall_s": round(wall_s, 1),
        "requests": len(records),
        "throughput_rps": round(sum(v["ok"] for v in by_op.values()) / wall_s, 3),
        "server_errors": sum(v["server_errors"] for v in by_op.values()),
        "lost": sum(v["lost"] for v in by_op.values()),
        "by_op": by_op,
    }


class Setting(NamedTuple):
    """One server's settings: its name's tail, its environment, its report fields."""

    name: str
    env: dict[str, str]
    fields: dict[str, Any]


def servers(args: argparse.Namespace) -> list[tuple[int, Setting]]:
    """A server for each ``--workers`` x ``--threads`` x ``--priority`` x ``--batching`` value
    (threads and priority only where given), in that order.

    >>> a = argparse.Namespace(workers=[2], threads=[1], priority=[], batching=["on", "off"])
    >>> [f"workers={w}{s.name}" for w, s in servers(a)]
    ['workers=2, threads=1, batching on', 'workers=2, threads=1, batching off']
    """
    out = []
    for w, t, p, b in itertools.product(
        args.workers, args.threads or [None], args.priority or [None], args.batching
    ):
        env = {"PURR_BATCH": "1" if b == "on" else "0"}  # the dynamic batcher (retrieval.batching)
        name = ""
        if t is not None:  # inference threads per model call (retrieval.settings.threads)
            env["PURR_THREADS"], name = str(t), f", threads={t}"
        if p is not None:  # the cheap lane's calls first (retrieval.lanes)
            env["PURR_PRIORITY"], name = ("1" if p == "on" else "0"), f"{name}, priority {p}"
        out.append(
            (w, Setting(f"{name}, batching {b}", env, {"threads": t, "priority": p, "batching": b}))
        )
    return out


def bench_mix(
    passages: list[str], args: argparse.Namespace, report: dict[str, Any], timeout: float
) -> dict[str, Any]:
    """``--mix``: edit, check, score and streamed chat from every client; memory before/after."""
    with canned_upstream(passages[0]) as upstream:
        args.upstream_url = upstream
        for workers, setting in servers(args):
            proc, url = start_server(workers, args, setting.env)
            try:  # warm up at full concurrency: every thread's first allocations are made
                warm = args.warmup_s if args.warmup_s is not None else args.baseline_s
                asyncio.run(drive_mix(url, passages, args.clients, warm, timeout, args.api_key))
                before = memory_mb(proc.pid, "VmRSS")
                with RssSampler(proc.pid) as rss:
                    load = asyncio.run(
                        drive_mix(url, passages, args.clients, args.duration, timeout, args.api_key)
                    )
                after = memory_mb(proc.pid, "VmRSS")
                load["research_cache"] = scraped(url, "purr_research_cache_")
                growth = after / before - 1 if before and after else None
                report["runs"][f"workers={workers}{setting.name}"] = {
                    "mix": load,
                    "workers": workers,
                    **setting.fields,
                    "warmup_s": warm,
                    "malloc_arenas": args.malloc_arenas,
                    "server_rss_mb_before": before,
                    "server_rss_mb_after": after,
                    "rss_growth": round(growth, 3) if growth is not None else None,
                    "rss_growth_second_half": rss.second_half_growth(),
                    "rss_timeline_mb": rss.samples,
                    "server_peak_rss_mb": memory_mb(proc.pid),
                }
            finally:
                proc.terminate()
                proc.wait(timeout=30)
    return report
