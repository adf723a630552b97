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
from editor.llm.base import BackendBase, ChatMessage, Sampling, apply_stop
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


class VLLMBackend(BackendBase):
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
        super().__init__(max_new_tokens, temperature)
        self._vllm = _import_vllm()  # fail at build time, not at the first request
        self.model_ref = model
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

    def _params(self, sampling: Sampling) -> Any:
        return self._vllm.SamplingParams(
            n=sampling.n,
            temperature=sampling.temperature,
            max_tokens=sampling.max_new_tokens,
            stop=list(sampling.stop) if sampling.stop else None,
        )

    def _complete(self, prompts: list[str], sampling: Sampling) -> list[list[str]]:
        params = self._params(sampling)
        outputs = self._llm().generate(prompts, params, use_tqdm=False)
        return _texts(outputs, sampling.stop)

    def _chat(self, conversations: list[list[ChatMessage]], sampling: Sampling) -> list[list[str]]:
        params = self._params(sampling)
        outputs = self._llm().chat([list(c) for c in conversations], params, use_tqdm=False)
        return _texts(outputs, sampling.stop)


def _texts(outputs: list[Any], stop: list[str] | None) -> list[list[str]]:
    """The samples of each ``vllm.RequestOutput``, cut before any stop string."""
    return [[apply_stop(o.text, stop) for o in out.outputs] for out in outputs]
