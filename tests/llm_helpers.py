"""Shared helpers of the LLM tests: the packaged SmolLM2 loaded once per process, and a real
uvicorn server on a free loopback port."""

from __future__ import annotations

import functools

from editor.llm.transformers_backend import TransformersBackend
from serve import loopback_web

SMOLLM = "packaged:smollm2-135m-instruct"


@functools.cache
def smollm() -> TransformersBackend:
    """SmolLM2-135M-Instruct, greedy by default (converted once into the cache, then ~3 s)."""
    backend = TransformersBackend(SMOLLM, max_new_tokens=16, temperature=0.0)
    backend.load()
    return backend


free_port = loopback_web.free_port
serve = loopback_web.serve_app
"""Run an app with uvicorn in a background thread; yields its base URL."""
