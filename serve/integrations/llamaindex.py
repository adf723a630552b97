"""``PurrQueryEngine``: a LlamaIndex query engine that edits another's answers against the
nodes they were built from (``pip install 'purr-edit[llamaindex]'``).

    engine = PurrQueryEngine(index.as_query_engine())
    response = engine.query("When was Acme founded?")
    str(response)                                  # the revision
    response.metadata["purr"]                      # status, findings, citations, report

The response is edited against its ``source_nodes`` (``serve.integrations.common``): a
citation ``[n]`` names the n-th source node, as LlamaIndex's ``CitationQueryEngine`` writes
them. The result keeps the wrapped engine's nodes and metadata and adds ``metadata["purr"]``,
whose citations name the nodes (``document``: the index in ``source_nodes``, ``id``: the
node's id). A streaming engine's answer is gathered, edited, then streamed. When purr fails,
the answer comes back unchanged with status ``degraded``; ``on_error="raise"`` raises instead.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import (
    RESPONSE_TYPE,
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.prompts.mixin import PromptMixinType
from llama_index.core.schema import NodeWithScore, QueryBundle

from editor.pipeline import Pipeline
from serve.chat.citations import word_pieces
from serve.integrations.common import AppDocument, Checked, PurrChecker


class PurrQueryEngine(BaseQueryEngine):
    """Wraps ``engine``; ``pipeline``, or ``config``, ``overrides`` and ``index``
    (``PurrChecker``'s keywords, with ``on_error``) choose the pipeline (built on first use), as
    for ``purr edit``."""

    def __init__(
        self,
        engine: BaseQueryEngine,
        pipeline: Pipeline | None = None,
        **choose: Any,
    ) -> None:
        super().__init__(callback_manager=engine.callback_manager)
        self.engine = engine
        self.checker = PurrChecker(pipeline, **choose)

    def _get_prompt_modules(self) -> PromptMixinType:
        return {"engine": self.engine}

    def _query(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        response = self.engine.query(query_bundle)
        streaming = isinstance(response, StreamingResponse)
        if streaming or isinstance(response, PydanticResponse):
            response = response.get_response()
        edited = self._edited(response, query_bundle)
        if streaming:
            return StreamingResponse(iter(word_pieces(edited.response or "")), **_rest(edited))
        return edited

    async def _aquery(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        response = await self.engine.aquery(query_bundle)
        streaming = isinstance(response, AsyncStreamingResponse)
        if streaming:
            response = await response.get_response()
        elif isinstance(response, (StreamingResponse, PydanticResponse)):
            response = response.get_response()
        edited = await asyncio.to_thread(self._edited, response, query_bundle)
        if streaming:
            return AsyncStreamingResponse(_awords(edited.response or ""), **_rest(edited))
        return edited

    def _edited(self, response: Response, query_bundle: QueryBundle) -> Response:
        nodes = list(response.source_nodes)
        documents = [node_document(n) for n in nodes]
        question = query_bundle.query_str or None
        checked = self.checker.check(response.response or "", documents, question)
        return edited_response(checked, nodes, response.metadata)


_SOURCE_LABEL = re.compile(r"\ASource \d+:\n")


def node_document(node: NodeWithScore) -> AppDocument:
    """A retrieved node as an ``AppDocument``: its text (without the ``Source n:`` label that
    ``CitationQueryEngine`` puts before each chunk), id, title (when its metadata names one)
    and metadata."""
    meta = dict(node.node.metadata or {})
    title = meta.get("title")
    text = _SOURCE_LABEL.sub("", node.node.get_content())
    return AppDocument(text, node.node.node_id, title if isinstance(title, str) else None, meta)


def edited_response(
    checked: Checked, nodes: list[NodeWithScore], metadata: dict[str, Any] | None
) -> Response:
    """The ``Response`` of a checked answer: the revision, the same nodes, the engine's own
    metadata with ``purr`` added."""
    return Response(checked.result.revised, nodes, {**(metadata or {}), "purr": checked.metadata()})


def _rest(response: Response) -> dict[str, Any]:
    return {
        "source_nodes": response.source_nodes,
        "metadata": response.metadata,
        "response_txt": None,
    }


async def _awords(text: str) -> AsyncIterator[str]:
    for piece in word_pieces(text):
        yield piece
