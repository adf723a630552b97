"""The base of editors over a model (``fid``, ``causal``): loaded lazily, once, under a lock."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from editor.revision.editors.base import FromBatch
from retrieval.collector import collector_paused


class ModelEditor(FromBatch):
    """An editor over a model loaded lazily, once, under a lock: pass a reference (hub id,
    path, ``packaged:NAME``) or an already loaded model with its tokenizer. Subclasses
    implement ``_load() -> (tokenizer, model)`` and ``edit_batch``. The generation settings:
    up to ``max_evidence`` snippets read, ``max_new_tokens`` written, ``num_beams`` (1: greedy),
    on ``device``."""

    def __init__(
        self,
        model: str | Any,
        tokenizer: Any = None,
        adapter: str | None = None,
        *,
        max_evidence: int = 4,
        max_new_tokens: int = 96,
        num_beams: int = 1,
        device: str = "cpu",
    ):
        if isinstance(model, str):
            self.ref, self._model, self._tokenizer = model, None, None
        else:
            if tokenizer is None:
                raise ValueError("pass the tokenizer with a loaded model")
            self.ref = getattr(model, "name_or_path", "model")
            self._model, self._tokenizer = model, tokenizer
        self.adapter = adapter
        self.max_evidence = max_evidence
        self.max_new_tokens = max_new_tokens
        self.num_beams = num_beams
        self.device = device
        self._lock = threading.Lock()

    def load(self) -> tuple[Any, Any]:
        """Tokenizer and model (loaded on the first call)."""
        with self._lock:
            if self._model is None:
                with collector_paused():  # the model's code and weights stay
                    self._tokenizer, self._model = self._load()
        return self._tokenizer, self._model

    def _load(self) -> tuple[Any, Any]:
        raise NotImplementedError


def trained_evidence(adapter: str | None, fallback: int = 4) -> int:
    """How many evidence snippets an adapter was trained with (``train_config.json``)."""
    if adapter:
        cfg = Path(adapter) / "train_config.json"
        if cfg.is_file():
            return int(json.loads(cfg.read_text()).get("n_evidence", fallback))
    return fallback
