"""``ChatService``: forwards a chat completion to the upstream, revises the reply with the
conversation as context, and answers in OpenAI's shape (no FastAPI here).

Upstream failures become OpenAI-shaped errors (502 unreachable or broken, 504 slower than the
deadline, the upstream's own 4xx passed on). Once the upstream has answered, the reply is never
lost: if editing fails or runs out of time, the reply comes back unedited and ``purr.status`` is
``degraded`` with the reason.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx

from editor.result import EditResult
from retrieval.web.providers import redact
from serve.chat.citations import dialogue_context, message_text, render_reply, word_pieces
from serve.chat.protocol import ChatCompletionOut, ChatRequestIn
from serve.chat.upstream_stream import gather
from serve.edit.protocol import EditOptions, EditRequest
from serve.edit.service import EditService
from serve.errors import ApiError
from serve.settings import ServeSettings
from serve.tenants import ANONYMOUS

log = logging.getLogger(__name__)


def _upstream_message(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return json.dumps(data)[:300]


def _checked(data: Any) -> dict[str, Any]:
    """``data`` if it is a chat completion with choices; otherwise a 502."""
    try:
        choices = data["choices"]
        if not isinstance(choices, list) or not choices:
            raise ValueError("no choices")
    except (ValueError, KeyError, TypeError) as e:
        raise ApiError(
            502, f"the upstream's answer is not an OpenAI chat completion ({e})", "upstream_invalid"
        ) from None
    return data


class ChatService:
    def __init__(
        self, edits: EditService, settings: ServeSettings, client: httpx.AsyncClient
    ) -> None:
        self.edits = edits
        self.settings = settings
        self.client = client

    def _target(self) -> tuple[str, dict[str, str]]:
        """The upstream's chat URL and headers."""
        base = self.settings.upstream_url
        if not base:
            raise ApiError(
                503,
                "no upstream chat model is configured; set PURR_UPSTREAM_URL to an "
                "OpenAI-compatible server (e.g. `purr serve-llm` or vLLM) and restart",
                "no_upstream",
            )
        headers = {}
        if self.settings.upstream_api_key:
            headers["Authorization"] = f"Bearer {self.settings.upstream_api_key}"
        return f"{base}/chat/completions", headers

    def _redact(self, text: str) -> str:
        """``text`` (an upstream's words) without the upstream's key or this server's keys,
        which an upstream may quote back in its errors."""
        return redact(text, [self.settings.upstream_api_key, *self.settings.keys()])

    def _failed(self, response: httpx.Response) -> None:
        status = response.status_code if response.status_code < 500 else 502
        message = self._redact(_upstream_message(response))
        raise ApiError(
            status, f"the upstream answered {response.status_code}: {message}", "upstream_error"
        )

    async def _upstream(self, body: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        url, headers = self._target()
        base = self.settings.upstream_url
        try:
            response = await self.client.post(url, json=body, headers=headers, timeout=timeout_s)
        except httpx.TimeoutException:
            raise ApiError(
                504,
                f"the upstream at {base} did not answer within {timeout_s:g} s; retry, or raise "
                "purr.deadline_s / PURR_DEADLINE_S",
                "upstream_timeout",
            ) from None
        except httpx.HTTPError as e:
            raise ApiError(
                502,
                f"the upstream at {base} is unreachable "
                f"({self._redact(f'{type(e).__name__}: {e}')}); check "
                "PURR_UPSTREAM_URL and that the server is running",
                "upstream_unreachable",
            ) from None
        if response.status_code >= 400:
            self._failed(response)
        try:
            data = response.json()
        except ValueError as e:
            raise ApiError(
                502,
                f"the upstream's answer is not JSON ({self._redact(str(e))})",
                "upstream_invalid",
            ) from None
        return _checked(data)

    async def _revise(
        self,
        reply: str,
        context: str | None,
        deadline_s: float,
        deadline: float,
        sources: list[Any] | None = None,
        tenant: str = ANONYMOUS,
    ) -> EditResult:
        request = EditRequest(
            text=reply, context=context, sources=sources, options=EditOptions(deadline_s=deadline_s)
        )
        try:
            self.edits.require_ready(request.options)
            return await self.edits.edit_result(request, deadline, tenant)
        except ApiError as e:  # still warming up, or over an input limit: passed on unedited
            return EditResult.untouched(reply, context, f"not edited: {e.message}")

    async def complete(self, request: ChatRequestIn, tenant: str = ANONYMOUS) -> ChatCompletionOut:
        """The upstream's completion with each reply revised and ``purr`` reports attached."""
        seconds = min(request.purr.deadline_s or self.settings.deadline_s, self.settings.deadline_s)
        deadline = time.monotonic() + seconds
        body = request.upstream_body(self.settings.upstream_model)
        timeout_s = min(self.settings.upstream_timeout_s, seconds)
        broken = None
        if request.stream:  # streamed from the upstream too: a reply cut short is kept
            url, headers = self._target()
            try:
                got = await gather(self.client, url, body, headers, timeout_s, self._failed)
            except ApiError as e:  # the upstream's words, without any key it quoted
                e.message = self._redact(e.message)
                raise
            data = _checked(got.data)
            broken = self._redact(got.broken) if got.broken else None
        else:
            data = await self._upstream(body, timeout_s)
        conversation = [m.model_dump() for m in request.messages]
        context = dialogue_context(conversation, self.pipeline_context_chars)
        reports: list[dict[str, Any]] = []
        for choice in data["choices"]:
            message = choice.get("message") if isinstance(choice, dict) else None
            if not isinstance(message, dict):
                raise ApiError(502, "the upstream's choice has no message", "upstream_invalid")
            reply = message_text(message.get("content"))
            if broken:
                why = f"not edited: {broken}; the reply is the upstream's text up to there"
                log.warning("chat: %s", why)
                result = EditResult.untouched(reply, context, why)
                choice["finish_reason"] = choice.get("finish_reason") or "error"
            elif not request.purr.edit or not reply.strip():
                continue
            else:
                remaining = max(deadline - time.monotonic(), 0.001)
                sources = request.purr.sources
                result = await self._revise(reply, context, remaining, deadline, sources, tenant)
            message["content"] = render_reply(result, request.purr.citations)
            report = result.to_json()
            reports.append(report)
            if len(data["choices"]) > 1:
                choice["purr"] = report
        data.setdefault("id", f"chatcmpl-{uuid.uuid4().hex}")
        data.setdefault("created", int(time.time()))
        data.setdefault("model", body.get("model") or "upstream")
        data["object"] = "chat.completion"
        data["purr"] = reports[0] if reports else None
        return ChatCompletionOut.model_validate(data)

    @property
    def pipeline_context_chars(self) -> int:
        return self.edits.pipeline.cfg.limits.max_context_chars

    @staticmethod
    async def stream(completion: ChatCompletionOut) -> AsyncIterator[str]:
        """The finished completion as OpenAI ``chat.completion.chunk`` server-sent events: the
        role, the revised reply a few words at a time, then the finish reason with ``purr``."""
        data = completion.model_dump(mode="json")
        base = {
            "id": data["id"],
            "object": "chat.completion.chunk",
            "created": data["created"],
            "model": data["model"],
        }

        def event(choices: list[dict[str, Any]], **extra: Any) -> str:
            return f"data: {json.dumps({**base, 'choices': choices, **extra})}\n\n"

        for choice in data["choices"]:
            i = choice["index"]
            yield event([{"index": i, "delta": {"role": "assistant"}, "finish_reason": None}])
            for piece in word_pieces(choice["message"]["content"] or ""):
                yield event([{"index": i, "delta": {"content": piece}, "finish_reason": None}])
            extra = {"purr": choice["purr"]} if choice.get("purr") else {}
            finish = choice.get("finish_reason")
            yield event([{"index": i, "delta": {}, "finish_reason": finish}], **extra)
        yield event([], purr=data.get("purr"))
        yield "data: [DONE]\n\n"
