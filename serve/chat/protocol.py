"""The OpenAI chat-completions request as the wrapper sees it: ``messages`` and ``stream`` are
checked, every other OpenAI field is forwarded to the upstream untouched, and an optional
``purr`` object sets how the reply is revised."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from editor.result import EditResult
from serve.edit.protocol import CheckSource


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    role: Literal["system", "developer", "user", "assistant", "tool"] = Field(
        description="Who said it."
    )
    content: str | list[dict[str, Any]] | None = Field(
        None, description="Text, or OpenAI content parts."
    )


class PurrChatOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)  # "edit": 0 is no boolean

    citations: Literal["markers", "sources", "none"] = Field(
        "sources",
        description="markers: [n] after attributed sentences; sources: markers and a list of "
        "the cited evidence; none: the plain revision.",
    )
    edit: bool = Field(True, description="False: pass the upstream reply through unedited.")
    sources: list[CheckSource] | None = Field(
        None,
        description="The sources the reply was told to cite (a RAG prompt's passages, [1] is id "
        "1): its citations are checked and repaired against them instead of researching.",
    )
    deadline_s: float | None = Field(
        None,
        ge=5,
        description="Deadline of the whole call (upstream + edit), at least 5 s; capped by "
        "PURR_DEADLINE_S.",
    )


class ChatRequestIn(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    model: str | None = Field(None, description="Upstream model (default PURR_UPSTREAM_MODEL).")
    messages: list[ChatMessageIn] = Field(min_length=1, description="The conversation so far.")
    stream: bool = Field(False, description="Stream the revised reply as server-sent events.")
    purr: PurrChatOptions = Field(default_factory=PurrChatOptions)

    def upstream_body(self, default_model: str | None) -> dict[str, Any]:
        """What is sent upstream: the request minus ``purr``, never streamed."""
        body = self.model_dump(exclude={"purr"}, exclude_none=True)
        body["stream"] = False
        if body.get("model") is None and default_model:
            body["model"] = default_model
        return body


class ChatMessageOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str
    content: str | None


class ChatChoiceOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    index: int
    message: ChatMessageOut
    finish_reason: str | None = None
    purr: EditResult | None = Field(
        None, description="The report of this choice (only when n > 1)."
    )


class ChatCompletionOut(BaseModel):
    """OpenAI's chat completion, with the reply revised and ``purr`` carrying its report."""

    model_config = ConfigDict(extra="allow")

    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChatChoiceOut]
    purr: EditResult | None = Field(
        None, description="The attribution report of the (first) reply: the result contract."
    )
