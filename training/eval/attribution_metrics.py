"""Attribution metrics on binary targets (supported vs rest) from P(supported) scores.

Pure numpy functions. The primary number is ``balanced_accuracy`` at threshold 0.5 (the
threshold auto-AIS uses); ``roc_auc`` and the best-threshold balanced accuracy show how much a
recalibrated threshold would recover.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _arrays(y_true: Sequence[int] | np.ndarray, scores: Sequence[float] | np.ndarray):
    y = np.asarray(y_true, dtype=np.int64)
    s = np.asarray(scores, dtype=np.float64)
    if y.shape != s.shape or y.ndim != 1:
        raise ValueError(f"y_true and scores must be 1-d of equal length, got {y.shape} {s.shape}")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("y_true must hold 0/1 values (1 = supported)")
    return y, s


def balanced_accuracy(
    y_true: Sequence[int] | np.ndarray, scores: Sequence[float] | np.ndarray, threshold: float = 0.5
) -> float:
    """Mean of recall on positives and recall on negatives, predicting 1 when score >= threshold.
    A class absent from ``y_true`` is left out of the mean; NaN when ``y_true`` is empty.

    >>> balanced_accuracy([1, 1, 0, 0, 0, 0], [0.9, 0.4, 0.6, 0.1, 0.2, 0.3])
    0.625
    """
    y, s = _arrays(y_true, scores)
    pred = s >= threshold
    recalls = [float((pred[y == c] == bool(c)).mean()) for c in (1, 0) if (y == c).any()]
    return float(np.mean(recalls)) if recalls else float("nan")


def roc_auc(y_true: Sequence[int] | np.ndarray, scores: Sequence[float] | np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney U with mid-ranks for ties); NaN with one class.

    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    >>> roc_auc([0, 1], [0.5, 0.5])
    0.5
    """
    y, s = _arrays(y_true, scores)
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s), dtype=np.float64)
    sorted_s = s[order]
    i = 0
    while i < len(s):  # mid-ranks over runs of ties, 1-based
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    u = ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def best_threshold(
    y_true: Sequence[int] | np.ndarray, scores: Sequence[float] | np.ndarray
) -> tuple[float, float]:
    """The threshold (among the scores) with the highest balanced accuracy, and that accuracy.

    >>> best_threshold([1, 1, 0, 0, 0, 0], [0.9, 0.4, 0.6, 0.1, 0.2, 0.3])
    (0.4, 0.875)
    """
    y, s = _arrays(y_true, scores)
    if len(y) == 0:
        return 0.5, float("nan")
    best_t, best_b = 0.5, -1.0
    for t in np.unique(s):
        b = balanced_accuracy(y, s, float(t))
        if b > best_b:
            best_t, best_b = float(t), b
    return best_t, best_b


def binary_report(
    y_true: Sequence[int] | np.ndarray, scores: Sequence[float] | np.ndarray
) -> dict[str, float]:
    """``balanced_accuracy`` (primary, at 0.5), ``best_threshold``, ``balanced_accuracy_best``,
    ``roc_auc``, ``n`` and ``positive_rate``."""
    y, s = _arrays(y_true, scores)
    t, b = best_threshold(y, s)
    return {
        "balanced_accuracy": balanced_accuracy(y, s, 0.5),
        "balanced_accuracy_best": b,
        "best_threshold": t,
        "roc_auc": roc_auc(y, s),
        "n": float(len(y)),
        "positive_rate": float(y.mean()) if len(y) else float("nan"),
    }


def expected_calibration_error(
    y_true: Sequence[int] | np.ndarray, p: Sequence[float] | np.ndarray, bins: int = 10
) -> float:
    """ECE of probabilities ``p`` for binary outcomes ``y_true``: the mean gap between the
    predicted probability and the observed rate over ``bins`` equal-width bins, weighted by how
    many predictions fall in each.

    >>> expected_calibration_error([1, 0, 1, 0], [1.0, 0.0, 1.0, 0.0])
    0.0
    >>> round(expected_calibration_error([1, 1, 0, 0], [0.9, 0.9, 0.9, 0.9]), 2)
    0.4
    """
    y = np.asarray(y_true, dtype=float)
    q = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    if len(y) == 0:
        return float("nan")
    idx = np.minimum((q * bins).astype(int), bins - 1)
    gap = 0.0
    for b in range(bins):
        m = idx == b
        if m.any():
            gap += m.sum() * abs(q[m].mean() - y[m].mean())
    return float(gap / len(y))
