"""Request and response models of the OpenAI-compatible LLM server (the subset purr uses).

Unknown OpenAI fields (``top_p``, ``user``, ...) are accepted and ignored, so stock clients work.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_SAMPLES = 16


class _Request(BaseModel):
    model_config = ConfigDict(extra="ignore")

    model: str | None = Field(None, description="Served model name; omit to use the only one.")
    max_tokens: int | None = Field(None, ge=1, le=4096, description="New tokens per sample.")
    temperature: float | None = Field(None, ge=0, le=2, description="0 = greedy.")
    n: int = Field(1, ge=1, le=MAX_SAMPLES, description="Samples per prompt.")
    stop: str | list[str] | None = Field(None, description="Cut each sample before these.")

    @field_validator("stop")
    @classmethod
    def _stop_list(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list) and len(value) > 4:
            raise ValueError(f"at most 4 stop strings are allowed, got {len(value)}")
        return value

    def stop_list(self) -> list[str] | None:
        if self.stop is None:
            return None
        return [self.stop] if isinstance(self.stop, str) else list(self.stop)


class CompletionRequest(_Request):
    prompt: str | list[str] = Field(description="One prompt or a batch of prompts.")
    stream: bool = Field(False, description="Streaming is not supported here; must be false.")

    @field_validator("stream")
    @classmethod
    def _no_stream(cls, value: bool) -> bool:
        if value:
            raise ValueError(
                "streaming is not supported by /v1/completions; send stream=false "
                "(/v1/chat/completions streams)"
            )
        return value

    @field_validator("prompt")
    @classmethod
    def _non_empty(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list) and not value:
            raise ValueError("prompt is an empty list; send a string or a list of strings")
        return value

    def prompts(self) -> list[str]:
        return [self.prompt] if isinstance(self.prompt, str) else list(self.prompt)


class ChatMessageModel(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "user", "assistant"]
    content: str


class ChatCompletionRequest(_Request):
    messages: list[ChatMessageModel] = Field(min_length=1, description="The conversation so far.")
    stream: bool = Field(
        False, description="Server-sent events: the reply once generated, a few words a chunk."
    )


class CompletionChoice(BaseModel):
    index: int
    text: str
    finish_reason: str | None = "stop"
    logprobs: None = None


class CompletionResponse(BaseModel):
    id: str
    object: Literal["text_completion"] = "text_completion"
    created: int
    model: str
    choices: list[CompletionChoice]


class ChatChoiceMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class ChatChoice(BaseModel):
    index: int
    message: ChatChoiceMessage
    finish_reason: str | None = "stop"


class ChatCompletionResponse(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChatChoice]


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "purr"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class ErrorInfo(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorResponse(BaseModel):
    """The one error shape of every failure: ``{"error": {"message", "type", "param", "code"}}``."""

    error: ErrorInfo
