"""In-process ``vllm.LLM`` for GPU batch jobs (optional: ``pip install 'purr-edit[vllm]'``).

Model references resolve like the transformers backend's: packaged GGUF models are served from
their safetensors conversion in the cache. For a shared server use ``vllm serve`` and the
``openai`` backend instead.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from editor.config import LLMConfig
from editor.llm.base import ChatMessage, apply_stop, check_conversation, check_generation_args
from editor.llm.model_files import locate_model
from retrieval.settings import Settings

logger = logging.getLogger(__name__)

_INSTALL_HINT = (
    "the vllm backend needs vLLM and a CUDA GPU: pip install 'purr-edit[vllm]'; "
    "without a GPU use llm.backend=transformers, "
    "or llm.backend=openai against a `vllm serve` server"
)


def _import_vllm() -> Any:
    try:
        import vllm
    except ImportError as e:
        raise ImportError(f"{_INSTALL_HINT} ({e})") from e
    return vllm


class VLLMBackend:
    """``LLMBackend`` over ``vllm.LLM``; the engine starts on the first call."""

    def __init__(
        self,
        model: str,
        *,
        max_new_tokens: int = 128,
        temperature: float = 0.7,
        cache_dir: Path | None = None,
        **engine_kwargs: Any,
    ) -> None:
        check_generation_args(1, max_new_tokens, temperature, None)
        self._vllm = _import_vllm()  # fail at build time, not at the first request
        self.model_ref = model
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.cache_dir = Path(cache_dir) if cache_dir is not None else Settings().cache_dir
        self.engine_kwargs = engine_kwargs
        self._engine: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, cfg: LLMConfig, settings: Settings | None = None) -> VLLMBackend:
        settings = settings or Settings()
        return cls(
            cfg.model,
            max_new_tokens=cfg.max_new_tokens,
            temperature=cfg.temperature,
            cache_dir=settings.cache_dir,
        )

    def _llm(self) -> Any:
        with self._lock:
            if self._engine is None:
                location = locate_model(self.model_ref, self.cache_dir)
                logger.info("starting vLLM engine for %s (%s)", self.model_ref, location.load_id)
                self._engine = self._vllm.LLM(model=location.load_id, **self.engine_kwargs)
            return self._engine

    def _params(
        self, max_new_tokens: int | None, temperature: float | None, n: int, stop: list[str] | None
    ) -> Any:
        return self._vllm.SamplingParams(
            n=n,
            temperature=self.temperature if temperature is None else temperature,
            max_tokens=max_new_tokens or self.max_new_tokens,
            stop=list(stop) if stop else None,
        )

    def complete(
        self,
        prompts: list[str],
        *,
        max_new_tokens: int | None = None,
        temperature: float | None = None,
        n: int = 1,
        stop: list[str] | None = None,
    ) -> list[list[str]]:
        check_generation_args(n, max_new_tokens, temperature, stop)
        if not prompts:
            return []
        params = self._params(max_new_tokens, temperature, n, stop)
        outputs = self._llm().generate(list(prompts), params, use_tqdm=False)
        return [[apply_stop(o.text, stop) for o in out.outputs] for out in outputs]

    def chat(
        self,
        conversations: list[list[ChatMessage]],
        *,
        max_new_tokens: int | None = None,
        temperature: float | None = None,
        n: int = 1,
        stop: list[str] | None = None,
    ) -> list[list[str]]:
        check_generation_args(n, max_new_tokens, temperature, stop)
        for conversation in conversations:
            check_conversation(conversation)
        if not conversations:
            return []
        params = self._params(max_new_tokens, temperature, n, stop)
        outputs = self._llm().chat([list(c) for c in conversations], params, use_tqdm=False)
        return [[apply_stop(o.text, stop) for o in out.outputs] for out in outputs]
