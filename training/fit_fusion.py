"""``purr train fusion``: fit the verifier's calibrated fusion (``editor.attribution.fusion``).

Features come from a trained NLI model folder, the slot checks and coverage over prepared
examples (``purr train attribution --save-splits``). The weights are fitted on the **train**
split (at most ``train_per_source`` rows a source, classes weighted equally); the temperature
on one half of the **dev** split (by group), and the other half reports: balanced accuracy of
NLI alone and fused (supported vs rest at 0.5), and the expected calibration error of
P(supported) before and after calibration, with a reliability plot. Nothing here sees test
data. ``fusion.json`` goes into the model folder, where ``attribution.type=purr`` finds it.
"""

from __future__ import annotations

import json
import logging
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from editor.attribution.fusion import FEATURES, FUSION_FILE, Fusion, softmax
from editor.attribution.nli import LABELS
from training.nli_data import NLIExample, is_dev, read_splits
from training.nli_metrics import balanced_accuracy, expected_calibration_error, roc_auc

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FusionData:
    X: np.ndarray  # (n, features)
    y: np.ndarray  # (n,) label ids in LABELS order
    sources: list[str]


def sample(rows: list[NLIExample], per_source: int, seed: int) -> list[NLIExample]:
    """At most ``per_source`` rows of each source (seeded), sources in sorted order."""
    by: dict[str, list[NLIExample]] = defaultdict(list)
    for r in rows:
        by[r.source].append(r)
    rng = random.Random(seed)
    out: list[NLIExample] = []
    for name in sorted(by):
        group = by[name]
        out.extend(rng.sample(group, per_source) if len(group) > per_source else group)
    return out


def collect(
    verifier: Any, rows: list[NLIExample], batch: int = 64, progress: bool = True
) -> FusionData:
    """Feature rows of ``rows`` from ``verifier.features`` (a ``FusedVerifier``)."""
    parts = []
    for i in tqdm(range(0, len(rows), batch), desc="fusion features", disable=not progress):
        chunk = rows[i : i + batch]
        X, _, _ = verifier.features([(r.premise, r.hypothesis) for r in chunk])
        parts.append(X)
    X = np.concatenate(parts) if parts else np.zeros((0, len(FEATURES)))
    y = np.array([LABELS.index(r.label) for r in rows], dtype=int)
    return FusionData(X, y, [r.source for r in rows])


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


def binary_scores(y: np.ndarray, p_supported: np.ndarray) -> dict[str, float]:
    target = (y == 0).astype(int)
    return {
        "balanced_accuracy": balanced_accuracy(target, p_supported),
        "roc_auc": roc_auc(target, p_supported),
        "ece": expected_calibration_error(target, p_supported),
    }


def report(data: FusionData, p_nli: np.ndarray, p_fused: np.ndarray) -> dict[str, Any]:
    """Per source and mean (over sources) scores of NLI alone and fused on ``data``."""
    out: dict[str, Any] = {}
    names = sorted(set(data.sources))
    for name in names:
        idx = np.array([s == name for s in data.sources])
        out[name] = {
            "rows": int(idx.sum()),
            "nli": binary_scores(data.y[idx], p_nli[idx]),
            "fused": binary_scores(data.y[idx], p_fused[idx]),
        }
    out["all"] = {
        "rows": len(data.y),
        "nli": binary_scores(data.y, p_nli),
        "fused": binary_scores(data.y, p_fused),
    }
    return out


def reliability_plot(y: np.ndarray, curves: dict[str, np.ndarray], path: Path, bins: int = 10):
    """Observed rate of ``supported`` against predicted P(supported), one line per curve."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    target = (y == 0).astype(float)
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], color="grey", ls="--", lw=0.8, label="perfect")
    for name, p in curves.items():
        idx = np.minimum((p * bins).astype(int), bins - 1)
        xs, ys = [], []
        for b in range(bins):
            m = idx == b
            if m.sum() >= 5:
                xs.append(p[m].mean())
                ys.append(target[m].mean())
        ece = expected_calibration_error(target, p, bins)
        ax.plot(xs, ys, marker="o", label=f"{name} (ECE {ece:.3f})")
    ax.set_xlabel("predicted P(supported)")
    ax.set_ylabel("observed share supported")
    ax.set_title("verifier reliability, dev (report half)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def fit_fusion(
    verifier: Any,
    splits_path: str | Path,
    out: str | Path,
    *,
    train_per_source: int = 200,
    dev_per_source: int = 200,
    seed: int = 0,
    progress: bool = True,
) -> dict[str, Any]:
    """Fit, calibrate, report; write ``fusion.json``, ``fusion_metrics.json`` and
    ``reliability.png`` into ``out``. ``verifier`` is a ``FusedVerifier`` over the NLI model
    (its own fusion is not used: only ``features``)."""
    splits = read_splits(splits_path)
    train = sample(splits.train, train_per_source, seed)
    dev = sample(splits.dev, dev_per_source, seed)
    calib_rows = [r for r in dev if is_dev(r.group, 0.5, salt="purr-fusion-calibration")]
    report_rows = [r for r in dev if not is_dev(r.group, 0.5, salt="purr-fusion-calibration")]
    if not train or not calib_rows or not report_rows:
        raise ValueError(f"{splits_path}: too few rows to fit and calibrate a fusion")
    tr = collect(verifier, train, progress=progress)
    W, b, mean, scale = fit_weights(tr.X, tr.y)
    raw = Fusion(W=W.tolist(), b=b.tolist(), mean=mean.tolist(), scale=scale.tolist())
    ca = collect(verifier, calib_rows, progress=progress)
    temperature = fit_temperature(raw.logits(ca.X), ca.y)
    rep = collect(verifier, report_rows, progress=progress)
    fused = Fusion(
        W=raw.W,
        b=raw.b,
        mean=raw.mean,
        scale=raw.scale,
        temperature=temperature,
        meta={
            "train_rows": len(tr.y),
            "calibration_rows": len(ca.y),
            "report_rows": len(rep.y),
            "splits": str(splits_path),
            "seed": seed,
        },
    )
    p_nli = np.exp(rep.X[:, 0])  # P(supported) of the NLI model alone
    p_raw = raw.probabilities(rep.X)[:, 0]
    p_fused = fused.probabilities(rep.X)[:, 0]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fused.save(out / FUSION_FILE)
    metrics = {
        "primary": "report/all/fused/balanced_accuracy",
        "temperature": temperature,
        "weights": {
            lab: dict(zip(FEATURES, row, strict=True))
            for lab, row in zip(LABELS, W.tolist(), strict=True)
        },
        "report": report(rep, p_nli, p_fused),
        "ece_before_temperature": expected_calibration_error((rep.y == 0).astype(int), p_raw),
    }
    (out / "fusion_metrics.json").write_text(json.dumps(metrics, indent=2, default=float))
    reliability_plot(
        rep.y,
        {"NLI alone": p_nli, "fused, uncalibrated": p_raw, "fused, calibrated": p_fused},
        out / "reliability.png",
    )
    return metrics
