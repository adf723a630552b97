"""Sparse retrieval with bm25s (sparse-matrix BM25, memory-mappable on disk; a saved index is
searched with numpy alone, ``SavedScores``).

rank-bm25 is the reference implementation but scores every document in Python for every
query (~440 ms a query at 100k passages); bm25s precomputes the scores into a sparse matrix
and answers in milliseconds, with identical Lucene-style BM25 scoring (see README).
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import numpy as np

from retrieval.config import BM25Config

log = logging.getLogger(__name__)
_WORD = re.compile(r"(?u)\b\w\w+\b")


def _stemmer(cfg: BM25Config):
    if cfg.stemmer == "none":
        return None
    import Stemmer

    return Stemmer.Stemmer(cfg.stemmer)


def _stopwords(cfg: BM25Config) -> str | list[str]:
    return "en" if cfg.stopwords == "en" else []


class BM25Index:
    """A BM25 index over passage rows 0..n-1."""

    def __init__(self, cfg: BM25Config, retriever=None):
        self.cfg = cfg
        self._retriever = retriever
        self._stem = _stemmer(cfg)

    @property
    def size(self) -> int:
        return 0 if self._retriever is None else int(self._retriever.scores["num_docs"])

    def _tokenize(self, texts: list[str], show_progress: bool = False):
        import bm25s

        return bm25s.tokenize(
            texts, stopwords=_stopwords(self.cfg), stemmer=self._stem, show_progress=show_progress
        )

    @classmethod
    def build(cls, texts: list[str], cfg: BM25Config, show_progress: bool = True) -> BM25Index:
        import bm25s

        index = cls(cfg)
        tokens = index._tokenize(texts, show_progress=show_progress)
        retriever = bm25s.BM25(k1=cfg.k1, b=cfg.b, method="lucene")
        retriever.index(tokens, show_progress=show_progress)
        index._retriever = retriever
        return index

    def save(self, path: Path) -> None:
        assert self._retriever is not None
        self._retriever.save(str(path), show_progress=False)
        (path / "purr_bm25.json").write_text(json.dumps(self.cfg.model_dump()), "utf-8")

    @classmethod
    def load(cls, path: Path, mmap: bool = True) -> BM25Index:
        cfg = BM25Config.model_validate_json((path / "purr_bm25.json").read_text("utf-8"))
        params = json.loads((path / "params.index.json").read_text("utf-8"))
        if params.get("method") == "lucene" and not (path / _NONOCCURRENCE).exists():
            return cls(cfg, SavedScores(path, params, mmap))
        import bm25s

        retriever = bm25s.BM25.load(str(path), mmap=mmap, show_progress=False)
        return cls(cfg, retriever)

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k passage rows and BM25 scores; empty arrays when no query term is indexed."""
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: list[str], k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        if self._retriever is None or self.size == 0:
            return [(np.zeros(0, np.int64), np.zeros(0, np.float32)) for _ in queries]
        vocab = self._retriever.vocab_dict
        out = []
        for words in analyse(queries, self.cfg, self._stem):
            ids = [vocab[w] for w in words if w in vocab]
            if not ids:
                out.append((np.zeros(0, np.int64), np.zeros(0, np.float32)))
                continue
            scores = self._retriever.get_scores_from_ids(ids)  # (n_docs,)
            kk = min(k, len(scores))
            top = np.argpartition(-scores, kk - 1)[:kk]
            top = top[np.argsort(-scores[top], kind="stable")]
            top = top[scores[top] > 0]
            out.append((top.astype(np.int64), scores[top].astype(np.float32)))
        return out


_NONOCCURRENCE = "nonoccurrence_array.index.npy"
STOPWORDS_EN = frozenset(
    (Path(__file__).parent / "data" / "stopwords-en.txt").read_text("utf-8").split()
)
"""bm25s' English stop words (``bm25s.stopwords.STOPWORDS_EN``; a test keeps them equal)."""


class SavedScores:
    """A saved bm25s index of the Lucene method read with numpy alone: the precomputed score
    matrix (CSC, memory-mapped) and the vocabulary. Scores add up in bm25s' order (token by
    token), so they are the same floats; searching needs neither bm25s nor scipy (0.18 s of
    imports in a new process)."""

    def __init__(self, path: Path, params: dict, mmap: bool = True) -> None:
        mode = "r" if mmap else None
        self.data = np.load(path / "data.csc.index.npy", mmap_mode=mode)
        self.indices = np.load(path / "indices.csc.index.npy", mmap_mode=mode)
        self.indptr = np.load(path / "indptr.csc.index.npy", mmap_mode=mode)
        self.dtype = np.dtype(params.get("dtype", "float32"))
        self.scores = {"num_docs": int(params["num_docs"])}
        self.vocab_dict = json.loads((path / "vocab.index.json").read_text("utf-8"))

    def get_scores_from_ids(self, ids: list[int]) -> np.ndarray:
        scores = np.zeros(self.scores["num_docs"], dtype=self.dtype)  # (n_docs,)
        for t in ids:
            start, end = int(self.indptr[t]), int(self.indptr[t + 1])
            scores[self.indices[start:end]] += self.data[start:end]  # one column: rows unique
        return scores


def analyse(texts: list[str], cfg: BM25Config, stem=None) -> list[list[str]]:
    """The terms BM25 indexes for each text: words of two or more characters, lower-cased,
    stop words dropped, stemmed; the same analysis ``BM25Index`` applies, so another engine fed
    these terms scores the same vocabulary.

    >>> analyse(["The towers are running"], BM25Config())
    [['tower', 'run']]
    """
    stem = stem if stem is not None else _stemmer(cfg)
    stop = STOPWORDS_EN if cfg.stopwords == "en" else frozenset()
    out = []
    for text in texts:
        words = [w for w in _split_words(text) if w not in stop]
        out.append(stem.stemWords(words) if stem is not None else words)
    return out


def _split_words(text: str) -> list[str]:
    """Lower-cased words of two or more characters (bm25s' default splitter)."""
    return _WORD.findall(text.lower())
