"""Thin routes over ``EditService``: ``POST /v1/edit``, ``/v1/edit/batch``, ``/v1/check``,
``/v1/score``, ``/v1/research`` and ``/v1/extract``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from serve.edit.extract import extract as extract_text
from serve.edit.protocol import (
    BatchRequest,
    BatchResponse,
    CheckRequest,
    CheckResponse,
    EditRequest,
    EditResponse,
    ExtractRequest,
    ExtractResponse,
    ResearchRequest,
    ResearchResponse,
    ScoreRequest,
    ScoreResponse,
)
from serve.edit.research import research as research_query
from serve.edit.service import EditService
from serve.errors import documented
from serve.state import from_state
from serve.tenants import tenant_of

Service = Annotated[EditService, Depends(from_state("edit_service"))]
Tenant = Annotated[str, Depends(tenant_of)]

router = APIRouter(prefix="/v1", tags=["edit"])

NOT_READY = documented(
    {
        503: "Still loading the models and index (code not_ready), or every worker busy and "
        "the queue full (code overloaded): retry after the Retry-After header's seconds"
    }
)


@router.post(
    "/edit",
    summary="Research and revise a passage; the attribution report",
    response_model=EditResponse,
    responses=NOT_READY,
)
async def edit(body: EditRequest, svc: Service, tenant: Tenant) -> dict[str, Any]:
    """The result contract (docs: how-to/http.md). A failing stage or the deadline gives status
    `degraded` with the original text and the reason, never an error."""
    return await svc.edit(body, tenant)


@router.post("/edit/batch", summary="Edit several passages", responses=NOT_READY)
async def edit_batch(body: BatchRequest, svc: Service, tenant: Tenant) -> BatchResponse:
    """Each item gets its result or the error that kept it from being edited, in order."""
    return BatchResponse(results=await svc.edit_batch(body, tenant))


@router.post(
    "/score",
    summary="auto-AIS of a passage against given evidence",
    responses=documented({504: "Scoring ran past the deadline"}) | NOT_READY,
)
async def score(body: ScoreRequest, svc: Service) -> ScoreResponse:
    return await svc.score(body)


@router.post(
    "/check",
    summary="Check a cited text's citations against its sources",
    responses=documented({504: "Checking ran past the deadline"}) | NOT_READY,
)
async def check(body: CheckRequest, svc: Service) -> CheckResponse:
    """Per sentence: its citations, each cited source's label (supports, contradicts,
    not_enough) with the span and the reason, and its outcome; ALCE's citation precision and
    recall; markers that name no source. The same JSON as `purr check --json`."""
    return await svc.check_citations(body)


@router.post(
    "/research",
    summary="The snippets the configured index or web backend ranks best for a query",
    responses=documented({504: "Research ran past the deadline"}) | NOT_READY,
)
async def research(body: ResearchRequest, svc: Service) -> ResearchResponse:
    """The query as asked (no query generation), searched and reranked like an edit's."""
    return await research_query(svc, body)


@router.post(
    "/extract",
    summary="The main text of an HTML page (as web research extracts it)",
    responses=documented({504: "Extraction ran past the deadline"}),
)
async def extract(body: ExtractRequest, svc: Service) -> ExtractResponse:
    """What the web page does with a dropped `.html` document: its article, not its menus.
    422 with code `no_text` where the page has none."""
    return await extract_text(svc, body)
