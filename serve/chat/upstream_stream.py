"""The upstream's streamed chat reply (OpenAI server-sent events) gathered into one completion,
and, when the stream broke, what broke it.

A stream can break after some of the reply has arrived: an error event, a line that is not an
event, no data before the deadline, the connection dropped, the stream ended without its last
event. ``gather`` then keeps the text that arrived and says why it stopped (``Gathered.broken``),
so the wrapper can pass that text on unedited instead of losing it; a stream that broke before
any text arrived raises the same ``ApiError`` as a failed non-streamed call.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import httpx

from serve.errors import ApiError


@dataclass
class Gathered:
    """The reply as a chat completion (``choices[i].message.content``) and why it is partial."""

    data: dict[str, Any]
    broken: str | None = None


def _completion(meta: dict[str, Any], texts: dict[int, list[str]], finish: dict[int, Any]) -> dict:
    choices = [
        {
            "index": i,
            "message": {"role": "assistant", "content": "".join(texts[i])},
            "finish_reason": finish.get(i),
        }
        for i in sorted(texts)
    ]
    return {**meta, "choices": choices}


def _error_message(event: dict[str, Any]) -> str:
    error = event.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or json.dumps(error)[:200])
    return str(error)[:200]


async def gather(
    client: httpx.AsyncClient,
    url: str,
    body: dict[str, Any],
    headers: dict[str, str],
    timeout_s: float,
    failed: Any,
) -> Gathered:
    """POST ``body`` with ``stream: true`` and read the events until ``[DONE]`` or
    ``timeout_s``. ``failed(response)`` raises the ``ApiError`` of an upstream error status."""
    deadline = time.monotonic() + timeout_s
    texts: dict[int, list[str]] = {}
    finish: dict[int, Any] = {}
    meta: dict[str, Any] = {}
    broken: str | None = None
    done = False
    try:
        async with client.stream(
            "POST", url, json={**body, "stream": True}, headers=headers, timeout=timeout_s
        ) as response:
            if response.status_code >= 400:
                await response.aread()
                failed(response)
            if "text/event-stream" not in response.headers.get("content-type", ""):
                await response.aread()  # an upstream that answered the whole completion at once
                return Gathered(response.json())
            lines = response.aiter_lines()
            while not done:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                try:
                    line = await asyncio.wait_for(anext(lines), remaining)
                except StopAsyncIteration:
                    break
                if not line.startswith("data:"):
                    continue  # blank separators, comments, event names
                payload = line[5:].strip()
                if payload == "[DONE]":
                    done = True
                    break
                try:
                    event = json.loads(payload)
                    if not isinstance(event, dict):
                        raise ValueError("not an object")
                except ValueError:
                    broken = f"the upstream sent a malformed event ({payload[:80]!r})"
                    break
                if "error" in event:
                    broken = f"the upstream failed mid-reply: {_error_message(event)}"
                    break
                for key in ("id", "created", "model"):
                    meta.setdefault(key, event.get(key))
                for choice in event.get("choices") or []:
                    i = int(choice.get("index", 0))
                    delta = choice.get("delta") or {}
                    texts.setdefault(i, []).append(str(delta.get("content") or ""))
                    if choice.get("finish_reason"):
                        finish[i] = choice["finish_reason"]
    except (TimeoutError, httpx.TimeoutException):
        broken = f"the upstream sent nothing more within the deadline of {timeout_s:g} s"
    except httpx.HTTPError as e:
        if not texts and isinstance(e, httpx.ConnectError):
            raise ApiError(
                502,
                f"the upstream is unreachable ({type(e).__name__}: {e}); check "
                "PURR_UPSTREAM_URL and that the server is running",
                "upstream_unreachable",
            ) from None
        broken = f"the upstream's connection broke mid-reply ({type(e).__name__})"
    if broken is None and not done and (not texts or set(finish) != set(texts)):
        broken = "the upstream's stream ended before its last event"
    if broken and not texts:
        timed_out = "deadline" in broken
        raise ApiError(
            504 if timed_out else 502,
            f"{broken}, before any of the reply arrived; retry"
            + (", or raise purr.deadline_s / PURR_DEADLINE_S" if timed_out else ""),
            "upstream_timeout" if timed_out else "upstream_invalid",
        )
    meta = {k: v for k, v in meta.items() if v is not None}
    return Gathered(_completion(meta, texts, finish), broken)
