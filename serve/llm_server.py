"""A minimal OpenAI-compatible server over any ``LLMBackend``.

``create_llm_app(backend, "smollm2")`` serves ``GET /v1/models``, ``POST /v1/completions`` and
``POST /v1/chat/completions``; so the ``openai`` backend (and any OpenAI client) can use a local
model served by another process. Model calls run in a worker thread, off the event loop.
``stream: true`` on chat sends the generated reply as server-sent events, a few words a chunk.

    app = create_llm_app(TransformersBackend("packaged:smollm2-135m-instruct"), "smollm2")
    uvicorn.run(app, host="127.0.0.1", port=8001)  # then PURR_LLM_BASE_URL=http://127.0.0.1:8001/v1
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from editor.llm.base import LLMBackend, LLMError
from serve.body_check import BodyCheck
from serve.errors import documented, error_response, install_error_handlers
from serve.llm_protocol import (
    ChatChoice,
    ChatChoiceMessage,
    ChatCompletionRequest,
    ChatCompletionResponse,
    CompletionChoice,
    CompletionRequest,
    CompletionResponse,
    ModelCard,
    ModelList,
)
from serve.state import from_state

logger = logging.getLogger(__name__)


class ModelNotFoundError(ValueError):
    """The request named a model this server does not serve."""


def _sampling(request: CompletionRequest | ChatCompletionRequest) -> dict[str, Any]:
    """The request's sampling settings, as the backend's ``complete`` and ``chat`` take them."""
    return {
        "max_new_tokens": request.max_tokens,
        "temperature": request.temperature,
        "n": request.n,
        "stop": request.stop_list(),
    }


class LLMService:
    """Turns protocol requests into backend calls; no HTTP here."""

    def __init__(self, backend: LLMBackend, model_name: str) -> None:
        if not model_name or not model_name.strip():
            raise ValueError("model_name is empty; name the served model, e.g. 'smollm2'")
        self.backend = backend
        self.model_name = model_name
        self.created = int(time.time())

    def models(self) -> ModelList:
        return ModelList(data=[ModelCard(id=self.model_name, created=self.created)])

    def _check_model(self, model: str | None) -> None:
        if model is not None and model != self.model_name:
            raise ModelNotFoundError(
                f"model '{model}' is not served here; use '{self.model_name}' (GET /v1/models)"
            )

    def _stamp(self, prefix: str) -> dict[str, Any]:
        """A response's id (``prefix``-random hex), creation time and model name."""
        return {
            "id": f"{prefix}-{uuid.uuid4().hex}",
            "created": int(time.time()),
            "model": self.model_name,
        }

    def complete(self, request: CompletionRequest) -> CompletionResponse:
        self._check_model(request.model)
        samples = self.backend.complete(request.prompts(), **_sampling(request))
        # OpenAI numbers choices prompt-major: index = prompt * n + sample
        choices = [
            CompletionChoice(index=i * request.n + j, text=text)
            for i, texts in enumerate(samples)
            for j, text in enumerate(texts)
        ]
        return CompletionResponse(**self._stamp("cmpl"), choices=choices)

    def chat(self, request: ChatCompletionRequest) -> ChatCompletionResponse:
        self._check_model(request.model)
        conversation = [m.model_dump() for m in request.messages]
        [samples] = self.backend.chat([conversation], **_sampling(request))
        choices = [
            ChatChoice(index=j, message=ChatChoiceMessage(content=text))
            for j, text in enumerate(samples)
        ]
        return ChatCompletionResponse(**self._stamp("chatcmpl"), choices=choices)


Service = Annotated[LLMService, Depends(from_state("llm_service"))]

_ERRORS = documented(
    {
        400: "Invalid request",
        404: "Unknown model",
        408: "The body did not arrive whole in time",
        415: "The body is not sent as application/json",
        500: "The model failed",
    }
)


async def _events(response: ChatCompletionResponse) -> AsyncIterator[str]:
    """``response`` as OpenAI ``chat.completion.chunk`` events, then ``[DONE]``."""
    base = {"id": response.id, "object": "chat.completion.chunk"}
    base |= {"created": response.created, "model": response.model}

    def event(index: int, delta: dict, finish: str | None) -> str:
        choice = {"index": index, "delta": delta, "finish_reason": finish}
        return f"data: {json.dumps({**base, 'choices': [choice]})}\n\n"

    for choice in response.choices:
        yield event(choice.index, {"role": "assistant"}, None)
        words = choice.message.content.split(" ")
        for start in range(0, len(words), 4):
            piece = " ".join(words[start : start + 4]) + (" " if start + 4 < len(words) else "")
            yield event(choice.index, {"content": piece}, None)
        yield event(choice.index, {}, choice.finish_reason)
    yield "data: [DONE]\n\n"


def create_llm_app(backend: LLMBackend, model_name: str, *, preload: bool = True) -> FastAPI:
    """An OpenAI-compatible app serving ``backend`` as ``model_name``.

    With ``preload`` the backend's model (if it has a ``load()``) is loaded at startup rather
    than on the first request.
    """
    service = LLMService(backend, model_name)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        load = getattr(backend, "load", None)
        if preload and callable(load):
            await run_in_threadpool(load)
        logger.info("serving %s", model_name)
        yield

    app = FastAPI(title="purr LLM server", lifespan=lifespan, responses=_ERRORS)
    app.state.llm_service = service

    @app.get("/v1/models")
    async def list_models(svc: Service) -> ModelList:
        return svc.models()

    @app.post("/v1/completions")
    async def completions(request: CompletionRequest, svc: Service) -> CompletionResponse:
        return await run_in_threadpool(svc.complete, request)

    @app.post(
        "/v1/chat/completions",
        response_model=ChatCompletionResponse,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def chat_completions(request: ChatCompletionRequest, svc: Service):
        response = await run_in_threadpool(svc.chat, request)
        if request.stream:
            return StreamingResponse(
                _events(response),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache"},
            )
        return response

    @app.exception_handler(ModelNotFoundError)
    async def _no_model(_: Request, exc: ModelNotFoundError) -> JSONResponse:
        return error_response(404, str(exc), "model_not_found")

    @app.exception_handler(LLMError)
    async def _llm_failed(_: Request, exc: LLMError) -> JSONResponse:
        logger.error("model call failed: %s", exc)
        return error_response(500, str(exc), "llm_error")

    install_error_handlers(app, status_for_validation=400)
    app.add_middleware(
        BodyCheck, router=app.router
    )  # coded 4xx for unreadable bodies, as purr serve answers
    return app
