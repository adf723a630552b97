"""Quotas per API key: requests per minute and requests in flight, so one client cannot use
every worker.

``KeyLimits`` is a pure ASGI middleware over the ``/v1`` routes. It finds which of the server's
keys the request's bearer names (``match_key``: every key compared, each in constant time, so
neither timing nor order tells which key was close), and refuses a request over its key's quota
with 429, code ``rate_limited``, and ``Retry-After`` (the seconds until the oldest request of the
last minute leaves it; 1 for the limit in flight), before the body is read. A request with no or
a wrong key passes on to the routes, which answer 401. ``/metrics`` counts requests and refusals
by key, named by a hash of it (``key_id``), never by the key.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from types import SimpleNamespace
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from serve.errors import send_error
from serve.metrics import Metrics


def key_id(key: str) -> str:
    """The name of a key in metrics and logs: 12 hex digits of its SHA-256, never the key.

    >>> key_id("sk-secret")
    'sha256:746b4ad1ca91'
    """
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()[:12]


def match_key(given: str, keys: Iterable[str]) -> str | None:
    """The key of ``keys`` that ``given`` is, or None. Each comparison is constant-time over
    digests of equal length, and every key is compared, whichever matches.

    >>> match_key("b", ["a", "b"]), match_key("c", ["a", "b"])
    ('b', None)
    """
    digest = hashlib.sha256(given.encode()).digest()
    found = None
    for k in keys:
        if hmac.compare_digest(digest, hashlib.sha256(k.encode()).digest()):
            found = k
    return found


class Quota:
    """Requests per minute (a sliding window of the last 60 s) and requests in flight, per key.
    Thread-safe; ``clock`` is for tests."""

    def __init__(
        self,
        per_minute: int | None,
        concurrent: int | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_minute is not None and per_minute < 1 or concurrent is not None and concurrent < 1:
            raise ValueError("per-key limits must be >= 1 (or None for no limit)")
        self.per_minute = per_minute
        self.concurrent = concurrent
        self.clock = clock
        self._recent: dict[str, deque[float]] = {}
        self._inflight: dict[str, int] = {}
        self._lock = threading.Lock()

    def acquire(self, key: str) -> tuple[str, int] | None:
        """None when ``key`` may send a request now (counted until ``release``); else which
        limit refused it (``per_minute`` or ``concurrent``) and the seconds to wait."""
        now = self.clock()
        with self._lock:
            recent = self._recent.setdefault(key, deque())
            while recent and recent[0] <= now - 60:
                recent.popleft()
            if self.per_minute is not None and len(recent) >= self.per_minute:
                return "per_minute", max(1, math.ceil(recent[0] + 60 - now))
            if self.concurrent is not None and self._inflight.get(key, 0) >= self.concurrent:
                return "concurrent", 1
            recent.append(now)
            self._inflight[key] = self._inflight.get(key, 0) + 1
            return None

    def release(self, key: str) -> None:
        with self._lock:
            self._inflight[key] = max(0, self._inflight.get(key, 0) - 1)


class KeyLimits:
    """Applies ``quota`` to requests under ``/v1/`` that carry one of ``keys`` (module doc)."""

    def __init__(
        self,
        app: ASGIApp,
        keys: set[str],
        quota: Quota,
        metrics: Metrics,
        openapi: Callable[[], dict[str, Any]],
    ) -> None:
        self.app = app
        self.openapi = openapi  # the app's routes, to name a refused request's route
        self._paths: set[str] | None = None
        self.keys = keys
        self.quota = quota
        self.metrics = metrics
        self.ids = {k: key_id(k) for k in keys}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope.get("path", "").startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        key = match_key(bearer(scope), self.keys)
        if key is None:
            await self.app(scope, receive, send)  # the routes answer 401
            return
        name = self.ids[key]
        refused = self.quota.acquire(key)
        self.metrics.key_requests.labels(name).inc()
        if refused is not None:
            limit, wait = refused
            self.metrics.key_refused.labels(name, limit).inc()
            if self._paths is None:
                self._paths = set(self.openapi().get("paths", {}))
            if scope["path"] in self._paths:  # Guard names the request by its route
                scope["route"] = SimpleNamespace(path=scope["path"])
            await _too_many(send, limit, wait, self.quota)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.quota.release(key)


def bearer(scope: Scope) -> str:
    """The bearer token of an ASGI request's Authorization header ("" without one)."""
    for name, value in scope.get("headers") or []:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return ""


async def _too_many(send: Send, limit: str, wait: int, quota: Quota) -> None:
    what = (
        f"this API key sent {quota.per_minute} requests in the last minute, its limit"
        if limit == "per_minute"
        else f"this API key has {quota.concurrent} requests in flight, its limit"
    )
    message = f"{what}; retry after {wait} s (PURR_KEY_{limit.upper()})"
    await send_error(send, 429, message, "rate_limited", [(b"retry-after", str(wait).encode())])
