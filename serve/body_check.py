"""ASGI middleware: a request body an endpoint cannot read is refused with a coded 4xx before
any route sees it.

FastAPI answers every unreadable body (not UTF-8, nested too deep for the parser, cut short)
with one uncoded ``400 There was an error parsing the body``. Here each fault has its own
status, a stable ``code`` a client can act on, and a message that says what to fix:

=====================  ======  ==========================================================
code                   status  the body
=====================  ======  ==========================================================
unsupported_media      415     is not sent as ``Content-Type: application/json``
body_timeout           408     stopped arriving before its ``Content-Length``
body_truncated         400     ended (the client closed) before its ``Content-Length``
nul_byte               400     holds a raw NUL byte
invalid_encoding       400     is not UTF-8
invalid_json           400     is not JSON (the line and column of the fault)
json_too_deep          400     nests objects or arrays deeper than ``MAX_DEPTH``
=====================  ======  ==========================================================

A body over the size limit is refused by ``serve.middleware.Guard`` (413 ``body_too_large``),
which runs outside this one and counts the bytes while they arrive.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.routing import Match, Router
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from serve.errors import send_error

MAX_DEPTH = 32
"""Deepest nesting of objects and arrays accepted (the deepest valid request nests 5)."""

_WITH_BODY = {"POST", "PUT", "PATCH"}


class BodyProblem(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def depth(value: Any) -> int:
    """How deep ``value`` nests lists and dicts (iteratively: no recursion limit).

    >>> depth({"a": [1, {"b": []}]}), depth("text")
    (4, 0)
    """
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def _media_type(headers: dict[bytes, bytes]) -> str:
    raw = headers.get(b"content-type", b"").decode("latin-1")
    return raw.split(";", 1)[0].strip().lower()


def check_body(media_type: str, body: bytes, max_depth: int = MAX_DEPTH) -> None:
    """Raise ``BodyProblem`` for a body no JSON endpoint can read.

    >>> check_body("application/json", b'{"text": "ok"}')
    >>> try:
    ...     check_body("application/json", b'{"text": "caf\\xe9"}')
    ... except BodyProblem as e:
    ...     print(e.code, e.status)
    invalid_encoding 400
    """
    if media_type != "application/json" and not media_type.endswith("+json"):
        got = f"'{media_type}'" if media_type else "no Content-Type header"
        raise BodyProblem(
            415,
            "unsupported_media",
            f"the body must be JSON sent with 'Content-Type: application/json' (got {got}); "
            "with curl add -H 'Content-Type: application/json'",
        )
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BodyProblem(
            400,
            "invalid_encoding",
            f"the body is not UTF-8 (byte 0x{body[e.start]:02x} at offset {e.start}); "
            "encode the JSON as UTF-8",
        ) from None
    nul = body.find(b"\x00")
    if nul >= 0:
        raise BodyProblem(
            400,
            "nul_byte",
            f"the body holds a NUL byte at offset {nul}; send text without NUL bytes "
            "(or escape it as \\u0000 inside a JSON string)",
        )
    try:
        value = json.loads(text)
    except RecursionError:
        value = None
        deepest = max_depth + 1
    except json.JSONDecodeError as e:
        raise BodyProblem(
            400,
            "invalid_json",
            f"the body is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})",
        ) from None
    else:
        deepest = depth(value)
    if deepest > max_depth:
        raise BodyProblem(
            400,
            "json_too_deep",
            f"the body nests objects or arrays more than {max_depth} levels deep; no endpoint "
            "takes more than a few levels: send the documented shape (see /docs)",
        )


class BodyCheck:
    """Reads the body of each POST/PUT/PATCH request to a route of ``router`` that takes that
    method whole (within ``body_timeout_s``), answers a body that ``check_body`` refuses, and
    hands the rest to the app unchanged (an unknown route or method still gets its 404/405)."""

    def __init__(
        self,
        app: ASGIApp,
        router: Router,
        body_timeout_s: float = 30.0,
        max_depth: int = MAX_DEPTH,
    ):
        self.app = app
        self.router = router
        self.body_timeout_s = body_timeout_s
        self.max_depth = max_depth

    def _takes_body(self, scope: Scope) -> bool:
        if scope["type"] != "http" or scope["method"] not in _WITH_BODY:
            return False
        return any(route.matches(scope)[0] == Match.FULL for route in self.router.routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._takes_body(scope):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"").decode("latin-1")
        chunks: list[bytes] = []
        try:
            await asyncio.wait_for(self._read(receive, chunks, declared), self.body_timeout_s)
            check_body(_media_type(headers), b"".join(chunks), self.max_depth)
        except TimeoutError:
            await _answer(send, BodyProblem(408, "body_timeout", _stalled(chunks, declared, self)))
            return
        except BodyProblem as problem:
            await _answer(send, problem)
            return
        body, replayed = b"".join(chunks), False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    @staticmethod
    async def _read(receive: Receive, chunks: list[bytes], declared: str) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                got = sum(map(len, chunks))
                of = f" of the {declared} its Content-Length declared" if declared else ""
                raise BodyProblem(
                    400,
                    "body_truncated",
                    f"the connection closed after {got} bytes of the body{of}; send the whole body",
                )
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                return


def _stalled(chunks: list[bytes], declared: str, check: BodyCheck) -> str:
    got = sum(map(len, chunks))
    of = f" of the {declared} bytes its Content-Length declared" if declared else " bytes"
    return (
        f"the body stopped arriving: {got}{of} came in {check.body_timeout_s:g} s; "
        "send the whole body at once (check the Content-Length)"
    )


async def _answer(send: Send, problem: BodyProblem) -> None:
    await send_error(
        send, problem.status, problem.message, problem.code, [(b"connection", b"close")]
    )
