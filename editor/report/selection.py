"""The attribution report: at most M evidence snippets chosen to cover the queries, then scored.

Cover(A) = sum over queries i of max over e in A of S_relevance(q_i, e), maximised by
exhaustive search over subsets of size <= M (RARR section 3.3).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

MAX_EXHAUSTIVE = 200_000  # subsets; above this a greedy search (1 - 1/e of optimal) is used


def coverage(relevance: np.ndarray, subset: tuple[int, ...]) -> float:
    """Cover(A) for the evidence columns in ``subset`` of a (queries, evidence) matrix.

    >>> coverage(np.array([[0.9, 0.1], [0.2, 0.8]]), (0, 1))
    1.7
    """
    if not subset or relevance.size == 0:
        return 0.0
    return float(np.round(relevance[:, list(subset)].max(axis=1).sum(), 10))


def select_evidence(relevance: np.ndarray, max_evidence: int = 5) -> tuple[int, ...]:
    """Indices (sorted) of at most ``max_evidence`` evidence maximising coverage of the queries.

    ``relevance`` is (n_queries, n_evidence). Exhaustive over all subsets of size
    min(M, n) when that is at most ``MAX_EXHAUSTIVE`` subsets, greedy otherwise. Coverage is
    monotone, so the best subset has the full size; ties go to the earlier subset.

    >>> rel = np.array([[0.9, 0.8, 0.0], [0.0, 0.7, 0.6], [0.0, 0.0, 0.5]])
    >>> select_evidence(rel, 1)
    (1,)
    >>> select_evidence(rel, 2)
    (0, 2)
    """
    if max_evidence < 1:
        raise ValueError(f"max_evidence must be >= 1, got {max_evidence}")
    n_evidence = relevance.shape[1] if relevance.ndim == 2 else 0
    if n_evidence == 0:
        return ()
    size = min(max_evidence, n_evidence)
    if relevance.shape[0] == 0:
        return tuple(range(size))
    if math.comb(n_evidence, size) <= MAX_EXHAUSTIVE:
        best = max(
            itertools.combinations(range(n_evidence), size), key=lambda s: coverage(relevance, s)
        )
        return tuple(best)
    chosen: list[int] = []
    for _ in range(size):
        rest = [j for j in range(n_evidence) if j not in chosen]
        chosen.append(max(rest, key=lambda j: coverage(relevance, (*chosen, j))))
    return tuple(sorted(chosen))
