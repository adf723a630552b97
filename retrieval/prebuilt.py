"""Passage vectors computed ahead of time, looked up by passage text.

Embedding is the slow part of building an index (13-25 passages/s on a 2-core CPU without
AVX-512, so the 14,806 snippets of the default corpus would take 10-19 minutes). The default
corpus's vectors therefore ship with the package (``retrieval/data/``) as float16 (11 MB), keyed
by a 64-bit hash of each passage's exact indexed text. ``CachedEncoder`` wraps an encoder: a
passage whose text has a stored vector takes it, any other passage is embedded as usual. A
changed corpus, chunking or title setting thus only costs the passages that changed, and a
different encoder never sees the stored vectors (``packaged_vectors_fit`` checks the model).

Files, ``PREFIX.keys.npy`` (uint64, sorted), ``PREFIX.vectors.npy`` (float16, one row per key)
and ``PREFIX.json`` (the encoder and its settings); ``retrieval.index.export_vectors`` writes them from an index.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from retrieval.config import DenseConfig

log = logging.getLogger(__name__)

DATA_DIR = Path(__file__).parent / "data"
DEFAULT_PREFIX = DATA_DIR / "wiki-summaries.bge-small-en"


def text_key(text: str) -> int:
    """A stable 64-bit key of a passage's text (BLAKE2b).

    >>> text_key("Paris is the capital of France.") == text_key("Paris is the capital of France.")
    True
    >>> text_key("a") == text_key("b")
    False
    """
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


class VectorCache:
    """Stored vectors by passage text, for one encoder (``model``, ``max_length``)."""

    def __init__(self, keys: np.ndarray, vectors: np.ndarray, meta: dict):
        if keys.ndim != 1 or vectors.ndim != 2 or len(keys) != len(vectors):
            raise ValueError(
                f"vector cache keys {keys.shape} and vectors {vectors.shape} do not line up; "
                "rewrite it with retrieval.index.export_vectors"
            )
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]  # (n,) uint64, sorted
        self.vectors = vectors[order]  # (n, dim) float16
        self.meta = meta

    @classmethod
    def load(cls, prefix: str | Path) -> VectorCache:
        prefix = Path(prefix)
        try:
            meta = json.loads(Path(f"{prefix}.json").read_text("utf-8"))
            keys = np.load(f"{prefix}.keys.npy", allow_pickle=False)
            vectors = np.load(f"{prefix}.vectors.npy", allow_pickle=False, mmap_mode="r")
        except (OSError, ValueError) as e:
            raise FileNotFoundError(f"no readable vector cache at {prefix}.* ({e})") from None
        return cls(keys, np.asarray(vectors), meta)

    @classmethod
    def packaged(cls, cfg: DenseConfig) -> VectorCache | None:
        """The shipped default-corpus vectors when they were made by ``cfg``'s encoder."""
        if not packaged_vectors_fit(cfg):
            log.info("no packaged passage vectors for %s; embedding everything", cfg.model)
            return None
        return cls.load(DEFAULT_PREFIX)

    def __len__(self) -> int:
        return len(self.keys)

    def lookup(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Rows of the stored vectors for ``texts`` (-1 where none is stored), and their hits.

        Returns ``(rows, hit)``: ``rows`` (n,) int64, ``hit`` (n,) bool."""
        keys = np.fromiter((text_key(t) for t in texts), dtype=np.uint64, count=len(texts))
        if not len(self.keys):
            return np.full(len(texts), -1, dtype=np.int64), np.zeros(len(texts), dtype=bool)
        pos = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        hit = self.keys[pos] == keys
        return np.where(hit, pos, -1).astype(np.int64), hit


def packaged_vectors_fit(cfg: DenseConfig) -> bool:
    """Whether vectors ship for ``cfg``'s encoder (reads the small JSON file only).

    >>> packaged_vectors_fit(DenseConfig()), packaged_vectors_fit(DenseConfig(max_length=64))
    (True, False)
    """
    try:
        meta = json.loads(Path(f"{DEFAULT_PREFIX}.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return meta.get("model") == cfg.model and meta.get("max_length") == cfg.max_length


class CachedEncoder:
    """An encoder whose passages come from a ``VectorCache`` where it has them."""

    def __init__(self, encoder, cache: VectorCache):
        self.encoder = encoder
        self.cache = cache
        self.name = encoder.name
        self.hits = 0
        self.misses = 0

    @property
    def dim(self) -> int:
        return int(self.cache.vectors.shape[1])

    def encode_query(self, text: str) -> np.ndarray:
        return self.encoder.encode_query(text)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self.encoder.encode_queries(texts)

    def encode_passages(
        self, texts: list[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        rows, hit = self.cache.lookup(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)  # (n, dim)
        out[hit] = self.cache.vectors[rows[hit]].astype(np.float32)
        out[hit] /= np.maximum(np.linalg.norm(out[hit], axis=1, keepdims=True), 1e-12)
        self.hits += int(hit.sum())
        if progress and hit.any():
            progress(int(hit.sum()))
        missing = np.flatnonzero(~hit)
        self.misses += len(missing)
        if len(missing):
            log.info(
                "%d of %d passages have no stored vector; embedding them", len(missing), len(texts)
            )
            out[missing] = self.encoder.encode_passages([texts[i] for i in missing], progress)
        return out


def passage_encoder(cfg: DenseConfig):
    """The encoder for building an index with ``cfg``: ``cfg``'s encoder, reading the packaged
    default-corpus vectors where they fit."""
    from retrieval.encoders import build_encoder

    encoder = build_encoder(cfg)
    cache = VectorCache.packaged(cfg)
    return encoder if cache is None else CachedEncoder(encoder, cache)
