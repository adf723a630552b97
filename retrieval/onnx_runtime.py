"""Shared ONNX Runtime plumbing: one session per model file, tokenizers from tokenizer.json."""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

_LOCK = threading.Lock()


@lru_cache(maxsize=8)
def session(model_path: str, threads: int = 0):  # -> onnxruntime.InferenceSession
    """An InferenceSession, created once per (file, threads) and shared; ``threads=0`` means
    ``PURR_THREADS``, else every core."""
    import onnxruntime as ort

    from retrieval.settings import Settings

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads or Settings().threads or (os.cpu_count() or 1)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return batched(
        ort.InferenceSession(model_path, sess_options=opts, providers=["CPUExecutionProvider"])
    )


def batched(session: Any) -> Any:
    """``session`` behind a dynamic batcher when ``PURR_BATCH`` is on (``purr serve``), and
    behind the cheap lane's gate when ``PURR_PRIORITY`` is (``retrieval.lanes``); else
    itself."""
    from retrieval.settings import Settings

    s = Settings()
    if s.batch:
        from retrieval.batching import BatchedSession, BatchPolicy

        session = BatchedSession(session, BatchPolicy(s.batch_wait_ms, s.batch_max))
    if s.priority:
        from retrieval.lanes import PrioritySession

        session = PrioritySession(session, s.priority_max_wait_ms / 1000)
    return session


@lru_cache(maxsize=8)
def _tokenizer(path: str, max_length: int):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(path)
    tok.enable_truncation(max_length=max_length)
    tok.no_padding()
    return tok


def tokenizer(model_dir: Path, max_length: int):
    """The model's fast tokenizer with truncation at ``max_length`` (cached)."""
    with _LOCK:
        return _tokenizer(str(model_dir / "tokenizer.json"), max_length)


def pad(encodings: list, pad_id: int = 0) -> dict[str, np.ndarray]:
    """Right-pad a list of ``tokenizers.Encoding`` into ONNX inputs."""
    width = max(len(e.ids) for e in encodings)
    n = len(encodings)
    ids = np.full((n, width), pad_id, dtype=np.int64)  # (batch, seq)
    mask = np.zeros((n, width), dtype=np.int64)
    types = np.zeros((n, width), dtype=np.int64)
    for i, e in enumerate(encodings):
        k = len(e.ids)
        ids[i, :k] = e.ids
        mask[i, :k] = 1
        types[i, :k] = e.type_ids
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def length_sorted_batches(lengths: list[int], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length (less padding).

    >>> length_sorted_batches([5, 1, 3], 2)
    [[1, 2], [0]]
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
