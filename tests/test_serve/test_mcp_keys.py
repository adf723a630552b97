"""``KeyGuard``, in front of ``purr mcp --http``: no key or a wrong one is 401 before the body
is read, a key over its quota is 429 with Retry-After, in the service's one error shape; only
POSTs count (a client's open notification stream is no request in flight)."""

from __future__ import annotations

import anyio
import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from serve.mcp.http import KeyGuard
from serve.quota import Quota


async def _echo(request: Request) -> JSONResponse:
    return JSONResponse({"method": request.method})


APP = Starlette(routes=[Route("/mcp", _echo, methods=["GET", "POST"])])


def _calls(guard: KeyGuard, calls: list[tuple[str, str | None]]) -> list[httpx.Response]:
    async def run() -> list[httpx.Response]:
        out = []
        transport = httpx.ASGITransport(app=guard)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            for method, key in calls:
                headers = {"Authorization": f"Bearer {key}"} if key else {}
                out.append(await c.request(method, "/mcp", headers=headers, json={}))
        return out

    return anyio.run(run)


def test_keys_are_asked_for_and_checked():
    none, wrong, right = _calls(
        KeyGuard(APP, {"sk-a"}, None), [("POST", None), ("POST", "sk-b"), ("POST", "sk-a")]
    )
    assert none.status_code == 401 and none.json()["error"]["code"] == "missing_api_key"
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_api_key"
    assert none.headers["www-authenticate"] == "Bearer"
    assert right.status_code == 200 and right.json() == {"method": "POST"}


def test_a_key_over_its_quota_is_refused_and_its_gets_do_not_count():
    guard = KeyGuard(APP, {"sk-a", "sk-b"}, Quota(per_minute=2, concurrent=None))
    calls = [
        ("POST", "sk-a"),
        ("GET", "sk-a"),
        ("POST", "sk-a"),
        ("POST", "sk-a"),
        ("POST", "sk-b"),
    ]
    first, stream, second, third, other = _calls(guard, calls)
    assert [first.status_code, stream.status_code, second.status_code] == [200, 200, 200]
    assert third.status_code == 429 and third.json()["error"]["code"] == "rate_limited"
    assert int(third.headers["retry-after"]) >= 1
    assert other.status_code == 200  # each key has its own quota


def test_without_keys_every_request_passes():
    (r,) = _calls(KeyGuard(APP, set(), None), [("POST", None)])
    assert r.status_code == 200
