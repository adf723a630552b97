"""Calibrated fusion: one 3-way judgement from the NLI scores, the slot verdict and coverage.

Features of a (claim, evidence) pair (``FEATURES``, in order):

- ``logit_supported``, ``logit_contradicted``, ``logit_not_supported``: the NLI model's scores
  as log-odds (clipped to [1e-4, 1 - 1e-4]; for long evidence the per-window maxima / minimum),
  so near-certain scores stay distinguishable;
- ``slot_contradicted``, ``slot_consistent``: the slot check's verdict (both 0 for unknown);
- ``word_coverage``: the share of the claim's content words found in the evidence;
- ``slot_coverage``: the share of the claim's typed slots (names, numbers, dates) whose words
  all occur in the evidence (1.0 when the claim has none);
- ``contradicted_x_coverage``, ``supported_x_coverage``: the NLI log-odds times
  ``word_coverage``, so that evidence about something else (little in common with the claim)
  can neither contradict nor support it however the NLI model reads it.

``Fusion`` is a multinomial logistic regression over them (weights ``W``: 3 x features, bias
``b``), divided by a temperature fitted on dev data afterwards, so its probabilities are
calibrated. It is stored as JSON (``fusion.json`` beside the NLI model it was fitted with) and
fitted by ``training.fit.fusion``. Maths only: no model loading here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from editor.attribution.nli import LABELS
from retrieval.files import write_text

FEATURES = (
    "logit_supported",
    "logit_contradicted",
    "logit_not_supported",
    "slot_contradicted",
    "slot_consistent",
    "word_coverage",
    "slot_coverage",
    "contradicted_x_coverage",
    "supported_x_coverage",
)
FUSION_FILE = "fusion.json"


def feature_row(
    supported: float,
    contradicted: float,
    not_supported: float,
    slot_found: str,
    word_coverage: float,
    slot_coverage: float,
) -> list[float]:
    """The feature vector of one pair, in ``FEATURES`` order.

    >>> feature_row(0.9, 0.05, 0.05, "matches", 1.0, 1.0)[3:7]
    [0.0, 1.0, 1.0, 1.0]
    """
    return [
        _logit(supported),
        _logit(contradicted),
        _logit(not_supported),
        float(slot_found == "differs"),
        float(slot_found == "matches"),
        float(word_coverage),
        float(slot_coverage),
        _logit(contradicted) * float(word_coverage),
        _logit(supported) * float(word_coverage),
    ]


def _logit(p: float, eps: float = 1e-4) -> float:
    p = min(max(p, eps), 1 - eps)
    return math.log(p / (1 - p))


def softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax of logits ``z`` (n, k)."""
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class Fusion:
    """Weights of the fused, calibrated 3-way classifier (rows of ``W`` follow ``LABELS``)."""

    W: list[list[float]]
    b: list[float]
    temperature: float = 1.0
    features: tuple[str, ...] = FEATURES
    labels: tuple[str, ...] = tuple(LABELS)
    mean: list[float] = field(default_factory=lambda: [0.0] * len(FEATURES))
    scale: list[float] = field(default_factory=lambda: [1.0] * len(FEATURES))
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        k, d = len(self.labels), len(self.features)
        if np.shape(self.W) != (k, d) or len(self.b) != k:
            raise ValueError(
                f"fusion weights must be {k} x {d} with {k} biases, got "
                f"{np.shape(self.W)} and {len(self.b)}"
            )
        if not self.temperature > 0:
            raise ValueError(f"fusion temperature must be > 0, got {self.temperature}")

    def logits(self, X: np.ndarray) -> np.ndarray:
        """Uncalibrated logits (n, 3) of feature rows ``X`` (n, features)."""
        Z = (np.asarray(X, dtype=float) - np.asarray(self.mean)) / np.asarray(self.scale)
        return Z @ np.asarray(self.W).T + np.asarray(self.b)

    def probabilities(self, X: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
        """Calibrated probabilities (n, 3), columns in ``labels`` order."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return softmax(self.logits(X) / self.temperature)

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        payload = {
            "features": list(self.features),
            "labels": list(self.labels),
            "W": [list(map(float, row)) for row in self.W],
            "b": list(map(float, self.b)),
            "mean": list(map(float, self.mean)),
            "scale": list(map(float, self.scale)),
            "temperature": float(self.temperature),
            "meta": self.meta,
        }
        write_text(path, json.dumps(payload, indent=2))
        return path

    @classmethod
    def load(cls, path: str | Path) -> Fusion:
        """A fusion saved by ``save``; a ValueError says what is wrong with a broken file."""
        path = Path(path)
        try:
            raw = json.loads(path.read_text())
            fusion = cls(
                W=raw["W"],
                b=raw["b"],
                temperature=raw.get("temperature", 1.0),
                features=tuple(raw["features"]),
                labels=tuple(raw["labels"]),
                mean=raw.get("mean", [0.0] * len(raw["features"])),
                scale=raw.get("scale", [1.0] * len(raw["features"])),
                meta=raw.get("meta", {}),
            )
        except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            raise ValueError(
                f"{path}: not a fusion file ({e}); refit it with purr train fusion"
            ) from None
        if fusion.features != FEATURES or fusion.labels != tuple(LABELS):
            raise ValueError(
                f"{path}: fitted on features {list(fusion.features)} / labels "
                f"{list(fusion.labels)}, this purr computes {list(FEATURES)} / {LABELS}; "
                "refit it with purr train fusion"
            )
        return fusion


def fit_weights(
    X: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 3000, lr: float = 0.05
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Multinomial logistic regression on standardised features, classes weighted equally
    (Adam, full batch). Returns ``W`` (3, d), ``b`` (3,), the feature mean and scale."""
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-6] = 1.0
    Z = (X - mean) / scale
    n, d = Z.shape
    k = len(LABELS)
    counts = np.bincount(y, minlength=k).astype(float)
    w = (n / (k * np.maximum(counts, 1)))[y]  # (n,) class weights
    Y = np.eye(k)[y]
    W, b = np.zeros((k, d)), np.zeros(k)
    m = [np.zeros_like(W), np.zeros_like(b)]
    v = [np.zeros_like(W), np.zeros_like(b)]
    for t in range(1, steps + 1):
        P = softmax(Z @ W.T + b)
        G = (P - Y) * w[:, None] / w.sum()  # (n, k)
        grads = [G.T @ Z + l2 * W, G.sum(axis=0)]
        for j, (param, g) in enumerate(zip((W, b), grads, strict=True)):
            m[j] = 0.9 * m[j] + 0.1 * g
            v[j] = 0.999 * v[j] + 0.001 * g * g
            param -= lr * (m[j] / (1 - 0.9**t)) / (np.sqrt(v[j] / (1 - 0.999**t)) + 1e-8)
    return W, b, mean, scale


def fit_temperature(logits: np.ndarray, y: np.ndarray) -> float:
    """The temperature minimising the negative log-likelihood of ``y`` (grid in log space,
    then refined)."""

    def nll(t: float) -> float:
        P = softmax(logits / t)
        return float(-np.mean(np.log(P[np.arange(len(y)), y] + 1e-12)))

    grid = np.exp(np.linspace(np.log(0.05), np.log(20), 200))
    best = min(grid, key=nll)
    fine = np.linspace(best * 0.9, best * 1.1, 41)
    return float(min(fine, key=nll))
