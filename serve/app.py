"""The purr HTTP service: ``create_app(pipeline)`` (``purr serve`` runs it under uvicorn).

    POST /v1/edit              research and revise a passage -> the result contract
    POST /v1/edit/batch        several passages
    POST /v1/score             auto-AIS of a passage against given evidence
    POST /v1/chat/completions  OpenAI-compatible chatbot wrapper (PURR_UPSTREAM_URL)
    GET  /healthz /readyz /metrics /docs /openapi.json, and the web page at /

Services are built in the lifespan and injected; models load once in the background (warm-up)
and are shared by the worker threads. Every failure answers in one error shape (serve.errors).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.resources import files
from typing import Annotated

import httpx
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from editor.pipeline import Pipeline
from serve.body_check import BodyCheck
from serve.chat.router import router as chat_router
from serve.chat.service import ChatService
from serve.edit.protocol import Readiness
from serve.edit.router import router as edit_router
from serve.edit.service import EditService
from serve.errors import ERROR_RESPONSES, ApiError, error_response, install_error_handlers
from serve.metrics import Metrics
from serve.middleware import Guard
from serve.quota import KeyLimits, Quota, match_key
from serve.settings import ServeSettings

log = logging.getLogger(__name__)

_bearer = HTTPBearer(auto_error=False, description="One of PURR_API_KEYS (when set).")


def _require_key(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    keys: set[str] = request.app.state.api_keys
    given = credentials.credentials if credentials else ""
    if not given:
        raise ApiError(
            401,
            "this server needs an API key: send 'Authorization: Bearer <key>'",
            "missing_api_key",
        )
    if match_key(given, keys) is None:
        raise ApiError(401, "the API key is not valid; check PURR_API_KEYS", "invalid_api_key")


def create_app(
    pipeline: Pipeline,
    settings: ServeSettings | None = None,
    upstream: httpx.AsyncClient | None = None,
) -> FastAPI:
    """The service over ``pipeline``; ``upstream`` is the HTTP client of the chat wrapper."""
    settings = settings or ServeSettings()
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        edits = EditService(pipeline, settings, metrics)
        client = upstream or httpx.AsyncClient(
            timeout=settings.upstream_timeout_s,
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=16),
        )
        app.state.edit_service = edits
        app.state.chat_service = ChatService(edits, settings, client)
        edits.start()
        try:
            yield
        finally:
            edits.close()
            if upstream is None:
                await client.aclose()

    app = FastAPI(
        title="purr",
        version="0.1.0",
        summary="Research and revise LLM outputs, with an attribution report.",
        lifespan=lifespan,
        responses=ERROR_RESPONSES,
    )
    app.state.api_keys = settings.keys()
    app.state.metrics = metrics
    install_error_handlers(app)
    # the spec declares bearer auth only when keys are set: it describes this server
    secured = [Depends(_require_key)] if settings.keys() else []
    app.include_router(edit_router, dependencies=secured)
    app.include_router(chat_router, dependencies=secured)
    app.include_router(_ops_router(_page()))
    # BodyCheck inside KeyLimits inside Guard (which counts the bytes as they arrive), Guard
    # inside CORS, so their 4xx answers carry the request id and the CORS headers too
    app.add_middleware(BodyCheck, router=app.router, body_timeout_s=settings.body_timeout_s)
    if settings.keys():  # quotas per key, before the body is read; Guard counts their 429s
        quota = Quota(settings.key_per_minute or None, settings.key_concurrent or None)
        app.add_middleware(
            KeyLimits, keys=settings.keys(), quota=quota, metrics=metrics, openapi=app.openapi
        )
    app.add_middleware(Guard, metrics=metrics, max_body_bytes=settings.max_body_bytes)
    if settings.origins():
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.origins(),
            allow_methods=["GET", "POST", "OPTIONS"],
            allow_headers=["Authorization", "Content-Type", "X-Request-ID"],
        )
    return app


_PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; "
    "style-src 'unsafe-inline'; connect-src 'self'; img-src data:; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
}


def _page() -> str:
    """The web page as one document: its style and script are inlined (the CSP allows no other
    source)."""
    web = files("serve.web")
    page = web.joinpath("index.html").read_text(encoding="utf-8")
    for name in ("page.css", "diff.js", "documents.js", "review.js", "page.js"):
        page = page.replace(f"/* {name} */\n", web.joinpath(name).read_text(encoding="utf-8"), 1)
    return page


def _ops_router(page_html: str) -> APIRouter:
    router = APIRouter(tags=["operations"])

    @router.get("/healthz", summary="The process is up")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @router.get(
        "/readyz",
        summary="Models loaded and index open",
        responses={503: ERROR_RESPONSES[500] | {"description": "Still loading, or loading failed"}},
    )
    async def readyz(request: Request) -> Readiness:
        state: Readiness = request.app.state.edit_service.readiness()
        if not state.ready:
            return error_response(  # type: ignore[return-value]
                503, f"not ready: {state.reason}", "not_ready"
            )
        return state

    @router.get("/metrics", summary="Prometheus metrics", response_class=Response)
    async def metrics(request: Request) -> Response:
        m: Metrics = request.app.state.metrics
        return Response(m.render(), media_type=m.content_type)

    @router.get("/", summary="The web page", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(page_html, headers=_PAGE_HEADERS)

    return router
