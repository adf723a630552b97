"""ASGI middleware of the purr service: body-size limit, request ids and per-route metrics.

A pure ASGI middleware (not ``BaseHTTPMiddleware``) so streamed responses pass through untouched
and an oversized body is refused while it arrives, before it is read into memory.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from serve.errors import send_error
from serve.metrics import Metrics


class Guard:
    """Refuses bodies over ``max_body_bytes`` with 413 (declared or streamed), echoes or assigns
    ``X-Request-ID``, and records every HTTP request in ``metrics`` by route template."""

    def __init__(self, app: ASGIApp, metrics: Metrics, max_body_bytes: int) -> None:
        self.app = app
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = dict(scope.get("headers") or [])
        request_id = headers.get(b"x-request-id", b"").decode("latin-1")[:128] or uuid.uuid4().hex
        status = 500
        limit = self.max_body_bytes
        received = 0
        too_large = False  # the body outgrew the limit while arriving: answer 413 instead
        refused = False

        async def send_wrapped(message: Message) -> None:
            nonlocal status, refused
            if too_large:
                if not refused:
                    refused = True
                    status = 413
                    await self._refuse(send, received, request_id)
                return  # the app's own answer to a truncated body is dropped
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [
                    *message.get("headers", []),
                    (b"x-request-id", request_id.encode("latin-1")),
                ]
            await send(message)

        async def receive_counted() -> Message:
            nonlocal received, too_large
            if too_large:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    too_large = True
                    return {"type": "http.request", "body": b"", "more_body": False}
            return message

        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            status = 413
            await self._refuse(send, int(declared), request_id)
        else:
            self.metrics.inflight.inc()
            try:
                await self.app(scope, receive_counted, send_wrapped)
                if too_large and not refused:
                    status = 413
                    await self._refuse(send, received, request_id)
            finally:
                self.metrics.inflight.dec()
        route = scope.get("route")
        path: Any = getattr(route, "path", None) or "unmatched"
        self.metrics.observe_request(path, status, time.perf_counter() - started)

    async def _refuse(self, send: Send, size: int, request_id: str) -> None:
        await send_error(
            send,
            413,
            f"the request body has {size:,} bytes or more, over the limit of "
            f"{self.max_body_bytes:,}; send smaller requests (or raise PURR_MAX_BODY_BYTES)",
            "body_too_large",
            [(b"connection", b"close"), (b"x-request-id", request_id.encode("latin-1"))],
        )
