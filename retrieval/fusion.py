"""Fusing ranked lists from several retrievers (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[int]], k: int = 60
) -> list[tuple[int, float]]:
    """RRF (Cormack et al. 2009): score(d) = sum over lists of 1 / (k + rank), rank from 1.

    >>> reciprocal_rank_fusion([[1, 2, 3], [3, 1]], k=60)[0][0]
    1
    """
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def _minmax(x: np.ndarray) -> np.ndarray:
    if len(x) == 0:
        return x
    span = float(x.max() - x.min())
    return (x - x.min()) / span if span > 0 else np.ones_like(x)


def weighted_score_fusion(
    results: Sequence[tuple[Sequence[int], Sequence[float]]], weights: Sequence[float]
) -> list[tuple[int, float]]:
    """Convex combination of min-max normalised scores; a missing item scores 0 in that list.

    >>> weighted_score_fusion([([1, 2], [10.0, 5.0]), ([2, 3], [0.9, 0.1])], [0.25, 0.75])
    [(2, 0.75), (1, 0.25), (3, 0.0)]
    """
    if len(results) != len(weights):
        raise ValueError(
            f"got {len(results)} result lists but {len(weights)} weights; pass one weight per list"
        )
    scores: dict[int, float] = {}
    for (ids, raw), w in zip(results, weights, strict=True):
        norm = _minmax(np.asarray(raw, dtype=np.float64))
        for item, s in zip(ids, norm, strict=True):
            scores[int(item)] = scores.get(int(item), 0.0) + w * float(s)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
