"""Dense vector search with FAISS: exact inner product for small corpora, IVF or HNSW above."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np

from retrieval.config import DenseConfig

log = logging.getLogger(__name__)


def choose_type(n: int, cfg: DenseConfig) -> str:
    """The FAISS index family for ``n`` vectors.

    >>> choose_type(1000, DenseConfig()), choose_type(10**6, DenseConfig())
    ('flat', 'ivf')
    """
    if cfg.index_type != "auto":
        return cfg.index_type
    return "flat" if n <= cfg.exact_max else "ivf"


def ivf_lists(n: int) -> int:
    """Number of IVF cells: about sqrt(n), at least 1, at most n / 39 (FAISS's training rule).

    >>> ivf_lists(1_000_000)
    1000
    """
    return max(1, min(int(math.sqrt(n)), n // 39 or 1))


class DenseIndex:
    """FAISS index over passage rows 0..n-1 (vector id = passage row)."""

    def __init__(self, index, cfg: DenseConfig):
        self.index = index
        self.cfg = cfg
        self._apply_search_params()

    @property
    def size(self) -> int:
        return int(self.index.ntotal)

    @property
    def kind(self) -> str:
        import faiss

        if isinstance(self.index, faiss.IndexIVF):
            return "ivf"
        if isinstance(self.index, faiss.IndexHNSW):
            return "hnsw"
        return "flat"

    def _apply_search_params(self) -> None:
        import faiss

        if isinstance(self.index, faiss.IndexIVF):
            self.index.nprobe = self.cfg.ivf_nprobe
        elif isinstance(self.index, faiss.IndexHNSW):
            self.index.hnsw.efSearch = self.cfg.hnsw_ef_search

    @classmethod
    def build(cls, vectors: np.ndarray, cfg: DenseConfig, dim: int | None = None) -> DenseIndex:
        """An index holding ``vectors`` (n, dim), L2-normalised float32."""
        import faiss

        n = len(vectors)
        d = dim or vectors.shape[1]
        kind = choose_type(n, cfg)
        if kind == "flat":
            index = faiss.IndexFlatIP(d)
        elif kind == "hnsw":
            index = faiss.IndexHNSWFlat(d, cfg.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        else:
            nlist = ivf_lists(n)
            quantizer = faiss.IndexFlatIP(d)
            index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
            rng = np.random.default_rng(0)
            sample = vectors[rng.choice(n, size=min(n, 40 * nlist), replace=False)]
            log.info("training IVF with %d cells on %d vectors", nlist, len(sample))
            index.train(np.ascontiguousarray(sample, dtype=np.float32))
        dense = cls(index, cfg)
        if n:
            dense.add(vectors)
        return dense

    def add(self, vectors: np.ndarray) -> None:
        if len(vectors):
            self.index.add(np.ascontiguousarray(vectors, dtype=np.float32))

    def save(self, path: Path) -> None:
        import faiss

        faiss.write_index(self.index, str(path))

    @classmethod
    def load(cls, path: Path, cfg: DenseConfig, mmap: bool = True) -> DenseIndex:
        """Open a saved index, memory-mapped (read-only) when ``mmap`` and FAISS supports it."""
        import faiss

        if mmap:
            try:
                return cls(
                    faiss.read_index(str(path), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY), cfg
                )
            except RuntimeError as e:  # some index types cannot be mapped
                log.debug("mmap not supported for %s (%s); reading into memory", path, e)
        return cls(faiss.read_index(str(path)), cfg)

    def search(self, queries: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Top-k rows and inner-product scores per query vector."""
        if self.size == 0 or len(queries) == 0:
            return [(np.zeros(0, np.int64), np.zeros(0, np.float32)) for _ in range(len(queries))]
        scores, ids = self.index.search(
            np.ascontiguousarray(queries, dtype=np.float32), min(k, self.size)
        )
        out = []
        for row_ids, row_scores in zip(ids, scores, strict=True):
            keep = row_ids >= 0
            out.append((row_ids[keep].astype(np.int64), row_scores[keep]))
        return out
