"""Registry of LLM backends: ``register(name, factory)`` and ``build(cfg, settings)``.

Built-in backends (``transformers``, ``openai``, ``vllm``) are registered here with factories
that import their module only when built, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable

from editor.config import LLMConfig
from editor.llm.base import LLMBackend
from editor.registry import Registry
from retrieval.settings import Settings

LLMFactory = Callable[[LLMConfig, Settings], LLMBackend]

_BACKENDS: Registry[LLMFactory] = Registry("LLM backend", "llm.backend")

register = _BACKENDS.register
"""Make ``factory(cfg, settings)`` buildable as ``llm.backend=name``; refuses duplicates."""

available = _BACKENDS.available
"""The names ``build`` accepts."""


def build(cfg: LLMConfig, settings: Settings | None = None) -> LLMBackend:
    """The backend named by ``cfg.backend``, configured from ``cfg`` and runtime ``settings``.

    Building never loads a model or opens a connection; that happens on the first call.
    """
    return _BACKENDS.get(cfg.backend)(cfg, settings or Settings())


def _transformers(cfg: LLMConfig, settings: Settings) -> LLMBackend:
    from editor.llm.transformers_backend import TransformersBackend

    return TransformersBackend.from_config(cfg, settings)


def _openai(cfg: LLMConfig, settings: Settings) -> LLMBackend:
    from editor.llm.openai_backend import OpenAIBackend

    return OpenAIBackend.from_config(cfg, settings)


def _vllm(cfg: LLMConfig, settings: Settings) -> LLMBackend:
    from editor.llm.vllm_backend import VLLMBackend

    return VLLMBackend.from_config(cfg, settings)


register("transformers", _transformers)
register("openai", _openai)
register("vllm", _vllm)
