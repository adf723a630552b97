"""Shared helpers of the LLM tests: the packaged SmolLM2 loaded once per process, and a real
uvicorn server on a free loopback port."""

from __future__ import annotations

import functools
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI

from editor.llm.transformers_backend import TransformersBackend

SMOLLM = "packaged:smollm2-135m-instruct"


@functools.cache
def smollm() -> TransformersBackend:
    """SmolLM2-135M-Instruct, greedy by default (converted once into the cache, then ~3 s)."""
    backend = TransformersBackend(SMOLLM, max_new_tokens=16, temperature=0.0)
    backend.load()
    return backend


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Run ``app`` with uvicorn in a background thread; yields its base URL."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"uvicorn did not start on port {port}")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
