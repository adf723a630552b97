"""Wrap any chat function so its replies come back revised with citations, without a server.

    from serve.chat.wrap import revise_replies
    chat = revise_replies(my_chat, pipeline)          # my_chat(messages) -> str, sync or async
    reply = chat([{"role": "user", "content": "Who designed the Eiffel Tower?"}])
    reply.content        # the revised reply with [n] markers and the sources
    reply.result         # the EditResult: evidence, steps, attribution report

The conversation (and, for a sync or async function alike, the reply) is passed to
``Pipeline.edit`` as context; a reply that cannot be edited comes back unedited with the reason
in ``result.warnings``, never an exception.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from editor.inputs import InputError
from editor.pipeline import Pipeline
from editor.result import EditResult
from serve.chat.citations import CitationStyle, dialogue_context, message_text, render_reply

Messages = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class RevisedReply:
    """A chat reply after purr: what to show, what the model said, and the report."""

    content: str
    original: str
    result: EditResult


def revise_reply(
    pipeline: Pipeline, messages: Messages, reply: Any, citations: CitationStyle = "sources"
) -> RevisedReply:
    """Edit one reply to ``messages`` (a string, or an OpenAI-style message/content)."""
    if isinstance(reply, Mapping):
        reply = reply.get("content")
    text = message_text(reply)
    context = dialogue_context(messages, pipeline.cfg.limits.max_context_chars)
    try:
        result = pipeline.edit(text, context)
    except InputError as e:
        result = EditResult.untouched(text, context, f"not edited: {e}")
    return RevisedReply(render_reply(result, citations), text, result)


def revise_replies(
    chat: Callable[..., Any], pipeline: Pipeline, citations: CitationStyle = "sources"
) -> Callable[..., Any]:
    """``chat(messages, *args, **kwargs)`` returning a reply, made to return ``RevisedReply``.

    An ``async def`` chat gives an async wrapper (the edit runs in a worker thread, off the
    event loop); a plain function gives a plain one."""
    if inspect.iscoroutinefunction(chat):

        @functools.wraps(chat)
        async def async_wrapper(messages: Messages, *args: Any, **kwargs: Any) -> RevisedReply:
            reply = await chat(messages, *args, **kwargs)
            return await asyncio.to_thread(revise_reply, pipeline, messages, reply, citations)

        return async_wrapper

    @functools.wraps(chat)
    def wrapper(messages: Messages, *args: Any, **kwargs: Any) -> RevisedReply:
        reply = chat(messages, *args, **kwargs)
        if inspect.isawaitable(reply):
            raise TypeError(
                "the chat function returned an awaitable but is not 'async def'; wrap an "
                "async function directly"
            )
        return revise_reply(pipeline, messages, reply, citations)

    return wrapper


AsyncChat = Callable[..., Awaitable[Any]]
