"""``purr train fusion``: fit the verifier's calibrated fusion (``editor.attribution.fusion``).

Features come from a trained NLI model folder, the slot checks and coverage over prepared
examples (``purr train attribution --save-splits``). The weights are fitted on the **train**
split (at most ``train_per_source`` rows a source, classes weighted equally), or with
``fit_on="dev"`` on a quarter of the dev split (the NLI model's scores on rows it trained on
are overconfident, so a fusion fitted there learns to ignore the other features); the
temperature on another quarter of the **dev** split (by group), and the other half reports:
balanced accuracy of NLI alone and fused (supported vs rest at 0.5), and the expected
calibration error of P(supported) before and after calibration, with a reliability plot. Nothing here sees test
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

from editor.attribution.fusion import (  # the fitting maths live with the model
    FEATURES,
    FUSION_FILE,
    Fusion,
    fit_temperature,
    fit_weights,
)
from editor.attribution.nli import LABELS
from editor.verdicts import NOT_SUPPORTED
from retrieval.files import write_text
from training.data.nli import NLIExample, is_dev, read_splits
from training.data.nli_sources import SHARED
from training.eval.attribution_metrics import balanced_accuracy, expected_calibration_error, roc_auc
from training.figures import save_figure

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


def unrelated(rows: list[NLIExample], share: float, seed: int) -> list[NLIExample]:
    """``share`` x len(rows) pairs of a claim with the premise of another group (evidence about
    something else), labelled ``not_supported``: what the verifier meets when research brings
    back off-topic snippets, which no NLI set holds."""
    rng = random.Random(seed)
    n = round(share * len(rows))
    out: list[NLIExample] = []
    for i in range(n * 3):
        if len(out) >= n or len(rows) < 2:
            break
        a, b = rng.sample(rows, 2)
        if a.group == b.group:
            continue
        out.append(
            NLIExample(
                f"unrelated:{i}", "unrelated", b.premise, a.hypothesis, NOT_SUPPORTED, a.group
            )
        )
    return out


def collect(
    verifier: Any, rows: list[NLIExample], batch: int = 64, progress: bool = True
) -> FusionData:
    """Feature rows of ``rows`` from ``verifier.features`` (a ``FusedVerifier``)."""
    X = verifier.feature_matrix([(r.premise, r.hypothesis) for r in rows], batch, progress)
    y = np.array([LABELS.index(r.label) for r in rows], dtype=int)
    return FusionData(X, y, [r.source for r in rows])


def binary_scores(y: np.ndarray, P: np.ndarray) -> dict[str, float]:
    """Supported vs rest from 3-way probabilities ``P`` (n, 3): balanced accuracy at
    P(supported) >= 0.5 and with the 3-way label (argmax), ROC-AUC, and the ECE of
    P(supported)."""
    target = (y == 0).astype(int)
    p = P[:, 0]
    label = (P.argmax(axis=1) == 0).astype(float)
    return {
        "balanced_accuracy": balanced_accuracy(target, p),
        "balanced_accuracy_label": balanced_accuracy(target, label),
        "roc_auc": roc_auc(target, p),
        "ece": expected_calibration_error(target, p),
    }


def report(data: FusionData, P_nli: np.ndarray, P_fused: np.ndarray) -> dict[str, Any]:
    """Per source and pooled scores of NLI alone and fused on ``data``, and the mean over the
    four shared sets (``shared``)."""
    out: dict[str, Any] = {}
    for name in sorted(set(data.sources)):
        idx = np.array([s == name for s in data.sources])
        out[name] = {
            "rows": int(idx.sum()),
            "nli": binary_scores(data.y[idx], P_nli[idx]),
            "fused": binary_scores(data.y[idx], P_fused[idx]),
        }
    out["all"] = {
        "rows": len(data.y),
        "nli": binary_scores(data.y, P_nli),
        "fused": binary_scores(data.y, P_fused),
    }
    shared = [n for n in SHARED if n in out]
    if shared:
        out["shared"] = {
            which: {
                k: float(np.nanmean([out[n][which][k] for n in shared]))
                for k in out[shared[0]][which]
            }
            for which in ("nli", "fused")
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
    return save_figure(fig, path)


def fit_fusion(
    verifier: Any,
    splits_path: str | Path,
    out: str | Path,
    *,
    train_per_source: int = 200,
    dev_per_source: int = 200,
    fit_on: str = "train",
    unrelated_share: float = 0.15,
    seed: int = 0,
    progress: bool = True,
) -> dict[str, Any]:
    """Fit, calibrate, report; write ``fusion.json``, ``fusion_metrics.json`` and
    ``reliability.png`` into ``out``. ``verifier`` is a ``FusedVerifier`` over the NLI model
    (its own fusion is not used: only ``features``)."""
    if fit_on not in ("train", "dev"):
        raise ValueError(f"fit_on must be 'train' or 'dev', got {fit_on!r}")
    splits = read_splits(splits_path)
    dev = sample(splits.dev, dev_per_source, seed)
    report_rows = [r for r in dev if not is_dev(r.group, 0.5, salt="purr-fusion-calibration")]
    calib_rows = [r for r in dev if is_dev(r.group, 0.5, salt="purr-fusion-calibration")]
    if fit_on == "train":
        train = sample(splits.train, train_per_source, seed)
    else:  # the NLI model never saw dev rows: its scores there are as confident as in use
        train = [r for r in calib_rows if not is_dev(r.group, 0.5, salt="purr-fusion-fit")]
        calib_rows = [r for r in calib_rows if is_dev(r.group, 0.5, salt="purr-fusion-fit")]
    if not train or not calib_rows or not report_rows:
        raise ValueError(f"{splits_path}: too few rows to fit and calibrate a fusion")
    train = train + unrelated(train, unrelated_share, seed)
    off_topic = unrelated(report_rows, unrelated_share, seed + 1)
    tr = collect(verifier, train, progress=progress)
    W, b, mean, scale = fit_weights(tr.X, tr.y)
    raw = Fusion(W=W.tolist(), b=b.tolist(), mean=mean.tolist(), scale=scale.tolist())
    ca = collect(verifier, calib_rows, progress=progress)
    temperature = fit_temperature(raw.logits(ca.X), ca.y)
    rep = collect(verifier, report_rows, progress=progress)
    off = collect(verifier, off_topic, progress=progress) if off_topic else None
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
            "fit_on": fit_on,
            "unrelated_share": unrelated_share,
        },
    )
    P_nli = 1 / (1 + np.exp(-rep.X[:, :3]))  # the NLI model alone (features are log-odds)
    p_raw = raw.probabilities(rep.X)[:, 0]
    P_fused = fused.probabilities(rep.X)
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
        "report": report(rep, P_nli, P_fused),
        "ece_before_temperature": expected_calibration_error((rep.y == 0).astype(int), p_raw),
    }
    if off is not None:  # dev claims against another document's evidence: none is contradicted
        P_off = fused.probabilities(off.X)
        nli_off = 1 / (1 + np.exp(-off.X[:, :3]))
        metrics["unrelated_evidence"] = {
            "rows": len(off.y),
            "nli_called_contradicted": float(
                np.mean((nli_off[:, 1] >= 0.5) & (nli_off[:, 1] > nli_off[:, 0]))
            ),
            "fused_called_contradicted": float(
                np.mean((P_off[:, 1] >= 0.5) & (P_off[:, 1] > P_off[:, 0]))
            ),
        }
    write_text(out / "fusion_metrics.json", json.dumps(metrics, indent=2, default=float))
    reliability_plot(
        rep.y,
        {
            "NLI alone": P_nli[:, 0],
            "fused, uncalibrated": p_raw,
            "fused, calibrated": P_fused[:, 0],
        },
        out / "reliability.png",
    )
    return metrics
