"""Cross-encoder snippet ranking with a calibrated 0-1 relevance.

Default: the packaged ms-marco-MiniLM-L-12-v2 int8 ONNX model. Any Hugging Face cross-encoder
(sequence classification with one logit) loads by hub id or path through transformers.
"""

from __future__ import annotations

import itertools
import re
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from retrieval import onnx_runtime
from retrieval.assets import resolve
from retrieval.config import RerankConfig
from retrieval.types import Hit


def calibrate(logits: np.ndarray, scale: float = 1.0, bias: float = 0.0) -> np.ndarray:
    """Platt-scaled relevance in [0, 1].

    >>> calibrate(np.array([0.0, 100.0])).round(3).tolist()
    [0.5, 1.0]
    """
    z = np.clip(scale * np.asarray(logits, dtype=np.float64) + bias, -60, 60)
    return 1.0 / (1.0 + np.exp(-z))


def fit_platt(
    logits: np.ndarray,
    labels: np.ndarray,
    *,
    smooth: bool = False,
    balanced: bool = False,
    iterations: int = 50,
) -> tuple[float, float]:
    """Fit ``scale, bias`` of ``sigmoid(scale*logit + bias)`` to 0/1 labels by Newton's method
    on the log loss (Platt 1999), the logits standardised and each step backtracked until the
    loss falls. ``smooth``: Platt's smoothed targets ((n+ + 1)/(n+ + 2), 1/(n- + 2)), so that a
    few labels do not drive the fit to 0 or 1; ``balanced``: both classes weighed equally.

    >>> s, b = fit_platt(np.array([-4.0, -2.0, 2.0, 4.0]), np.array([0, 0, 1, 1]), smooth=True)
    >>> bool(s > 0)
    True
    """
    x = np.asarray(logits, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    pos, neg = float(y.sum()), float(len(y) - y.sum())
    t = np.where(y > 0, (pos + 1) / (pos + 2), 1 / (neg + 2)) if smooth else y
    weight = (
        np.where(y > 0, len(y) / (2 * pos), len(y) / (2 * neg)) if balanced else np.ones_like(y)
    )
    mu, sd = float(x.mean()), float(x.std()) or 1.0
    X = np.stack([(x - mu) / sd, np.ones_like(x)], axis=1)  # standardised: a well-posed Newton

    def loss(w: np.ndarray) -> float:
        z = X @ w
        return float(np.sum(weight * (np.logaddexp(0, z) - t * z)))

    w = np.array([1.0, 0.0])
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-np.clip(X @ w, -60, 60)))
        grad = X.T @ (weight * (p - t))
        hess = X.T @ (X * (weight * p * (1 - p))[:, None]) + 1e-9 * np.eye(2)
        step, now = np.linalg.solve(hess, grad), loss(w)
        while loss(w - step) > now and np.abs(step).max() > 1e-12:  # backtrack
            step = step / 2
        w = w - step
        if np.abs(step).max() < 1e-10:
            break
    return float(w[0] / sd), float(w[1] - w[0] * mu / sd)


class Scorer(Protocol):
    """Scores (query, passage) pairs with raw logits."""

    def logits(self, query: str, passages: list[str]) -> np.ndarray: ...


