"""The commands a user runs: ``purr serve-llm`` as the upstream and ``purr serve`` in front, as
separate processes; a plain httpx client gets a revised reply with a ``purr`` report, streamed
and not, and both servers shut down gracefully on SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import httpx
import pytest
from llm_helpers import free_port

# a real HTTP server, the CLI as a subprocess or a real browser
pytestmark = pytest.mark.integration

ASK = [{"role": "user", "content": "Repeat after me: The Eiffel Tower is 250 metres tall."}]
RIGHT = "The Eiffel Tower is 330 metres tall."


@contextmanager
def purr(*args: str, ready: str, env: dict | None = None) -> Iterator[subprocess.Popen]:
    import os

    proc = subprocess.Popen(
        [sys.executable, "-m", "serve.cli", *args],
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 180
    try:
        while True:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            try:
                if httpx.get(ready, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, f"{args[0]} did not get ready"
            time.sleep(0.3)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def test_serve_llm_behind_purr_serve(built_index):
    llm_port, purr_port = free_port(), free_port()
    llm = f"http://127.0.0.1:{llm_port}"
    api = f"http://127.0.0.1:{purr_port}"
    with purr(
        "serve-llm", "--port", str(llm_port), "--max-new-tokens", "24", ready=f"{llm}/v1/models"
    ) as upstream:
        with purr(
            "serve",
            "--index",
            str(built_index),
            "--port",
            str(purr_port),
            "--upstream",
            f"{llm}/v1",
            ready=f"{api}/readyz",
            env={"PURR_BATCH": "1"},  # the dynamic batcher on (off by default)
        ) as server:
            body = {"model": "smollm2-135m-instruct", "messages": ASK}
            whole = httpx.post(f"{api}/v1/chat/completions", json=body, timeout=120).json()
            content = whole["choices"][0]["message"]["content"]
            assert content.startswith(f"{RIGHT} [1]"), content
            assert whole["purr"]["status"] == "edited"

            events = []
            with httpx.stream(
                "POST", f"{api}/v1/chat/completions", json={**body, "stream": True}, timeout=120
            ) as r:
                assert r.headers["content-type"].startswith("text/event-stream")
                for line in r.iter_lines():
                    if line.startswith("data: "):
                        events.append(line.removeprefix("data: "))
            assert events[-1] == "[DONE]"
            chunks = [json.loads(e) for e in events[:-1]]
            streamed = "".join(
                c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]
            )
            assert streamed == content
            assert chunks[-1]["purr"]["revised"] == RIGHT
            _concurrent_edits_share_batches_and_get_their_own_answers(api)
        _shut_down_cleanly(server)
    _shut_down_cleanly(upstream)


def _concurrent_edits_share_batches_and_get_their_own_answers(api: str) -> None:
    """With PURR_BATCH=1 `purr serve` joins concurrent requests' model calls: each request
    still gets the answer it gets alone."""
    tower = "The Eiffel Tower in Paris was built from 1887 to 1889. It is 330 metres tall."

    def call(h: int) -> str:
        body = {"text": f"The Eiffel Tower is {h} metres tall.", "evidence": [tower]}
        return httpx.post(f"{api}/v1/edit", json=body, timeout=120).json()["revised"]

    heights = list(range(100, 106))
    alone = [call(h) for h in heights]
    with ThreadPoolExecutor(len(heights)) as pool:
        assert list(pool.map(call, heights)) == alone
    assert alone.count(RIGHT) >= len(heights) - 1  # and they are real fixes


def _shut_down_cleanly(proc: subprocess.Popen) -> None:
    # uvicorn finishes the shutdown, then re-raises SIGTERM so the exit status shows it
    log = proc.stdout.read() if proc.stdout else ""
    assert proc.returncode in (0, -signal.SIGTERM), log
    assert "Application shutdown complete." in log, log
