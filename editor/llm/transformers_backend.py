"""A local causal LM through ``transformers``: the packaged Gemma / SmolLM2, a folder or a hub id.

The model loads lazily on the first call, once, under a lock; generation is serialised by the
same lock (one model, many threads: the HTTP server calls it from a thread pool). Prompts are
batched with left padding; ``temperature=0`` is greedy decoding, anything above samples.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import threading
import time
from pathlib import Path
from typing import Any

from editor.config import LLMConfig
from editor.llm.base import BackendBase, ChatMessage, LLMError, Sampling, apply_stop
from editor.llm.model_files import ModelLocation, locate_model
from retrieval.extras import require
from retrieval.settings import Settings

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "packaged:smollm2-135m-instruct"
FALLBACK_STOP = "\nUser:"


def format_chat_fallback(conversation: list[ChatMessage]) -> str:
    """A plain-text chat prompt for tokenizers without a chat template.

    >>> format_chat_fallback([{"role": "system", "content": "Be brief."},
    ...                       {"role": "user", "content": "Capital of France?"}])
    'Be brief.\\n\\nUser: Capital of France?\\nAssistant:'
    """
    parts: list[str] = []
    for message in conversation:
        role, content = message["role"], message["content"].strip()
        if role == "system":
            parts.append(f"{content}\n\n")
        else:
            parts.append(f"{'User' if role == 'user' else 'Assistant'}: {content}\n")
    return "".join(parts) + "Assistant:"


class TransformersBackend(BackendBase):
    """``LLMBackend`` running a causal LM in this process."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        device: str = "cpu",
        max_new_tokens: int = 128,
        temperature: float = 0.7,
        batch_size: int = 8,
        cache_dir: Path | None = None,
        offline: bool = True,
    ) -> None:
        super().__init__(max_new_tokens, temperature)
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model_ref = model
        self.device = device
        self.batch_size = batch_size
        self.cache_dir = Path(cache_dir) if cache_dir is not None else Settings().cache_dir
        self.offline = offline
        self.location: ModelLocation | None = None
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.RLock()

    @classmethod
    def from_config(cls, cfg: LLMConfig, settings: Settings | None = None) -> TransformersBackend:
        settings = settings or Settings()
        return cls(
            cfg.model,
            device=cfg.device,
            max_new_tokens=cfg.max_new_tokens,
            temperature=cfg.temperature,
            cache_dir=settings.cache_dir,
            offline=settings.offline,
        )

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def tokenizer(self) -> Any:
        """The loaded tokenizer (loads the model on first use)."""
        self.load()
        return self._tokenizer

    def load(self) -> None:
        """Load model and tokenizer now (otherwise the first call does); idempotent."""
        with self._lock:
            if self._model is None:
                self._load()

    def _load(self) -> None:
        require("llm", f"the transformers LLM backend ({self.model_ref})")
        from transformers import AutoModelForCausalLM, AutoTokenizer

        started = time.perf_counter()
        location = locate_model(self.model_ref, self.cache_dir)
        local_only = location.source != "hub" or self.offline
        try:
            tokenizer = AutoTokenizer.from_pretrained(location.load_id, local_files_only=local_only)
            model = AutoModelForCausalLM.from_pretrained(
                location.load_id, local_files_only=local_only
            )
        except OSError as e:
            if location.source == "hub":
                raise LLMError(
                    f"model '{self.model_ref}' is not packaged, not a local path and not in the "
                    f"local Hugging Face cache, and this machine does not download models ({e}); "
                    "use packaged:smollm2-135m-instruct, packaged:gemma-3-270m or a local folder"
                ) from None
            raise LLMError(f"cannot load model from {location.load_id}: {e}") from None
        tokenizer.padding_side = "left"
        tokenizer.truncation_side = "left"
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        model = model.to(self.device)  # type: ignore[arg-type]  # transformers' stub is too narrow
        model.eval()
        self._tokenizer, self._model, self.location = tokenizer, model, location
        logger.info(
            "loaded %s from %s in %.1f s",
            self.model_ref,
            location.load_id,
            time.perf_counter() - started,
        )

    def _complete(self, prompts: list[str], sampling: Sampling) -> list[list[str]]:
        return self._generate(prompts, True, sampling)

    def _chat(self, conversations: list[list[ChatMessage]], sampling: Sampling) -> list[list[str]]:
        tokenizer = self.tokenizer
        if getattr(tokenizer, "chat_template", None):
            prompts = [
                tokenizer.apply_chat_template(c, add_generation_prompt=True, tokenize=False)
                for c in conversations
            ]
            return self._generate(prompts, False, sampling)
        prompts = [format_chat_fallback(c) for c in conversations]
        stops = [*(sampling.stop or []), FALLBACK_STOP]
        replies = self._generate(prompts, True, dataclasses.replace(sampling, stop=stops))
        return [[r.strip() for r in samples] for samples in replies]

    def _generate(
        self, prompts: list[str], add_special_tokens: bool, sampling: Sampling
    ) -> list[list[str]]:
        with self._lock:
            self.load()
            out: list[list[str]] = []
            for i in range(0, len(prompts), self.batch_size):
                batch = prompts[i : i + self.batch_size]
                out.extend(self._generate_batch(batch, add_special_tokens, sampling))
            return out

    def _generate_batch(
        self, prompts: list[str], add_special_tokens: bool, sampling: Sampling
    ) -> list[list[str]]:
        import torch

        tokenizer, model = self._tokenizer, self._model
        limit = getattr(model.config, "max_position_embeddings", None) or 2048
        max_input = max(8, limit - sampling.max_new_tokens)
        enc = tokenizer(
            prompts,
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=max_input,
            add_special_tokens=add_special_tokens,
        ).to(self.device)
        if enc["input_ids"].shape[1] >= max_input:
            logger.warning(
                "a prompt was cut to its last %d tokens (model context %d)", max_input, limit
            )
        sample = sampling.temperature > 0
        config = copy.deepcopy(model.generation_config)
        config.update(
            max_new_tokens=sampling.max_new_tokens,
            do_sample=sample,
            temperature=sampling.temperature if sample else None,
            top_p=config.top_p if sample else None,
            top_k=config.top_k if sample else None,
            num_return_sequences=sampling.n if sample else 1,
            pad_token_id=tokenizer.pad_token_id,
        )
        kwargs: dict[str, Any] = {"generation_config": config}
        if sampling.stop:
            config.stop_strings = [s for s in sampling.stop if s]
            kwargs["tokenizer"] = tokenizer
        with torch.inference_mode():
            output = model.generate(**enc, **kwargs)
        # (batch * samples, prompt_len + new) -> the new tokens only
        texts = tokenizer.batch_decode(
            output[:, enc["input_ids"].shape[1] :], skip_special_tokens=True
        )
        texts = [apply_stop(t, sampling.stop) for t in texts]
        per_prompt = sampling.n if sample else 1
        grouped = [texts[j * per_prompt : (j + 1) * per_prompt] for j in range(len(prompts))]
        return grouped if sample else [g * sampling.n for g in grouped]