class OnnxCrossEncoder:
    """A BERT-style ONNX cross-encoder emitting one logit per pair."""

    def __init__(self, model_dir: Path, max_length: int = 256, batch_size: int = 32):
        self.model_dir = Path(model_dir)
        self.max_length = max_length
        self.batch_size = batch_size

    def load(self) -> None:
        """Open the ONNX session and tokenizer now (otherwise the first call does)."""
        onnx_runtime.session(str(self.model_dir / "model.onnx"))
        onnx_runtime.tokenizer(self.model_dir, self.max_length)

    def logits(self, query: str, passages: list[str]) -> np.ndarray:
        return self.pair_logits([(query, p) for p in passages])

    def pair_logits(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """One logit per (query, passage) pair, in length-sorted batches across all of them."""
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        sess = onnx_runtime.session(str(self.model_dir / "model.onnx"))
        tok = onnx_runtime.tokenizer(self.model_dir, self.max_length)
        encs = tok.encode_batch(pairs)
        out = np.zeros(len(pairs), dtype=np.float32)
        for batch in onnx_runtime.length_sorted_batches(
            [len(e.ids) for e in encs], self.batch_size
        ):
            inputs = onnx_runtime.pad([encs[i] for i in batch])
            out[batch] = sess.run(None, inputs)[0][:, 0]  # (batch, 1) -> (batch,)
        return out


class HFCrossEncoder:
    """Any transformers sequence-classification cross-encoder (hub id or path)."""

    def __init__(self, load_id: str, max_length: int = 256, batch_size: int = 32):
        self.load_id = load_id
        self.max_length = max_length
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._model = None
        self._tok = None

    def _load(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            from retrieval.extras import require

            require("hub", f"the PyTorch reranker {self.load_id!r}")
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

            try:
                self._tok = AutoTokenizer.from_pretrained(self.load_id)
                self._model = AutoModelForSequenceClassification.from_pretrained(
                    self.load_id
                ).eval()
            except OSError as e:
                raise FileNotFoundError(
                    f"cannot load cross-encoder '{self.load_id}' ({e}); offline, only local paths and "
                    "models already in the HF cache load"
                ) from None

    def logits(self, query: str, passages: list[str]) -> np.ndarray:
        import torch

        self._load()
        assert self._model is not None and self._tok is not None
        out = []
        for i in range(0, len(passages), self.batch_size):
            chunk = passages[i : i + self.batch_size]
            enc = self._tok(
                [query] * len(chunk),
                chunk,
                truncation=True,
                max_length=self.max_length,
                padding=True,
                return_tensors="pt",
            )
            with torch.inference_mode():
                logits = self._model(**enc).logits  # (batch, n_labels)
            out.append(logits[:, -1].float().numpy())
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)


class Reranker:
    """Reranks hits by cross-encoder relevance; ``relevance`` is the calibrated 0-1 score."""

    def __init__(self, scorer: Scorer, cfg: RerankConfig, prefilter: Scorer | None = None):
        self.scorer = scorer
        self.cfg = cfg
        self.prefilter = prefilter

    def load(self) -> None:
        """Load the scorers' models now (otherwise the first call does)."""
        for scorer in (self.scorer, self.prefilter):
            load = getattr(scorer, "load", None)
            if callable(load):
                load()

    def relevance(self, query: str, passages: list[str]) -> np.ndarray:
        """Calibrated relevance of each passage to the query."""
        return calibrate(
            self.scorer.logits(query, passages),
            self.cfg.calibration_scale,
            self.cfg.calibration_bias,
        )

    def rerank(self, query: str, hits: list[Hit], top_k: int | None = None) -> list[Hit]:
        """Hits sorted by relevance (optionally mixed with the first-stage score)."""
        if not hits:
            return []
        return self._ranked(hits, self.relevance(query, [h.snippet.text for h in hits]), top_k)

    def _fused(self, hits: list[Hit], rel: np.ndarray) -> np.ndarray:
        """The final score: relevance mixed with the first-stage score (min-max over the
        query's hits) at ``fuse_weight``."""
        w = self.cfg.fuse_weight
        if w <= 0:
            return rel
        first = np.array([h.score for h in hits], dtype=np.float64)
        span = first.max() - first.min()
        first = (first - first.min()) / span if span > 0 else np.ones_like(first)
        return (1 - w) * rel + w * first

    def _ranked(
        self,
        hits: list[Hit],
        rel: np.ndarray,
        top_k: int | None,
        head: np.ndarray | None = None,
    ) -> list[Hit]:
        """The hits by final score. With ``head`` (the indices the main model scored under a
        prefilter) those come first; the others follow with the prefilter's relevance, tagged
        ``+prefilter``, their final score held below the head's lowest."""
        final = self._fused(hits, rel)
        order = np.argsort(-final, kind="stable")
        main = np.ones(len(hits), dtype=bool)
        if head is not None:
            main = np.isin(np.arange(len(hits)), head)
            order = np.concatenate([order[main[order]], order[~main[order]]])
            if main.any():
                below = max(float(np.nextafter(final[main].min(), -np.inf)), 0.0)
                final = np.where(main, final, np.minimum(final, below))
        order = order[: top_k or len(hits)]
        return [
            replace(
                hits[i],
                score=float(final[i]),
                rank=r,
                relevance=float(rel[i]),
                retriever=f"{hits[i].retriever}+{'rerank' if main[i] else 'prefilter'}",
                scores={**hits[i].scores, "rerank" if main[i] else "prefilter": float(rel[i])},
            )
            for r, i in enumerate(order)
        ]

    def rerank_batch(
        self, queries: list[str], hits: list[list[Hit]], top_k: int | None = None
    ) -> list[list[Hit]]:
        """``rerank`` of each query's hits; an ONNX scorer scores every pair in one call (its
        batches sorted by length across the queries: less padding than one call per query).

        With ``stop_at``, each query's first ``probe`` hits are scored first, and a query whose
        best reaches ``stop_at`` keeps those alone: its other hits are never scored. With
        ``matching_sentences``, a window is scored on its sentences that share a word with the
        query (the hit keeps its whole text). With a ``prefilter``, see ``_cascade``."""
        if self.prefilter is not None:
            return self._cascade(queries, hits, top_k)
        pair_logits = getattr(self.scorer, "pair_logits", None)
        if pair_logits is None:
            return [self.rerank(q, h, top_k) for q, h in zip(queries, hits, strict=True)]
        stop = self.cfg.stop_at
        first = [hs[: self.cfg.probe] if stop is not None else hs for hs in hits]
        rel = self._relevance(pair_logits, queries, first)
        if stop is not None:
            rest = [
                hs[len(f) :] if r.size and r.max() < stop else []
                for hs, f, r in zip(hits, first, rel, strict=True)
            ]
            more = self._relevance(pair_logits, queries, rest)
            first = [f + r for f, r in zip(first, rest, strict=True)]
            rel = [np.concatenate([a, b]) for a, b in zip(rel, more, strict=True)]
        return [self._ranked(hs, r, top_k) if hs else [] for hs, r in zip(first, rel, strict=True)]

    def _cascade(
        self, queries: list[str], hits: list[list[Hit]], top_k: int | None
    ) -> list[list[Hit]]:
        """The prefilter scores every hit; each query's ``prefilter_keep`` best (by final
        score) are scored again by the main model and come first, in its order; the rest
        follow in the prefilter's, with its relevance (calibrated as the main model's: the
        prefilter is meant to be a student distilled from it, its logits on the same scale)."""
        assert self.prefilter is not None
        cheap = self._relevance(_pairwise(self.prefilter), queries, hits)
        keep = [
            np.argsort(-self._fused(hs, c), kind="stable")[: self.cfg.prefilter_keep]
            if hs
            else np.zeros(0, dtype=int)
            for hs, c in zip(hits, cheap, strict=True)
        ]
        kept = [[hs[i] for i in k] for hs, k in zip(hits, keep, strict=True)]
        main = self._relevance(_pairwise(self.scorer), queries, kept)
        out = []
        for hs, c, k, m in zip(hits, cheap, keep, main, strict=True):
            rel = c.copy()
            rel[k] = m
            out.append(self._ranked(hs, rel, top_k, head=k) if hs else [])
        return out

    def _relevance(
        self, pair_logits: Any, queries: list[str], hits: list[list[Hit]]
    ) -> list[np.ndarray]:
        """Calibrated relevance of each query's hits, every pair in one call."""
        pairs = [
            (q, self._scored_text(q, h.snippet.text))
            for q, hs in zip(queries, hits, strict=True)
            for h in hs
        ]
        if not pairs:
            return [np.zeros(0) for _ in hits]
        rel = calibrate(pair_logits(pairs), self.cfg.calibration_scale, self.cfg.calibration_bias)
        bounds = np.cumsum([0] + [len(hs) for hs in hits])
        return [rel[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

    def _scored_text(self, query: str, text: str) -> str:
        return matching_sentences(query, text) if self.cfg.matching_sentences else text


_WORD = re.compile(r"[^\W_]+")


def matching_sentences(query: str, text: str) -> str:
    """The sentences of ``text`` that share a word other than a stop word with ``query``, in
    order (all of ``text`` when none does).

    >>> matching_sentences("When did Curie win?", "Curie won in 1911. Paris is large. She won.")
    'Curie won in 1911.'
    """
    from retrieval.bm25 import STOPWORDS_EN
    from retrieval.sentences import split

    words = {w for w in _WORD.findall(query.lower()) if w not in STOPWORDS_EN}
    kept = [s for s in split(text) if words & set(_WORD.findall(s.lower()))]
    return " ".join(kept) if kept else text


def build_reranker(cfg: RerankConfig) -> Reranker:
    """The configured reranker: ONNX folders run on onnxruntime, anything else on transformers."""
    prefilter = _scorer(cfg.prefilter, cfg) if cfg.prefilter else None
    return Reranker(_scorer(cfg.model, cfg), cfg, prefilter)


def _scorer(model: str, cfg: RerankConfig) -> Scorer:
    resolved = resolve(model)
    if resolved.path is not None and (resolved.path / "model.onnx").exists():
        return OnnxCrossEncoder(resolved.path, cfg.max_length, cfg.batch_size)
    return HFCrossEncoder(resolved.load_id, cfg.max_length, cfg.batch_size)


def _pairwise(scorer: Scorer) -> Any:
    """The scorer's ``pair_logits``, or one ``logits`` call per run of pairs with one query."""
    pair_logits = getattr(scorer, "pair_logits", None)
    if pair_logits is not None:
        return pair_logits

    def by_query(pairs: list[tuple[str, str]]) -> np.ndarray:
        runs = [
            scorer.logits(q, [p for _, p in group])
            for q, group in itertools.groupby(pairs, key=lambda pair: pair[0])
        ]
        return np.concatenate(runs) if runs else np.zeros(0, dtype=np.float32)

    return by_query
