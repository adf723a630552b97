"""``POST /v1/chat/completions``: the OpenAI-compatible chatbot wrapper."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import StreamingResponse

from serve.chat.protocol import ChatCompletionOut, ChatRequestIn
from serve.chat.service import ChatService
from serve.errors import UPSTREAM_RESPONSES
from serve.state import from_state
from serve.tenants import tenant_of

Service = Annotated[ChatService, Depends(from_state("chat_service"))]
Tenant = Annotated[str, Depends(tenant_of)]

router = APIRouter(prefix="/v1", tags=["chat"])


@router.post(
    "/chat/completions",
    summary="Chat through the upstream model; the reply comes back revised with citations",
    response_model=ChatCompletionOut,
    responses={200: {"content": {"text/event-stream": {}}}, **UPSTREAM_RESPONSES},
)
async def chat_completions(body: ChatRequestIn, svc: Service, tenant: Tenant):
    """OpenAI's chat completions: forwarded to PURR_UPSTREAM_URL, the reply revised with the
    conversation as context. `stream: true` streams the revised reply once it is edited."""
    completion = await svc.complete(body, tenant)
    if body.stream:
        return StreamingResponse(
            svc.stream(completion),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache"},
        )
    return completion
