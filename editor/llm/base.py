"""The LLM backend interface, its error type and helpers shared by every backend.

A backend turns prompts (``complete``) or conversations (``chat``) into ``n`` sampled
continuations each. Both methods take a batch and return one list of ``n`` strings per input,
in input order, so ``result[i][j]`` is sample ``j`` for input ``i``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

ChatMessage = dict[str, str]
"""One chat turn, OpenAI style: ``{"role": "system" | "user" | "assistant", "content": str}``."""

CHAT_ROLES = frozenset({"system", "user", "assistant"})


class LLMError(RuntimeError):
    """An LLM call failed (server unreachable, bad response, model failed to load).

    The message says what failed and what to do about it.
    """


@runtime_checkable
class LLMBackend(Protocol):
    """Generates text. ``temperature=0`` is greedy; ``None`` arguments take the backend default."""

    def complete(
        self,
        prompts: list[str],
        *,
        max_new_tokens: int | None = None,
        temperature: float | None = None,
        n: int = 1,
        stop: list[str] | None = None,
    ) -> list[list[str]]:
        """``n`` continuations of each prompt (without the prompt, cut before any stop string)."""
        ...

    def chat(
        self,
        conversations: list[list[ChatMessage]],
        *,
        max_new_tokens: int | None = None,
        temperature: float | None = None,
        n: int = 1,
        stop: list[str] | None = None,
    ) -> list[list[str]]:
        """``n`` assistant replies to each conversation."""
        ...


@dataclass(frozen=True)
class Sampling:
    """One call's generation settings, the backend's defaults filled in where none was given."""

    max_new_tokens: int
    temperature: float
    n: int
    stop: list[str] | None


class BackendBase:
    """What every built-in backend does before generating: checks the arguments, fills in the
    backend's defaults and answers an empty batch with ``[]``.

    A subclass implements ``_complete`` and ``_chat``, which get a non-empty batch.
    """

    def __init__(self, max_new_tokens: int, temperature: float) -> None:
        check_generation_args(1, max_new_tokens, temperature, None)
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature

    def complete(
        self,
        prompts: list[str],
        *,
        max_new_tokens: int | None = None,
        temperature: float | None = None,
        n: int = 1,
        stop: list[str] | None = None,
    ) -> list[list[str]]:
        sampling = self._sampling(max_new_tokens, temperature, n, stop)
        return self._complete(list(prompts), sampling) if prompts else []

    def chat(
        self,
        conversations: list[list[ChatMessage]],
        *,
        max_new_tokens: int | None = None,
        temperature: float | None = None,
        n: int = 1,
        stop: list[str] | None = None,
    ) -> list[list[str]]:
        sampling = self._sampling(max_new_tokens, temperature, n, stop)
        for conversation in conversations:
            check_conversation(conversation)
        return self._chat(conversations, sampling) if conversations else []

    def _sampling(
        self, max_new_tokens: int | None, temperature: float | None, n: int, stop: list[str] | None
    ) -> Sampling:
        check_generation_args(n, max_new_tokens, temperature, stop)
        return Sampling(
            max_new_tokens=max_new_tokens or self.max_new_tokens,
            temperature=self.temperature if temperature is None else temperature,
            n=n,
            stop=stop,
        )

    def _complete(self, prompts: list[str], sampling: Sampling) -> list[list[str]]:
        raise NotImplementedError

    def _chat(self, conversations: list[list[ChatMessage]], sampling: Sampling) -> list[list[str]]:
        raise NotImplementedError


def check_generation_args(
    n: int, max_new_tokens: int | None, temperature: float | None, stop: Sequence[str] | None
) -> None:
    """Validate the keyword arguments every backend accepts; raise ValueError saying the fix.

    >>> check_generation_args(1, 16, 0.0, None)
    >>> check_generation_args(0, 16, 0.0, None)
    Traceback (most recent call last):
    ...
    ValueError: n must be >= 1 (samples per prompt), got 0
    """
    if n < 1:
        raise ValueError(f"n must be >= 1 (samples per prompt), got {n}")
    if max_new_tokens is not None and max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    if temperature is not None and not 0 <= temperature <= 2:
        raise ValueError(f"temperature must be in [0, 2] (0 = greedy), got {temperature}")
    if stop is not None and (isinstance(stop, str) or not all(isinstance(s, str) for s in stop)):
        raise ValueError(f"stop must be a list of strings, e.g. ['\\n\\n'], got {stop!r}")


def check_conversation(conversation: Sequence[ChatMessage]) -> None:
    """Validate one chat conversation (non-empty, known roles, string content).

    >>> check_conversation([{"role": "user", "content": "Hi"}])
    >>> check_conversation([{"role": "bot", "content": "Hi"}])
    Traceback (most recent call last):
    ...
    ValueError: message 0 has role 'bot'; use one of assistant, system, user
    """
    if not conversation:
        raise ValueError("a conversation needs at least one message, e.g. [{'role': 'user', ...}]")
    for i, message in enumerate(conversation):
        role, content = message.get("role"), message.get("content")
        if role not in CHAT_ROLES:
            raise ValueError(
                f"message {i} has role {role!r}; use one of {', '.join(sorted(CHAT_ROLES))}"
            )
        if not isinstance(content, str):
            raise ValueError(f"message {i} needs a string 'content', got {type(content).__name__}")


def apply_stop(text: str, stop: Sequence[str] | None) -> str:
    """Cut ``text`` before the earliest occurrence of any stop string.

    >>> apply_stop("Paris.\\nQ: next", ["\\nQ:", "###"])
    'Paris.'
    >>> apply_stop("no stop here", None)
    'no stop here'
    """
    if not stop:
        return text
    cut = len(text)
    for s in stop:
        if s:
            at = text.find(s)
            if at != -1:
                cut = min(cut, at)
    return text[:cut]
