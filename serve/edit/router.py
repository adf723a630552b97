"""Thin routes over ``EditService``: ``POST /v1/edit``, ``/v1/edit/batch``, ``/v1/score``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request

from serve.edit.protocol import (
    BatchRequest,
    BatchResponse,
    EditRequest,
    EditResponse,
    ScoreRequest,
    ScoreResponse,
)
from serve.edit.service import EditService
from serve.llm_protocol import ErrorResponse


def get_edit_service(request: Request) -> EditService:
    service: EditService | None = getattr(request.app.state, "edit_service", None)
    if service is None:
        raise RuntimeError("edit service not started; run the app with its lifespan (uvicorn)")
    return service


Service = Annotated[EditService, Depends(get_edit_service)]

router = APIRouter(prefix="/v1", tags=["edit"])


@router.post("/edit", summary="Research and revise a passage; the attribution report")
async def edit(body: EditRequest, svc: Service) -> EditResponse:
    """The result contract of DESIGN.md. A failing stage or the deadline gives status
    `degraded` with the original text and the reason, never an error."""
    return await svc.edit(body)


@router.post("/edit/batch", summary="Edit several passages")
async def edit_batch(body: BatchRequest, svc: Service) -> BatchResponse:
    """Each item gets its result or the error that kept it from being edited, in order."""
    return BatchResponse(results=await svc.edit_batch(body))


@router.post(
    "/score",
    summary="auto-AIS of a passage against given evidence",
    responses={504: {"model": ErrorResponse, "description": "Scoring ran past the deadline"}},
)
async def score(body: ScoreRequest, svc: Service) -> ScoreResponse:
    return await svc.score(body)
