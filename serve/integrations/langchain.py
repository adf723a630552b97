"""``PurrEdit``: a LangChain runnable that edits what a chat model wrote (``pip install
'purr-edit[langchain]'``).

    chain = prompt | llm | PurrEdit()                 # researched in purr's own corpus
    rag = {"context": retriever, "question": RunnablePassthrough()} | RunnablePassthrough.assign(
        answer=prompt | llm) | PurrEdit()              # checked against the retrieved documents

It takes a message or a string, or a mapping with the answer (``answer_key``), the retrieved
``Document``s (``documents_key``) and the question (``question_keys``), and returns an
``AIMessage`` whose content is the revision and whose ``response_metadata["purr"]`` holds the
status, the findings, the citations to the documents and the report
(``serve.integrations.common.Checked.metadata``).

``stream`` buffers the reply, edits it, then streams the revision a few words at a time, as the
chat wrapper does; the last chunk carries the metadata. When purr fails, the answer comes back
unchanged with status ``degraded`` and the reason in ``warnings``; pass ``on_error="raise"``, or
``configurable={"purr_on_error": "raise"}`` per call, to have the exception instead. Input that
is not an answer (a mapping without ``answer_key``, a number) is a wiring error and raises.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config

from editor.pipeline import Pipeline
from serve.chat.citations import word_pieces
from serve.integrations.common import AppDocument, Checked, PurrChecker


class PurrEdit(Runnable[Any, AIMessage]):
    """Edits an answer with purr; see the module's docstring. ``pipeline``, or ``config``,
    ``overrides`` and ``index`` (``PurrChecker``'s keywords, with ``on_error``) choose the
    pipeline (built on first use), as for ``purr edit``."""

    name = "PurrEdit"

    def __init__(
        self,
        pipeline: Pipeline | None = None,
        *,
        answer_key: str = "answer",
        documents_key: str = "context",
        question_keys: Sequence[str] = ("question", "input"),
        **choose: Any,
    ) -> None:
        self.checker = PurrChecker(pipeline, **choose)
        self.answer_key, self.documents_key = answer_key, documents_key
        self.question_keys = tuple(question_keys)

    def __repr__(self) -> str:
        c = self.checker
        return f"PurrEdit(config={c.config!r}, answer_key={self.answer_key!r}, on_error={c.on_error!r})"

    @property
    def InputType(self) -> type:  # noqa: N802 - LangChain's name
        return Any  # type: ignore[return-value]

    @property
    def OutputType(self) -> type[AIMessage]:  # noqa: N802
        return AIMessage

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AIMessage:
        return self._call_with_config(self._edit, input, config, run_type="parser")

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AIMessage:
        return await self._acall_with_config(self._aedit, input, config, run_type="parser")

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        yield from self.transform(iter([input]), config, **kwargs)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[AIMessageChunk]:
        async def one() -> AsyncIterator[Any]:
            yield input

        async for chunk in self.atransform(one(), config, **kwargs):
            yield chunk

    def transform(
        self, input: Iterator[Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        yield from self._transform_stream_with_config(
            input, self._transform, config, run_type="parser"
        )

    async def atransform(
        self, input: AsyncIterator[Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[AIMessageChunk]:
        async for chunk in self._atransform_stream_with_config(
            input, self._atransform, config, run_type="parser"
        ):
            yield chunk

    def _edit(self, value: Any, config: RunnableConfig) -> AIMessage:
        answer, documents, question, message = self._read(value)
        on_error = ensure_config(config).get("configurable", {}).get("purr_on_error")
        return reply(self.checker.check(answer, documents, question, on_error), message)

    async def _aedit(self, value: Any, config: RunnableConfig) -> AIMessage:
        return await asyncio.to_thread(self._edit, value, config)  # off the event loop

    def _transform(self, chunks: Iterator[Any], config: RunnableConfig) -> Iterator[AIMessageChunk]:
        buffered = None
        for chunk in chunks:  # the whole reply first: an edit reads whole sentences
            buffered = chunk if buffered is None else _add(buffered, chunk)
        yield from reply_chunks(self._edit(buffered, config))

    async def _atransform(
        self, chunks: AsyncIterator[Any], config: RunnableConfig
    ) -> AsyncIterator[AIMessageChunk]:
        buffered = None
        async for chunk in chunks:
            buffered = chunk if buffered is None else _add(buffered, chunk)
        for piece in reply_chunks(await self._aedit(buffered, config)):
            yield piece

    def _read(self, value: Any) -> tuple[str, list[AppDocument] | None, str | None, Any]:
        """(answer, documents, question, the message it came in) from the runnable's input."""
        if isinstance(value, Mapping):
            if self.answer_key not in value:
                raise ValueError(
                    f"PurrEdit got a mapping with keys {sorted(map(str, value))}, without the "
                    f"answer under {self.answer_key!r}; pass answer_key='...'"
                )
            answer, _, _, message = self._read(value[self.answer_key])
            docs = value.get(self.documents_key)
            question = next((value[k] for k in self.question_keys if k in value), None)
            documents = None if docs is None else [app_document(d) for d in docs]
            return answer, documents, question if isinstance(question, str) else None, message
        if isinstance(value, BaseMessage):
            return str(value.text), None, None, value
        if isinstance(value, str):
            return value, None, None, None
        raise TypeError(
            f"PurrEdit takes a message, a string or a mapping with {self.answer_key!r}, got "
            f"{type(value).__name__}"
        )


def app_document(doc: Any) -> AppDocument:
    """A LangChain ``Document`` (or a string) as an ``AppDocument``."""
    if isinstance(doc, Document):
        meta = dict(doc.metadata or {})
        title = meta.get("title")
        return AppDocument(
            doc.page_content, doc.id, title if isinstance(title, str) else None, meta
        )
    if isinstance(doc, str):
        return AppDocument(doc)
    raise TypeError(f"retrieved documents must be Documents or strings, got {type(doc).__name__}")


def reply(checked: Checked, message: Any = None) -> AIMessage:
    """The ``AIMessage`` of a checked answer: the revision as content, the model's own id,
    metadata and tool calls kept, ``response_metadata["purr"]`` added."""
    meta = dict(getattr(message, "response_metadata", None) or {})
    kept: dict[str, Any] = {}
    if isinstance(message, AIMessage):
        kept = {
            "id": message.id,
            "additional_kwargs": dict(message.additional_kwargs),
            "tool_calls": list(message.tool_calls),
            "usage_metadata": message.usage_metadata,
        }
    return AIMessage(
        content=checked.result.revised,
        response_metadata={**meta, "purr": checked.metadata()},
        **kept,
    )


def reply_chunks(message: AIMessage) -> Iterator[AIMessageChunk]:
    """The revision a few words at a time; the last chunk carries the metadata. The chunks
    add up (``+``) to ``message``'s content and metadata."""
    for piece in word_pieces(str(message.text)):
        yield AIMessageChunk(content=piece, id=message.id)
    yield AIMessageChunk(
        content="",
        id=message.id,
        response_metadata=message.response_metadata,
        additional_kwargs=message.additional_kwargs,
        usage_metadata=message.usage_metadata,
    )


def _add(a: Any, b: Any) -> Any:
    """Two streamed chunks as one: messages and strings add; mappings (a parallel step's
    streamed keys) add key by key."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        out = dict(a)
        for k, v in b.items():
            out[k] = _add(out[k], v) if k in out else v
        return out
    return a + b
