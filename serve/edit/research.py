"""``POST /v1/research`` and the MCP tool ``research``: a query as asked (no query generation),
searched by the configured retriever (the index, the web, or both) and ranked by the reranker,
on the service's cheap lane under its deadline."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from editor.inputs import InputError
from editor.types import Query
from serve.edit.protocol import EditOptions, ResearchRequest, ResearchResponse, Snippet
from serve.errors import ApiError

if TYPE_CHECKING:
    from serve.edit.service import EditService


async def research(svc: EditService, req: ResearchRequest) -> ResearchResponse:
    """The ``k`` snippets ranked best for ``req.query``; ``ApiError`` for bad input (422, 413),
    while loading (503) or past the deadline (504)."""
    try:
        svc.pipeline.check_input(req.query)
    except InputError as e:
        raise ApiError(413 if e.too_large else 422, str(e), "invalid_input", "query") from None
    svc.require_ready(EditOptions())
    seconds = svc.settings.deadline_s

    notes: dict[str, Any] = {"failures": [], "timings": {}}

    def look_up() -> list[Snippet]:
        researcher = svc.pipeline.components.researcher  # opened by the warm-up
        with researcher.web_notes(notes):  # the web backend's refusals and failures
            (found,) = researcher.research_queries([Query(req.query, "asked")])
        return [
            Snippet(
                id=h.snippet.id,
                title=h.snippet.title or None,
                url=h.snippet.url or None,
                text=h.snippet.text,
                relevance=None if h.relevance is None else round(h.relevance, 6),
                retriever=h.retriever,
            )
            for h in found.hits[: req.k]
        ]

    try:
        snippets = await svc.run_cheap(look_up, time.monotonic() + seconds)
    except TimeoutError:
        raise ApiError(
            504, f"research did not finish within {seconds:g} s; retry later", "deadline_exceeded"
        ) from None
    warnings = [f"web: {w}" for w in notes["failures"]]
    return ResearchResponse(query=req.query, snippets=snippets, warnings=warnings)
