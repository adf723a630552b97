"""The MCP server over streamable HTTP (``purr mcp --http HOST:PORT``): the SDK's ASGI app at
``/mcp`` behind ``KeyGuard``, which asks for one of ``PURR_API_KEYS`` (bearer) when keys are set
and holds each key to its per-minute quota (``PURR_KEY_PER_MINUTE``; see ``KeyGuard``), refusing in
the service's one error shape (401 ``missing_api_key`` / ``invalid_api_key``, 429
``rate_limited``) before the body is read.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from serve.errors import send_error
from serve.quota import Quota, bearer, match_key
from serve.settings import ServeSettings

LOOPBACK = ("127.0.0.1", "localhost", "::1")


class KeyGuard:
    """Pure ASGI: requests without an accepted key get 401; a key over its per-minute quota gets
    429. Every POST is one JSON-RPC message (a call, and also its cancellation, a notification
    or a ping), so only the per-minute quota applies here: a limit in flight would refuse the
    cancellation of the call that holds it. Calls in flight are bounded by the service's
    workers and queue (``overloaded``); only POSTs count (not the notification stream)."""

    def __init__(self, app: ASGIApp, keys: set[str], quota: Quota | None) -> None:
        self.app, self.keys, self.quota = app, keys, quota

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.keys:
            await self.app(scope, receive, send)
            return
        given = bearer(scope)
        if not given:
            message = "this server needs an API key: send 'Authorization: Bearer <key>'"
            await send_error(
                send, 401, message, "missing_api_key", [(b"www-authenticate", b"Bearer")]
            )
            return
        key = match_key(given, self.keys)
        if key is None:
            message = "the API key is not valid; check PURR_API_KEYS"
            await send_error(
                send, 401, message, "invalid_api_key", [(b"www-authenticate", b"Bearer")]
            )
            return
        if self.quota is None or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        refused = self.quota.acquire(key)
        if refused is not None:
            limit, wait = refused
            message = (
                f"this API key is over its {limit.replace('_', ' ')} quota; retry after {wait} s"
            )
            await send_error(
                send, 429, message, "rate_limited", [(b"retry-after", str(wait).encode())]
            )
            return
        self.quota.release(key)  # counted in the minute, not held while it runs
        await self.app(scope, receive, send)


def http_app(server: MCPServer, settings: ServeSettings, host: str) -> ASGIApp:
    """The streamable-HTTP ASGI app of ``server`` at ``/mcp``, guarded by the settings' keys.
    Bound to loopback, it refuses other Host headers (DNS rebinding); elsewhere it takes any."""
    security = None
    if host not in LOOPBACK:
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(
        transport_security=security, host=host, max_request_body_size=settings.max_body_bytes
    )
    keys = settings.keys()
    quota = None
    if keys and settings.key_per_minute:
        quota = Quota(settings.key_per_minute, None)
    return KeyGuard(app, keys, quota)
