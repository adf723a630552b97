"""``purr serve`` as a process: during warm-up an edit request gets 503 with Retry-After at once
(or waits when it asks to), and on SIGTERM every request in flight is answered before exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest
from helpers import CONTRACT_KEYS
from llm_helpers import free_port

# a real HTTP server, the CLI as a subprocess
pytestmark = pytest.mark.integration

BODY = {
    "text": "The Eiffel Tower was completed in 1887.",
    "evidence": ["The Eiffel Tower was completed in 1889 for the World's Fair."],
}


def _serve(index, port: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "serve.cli", "serve", "--index", str(index), "--port", str(port)]
        + ["--workers", "2", "--grace", "60"],
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_for(url: str, proc: subprocess.Popen, status: int | None = None) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        try:
            r = httpx.get(url, timeout=2)
            if status is None or r.status_code == status:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"{url} did not answer in time")


def test_warmup_answers_503_with_retry_after_and_sigterm_drains_requests(built_index):
    port = free_port()
    api = f"http://127.0.0.1:{port}"
    proc = _serve(built_index, port)
    try:
        _wait_for(f"{api}/healthz", proc)  # up, still loading the models
        waited: dict = {}

        def wait_for_ready() -> None:
            body = {**BODY, "options": {"wait_for_ready": True}}
            waited["r"] = httpx.post(f"{api}/v1/edit", json=body, timeout=300)

        waiter = threading.Thread(target=wait_for_ready)
        waiter.start()
        t = time.monotonic()
        early = httpx.post(f"{api}/v1/edit", json=BODY, timeout=300)
        answered_s = time.monotonic() - t
        still_loading = httpx.get(f"{api}/readyz", timeout=5).status_code == 503
        assert still_loading, "warm-up ended before the check; nothing was tested"
        assert early.status_code == 503, early.text
        assert early.headers["retry-after"].isdigit()
        assert early.json()["error"]["code"] == "not_ready"
        assert "wait_for_ready" in early.json()["error"]["message"]
        print(f"warm-up 503 answered in {answered_s * 1000:.0f} ms")
        waiter.join(timeout=300)
        assert waited["r"].status_code == 200, waited["r"].text  # it waited instead
        assert waited["r"].json()["revised"] == BODY["evidence"][0].split(" for")[0] + "."

        _wait_for(f"{api}/readyz", proc, 200)
        answers: list[httpx.Response | Exception] = []

        def one() -> None:
            try:
                answers.append(httpx.post(f"{api}/v1/edit", json=BODY, timeout=300))
            except Exception as e:  # noqa: BLE001 - recorded and asserted below
                answers.append(e)

        threads = [threading.Thread(target=one) for _ in range(4)]
        for th in threads:
            th.start()
        time.sleep(0.5)  # all four in flight: two editing, two queued
        proc.send_signal(signal.SIGTERM)
        for th in threads:
            th.join(timeout=300)
        assert len(answers) == 4
        for a in answers:
            assert isinstance(a, httpx.Response), a
            assert a.status_code == 200 and CONTRACT_KEYS <= set(a.json()), a
            assert a.json()["status"] == "edited"
        assert proc.wait(timeout=120) in (0, -signal.SIGTERM)
        log = proc.stdout.read() if proc.stdout else ""
        assert "Application shutdown complete." in log, log
        assert "models loaded and index open" in log  # the line the next test must not see
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sigterm_during_warmup_exits_without_waiting_for_it(built_index):
    port = free_port()
    proc = _serve(built_index, port)
    try:
        _wait_for(f"http://127.0.0.1:{port}/healthz", proc)
        assert httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 503
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) in (0, -signal.SIGTERM)
        log = proc.stdout.read() if proc.stdout else ""
        assert "Application shutdown complete." in log, log
        assert "models loaded and index open" not in log  # it did not wait for the warm-up
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
