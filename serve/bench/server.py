"""A real ``purr serve`` process for the benchmarks, and its ``/metrics`` read back."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def scraped(url: str, prefix: str) -> dict[str, float]:
    """The server's /metrics samples whose names start with ``prefix`` (prefix dropped)."""
    import httpx

    try:
        text = httpx.get(f"{url}/metrics", timeout=10).text
    except httpx.HTTPError:
        return {}
    out = {}
    for line in text.splitlines():
        if line.startswith(prefix):
            name, _, value = line.partition(" ")
            out[name.removeprefix(prefix)] = float(value)
    return out


def start_server(
    workers: int, args: argparse.Namespace, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, str]:
    """A ``purr serve`` process with ``--workers``, the bench's config, index and deadline and
    ``env`` added to its environment, once ``/readyz`` answers; its URL."""
    import httpx

    from serve.loopback_web import free_port

    port = free_port()
    cmd = [sys.executable, "-m", "serve.cli", "serve", "--port", str(port)]
    cmd += ["--workers", str(workers), "--config", args.config]
    if args.index:
        cmd += ["--index", args.index]
    for o in args.overrides:
        cmd += ["--set", o]
    env = {**os.environ, **(env or {}), "PURR_DEADLINE_S": str(args.deadline_s)}
    if getattr(args, "malloc_arenas", None) is not None:
        env["PURR_MALLOC_ARENAS"] = str(args.malloc_arenas)
    if getattr(args, "upstream_url", None):
        env["PURR_UPSTREAM_URL"] = args.upstream_url
    if getattr(args, "api_key", None):  # the clients send it: auth and its quota in the path
        env["PURR_API_KEYS"] = args.api_key
    for pair in getattr(args, "server_env", None) or []:
        name, _, value = pair.partition("=")
        env[name] = value
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + args.start_timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace")[-2000:] if proc.stderr else ""
            raise RuntimeError(f"purr serve exited with {proc.returncode}:\n{err}")
        try:
            r = httpx.get(f"{url}/readyz", timeout=2)
            if r.status_code == 200:
                return proc, url
            if "loading" not in r.text:
                proc.terminate()
                raise RuntimeError(f"purr serve is not ready: {r.text}")
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.terminate()
    raise RuntimeError(f"purr serve was not ready within {args.start_timeout_s:g} s")
