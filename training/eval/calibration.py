"""``purr eval calibration``: what recalibrating the verifier to each domain does.

Per dev set, P(supported) as the verifier gives it against P(supported) recalibrated to that set
(``editor.attribution.recalibration``) by cross-fitting: the set's documents are cut into
``folds`` folds, and each fold is judged by a recalibration fitted on the others, so no pair is
judged by a fit that saw it. Two recalibrations: ``recalibrated`` (probabilities that match the
set's own rate of supported claims) and ``balanced`` (both classes weighed equally, so that 0.5
balances the two kinds of error). Reported per set and as means: ECE (primary: the mean
recalibrated ECE, lower is better), balanced accuracy at 0.5 and at the best threshold, ROC-AUC
(each fold's rescaling is monotone; pooled over folds the ranking moves a little), and the same
with only 20, 50 or 100 labelled pairs per fit. Writes ``metrics.json``, ``scores.jsonl`` (each
row's probabilities) and ``reliability.png`` (a panel per set).

    purr eval calibration --model editor/models/purr-attribution --out runs/recal
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from editor.attribution.recalibration import cross_fitted
from editor.verdicts import SUPPORTED
from retrieval.files import write_text
from training.args import add_dev_set_args, add_device_args, check_data_dir, option, switch
from training.eval.attribution_metrics import binary_report, expected_calibration_error
from training.eval.base import Evaluation
from training.figures import save_figure

KEYS = ("ece", "balanced_accuracy", "balanced_accuracy_best", "roc_auc")
VARIANTS = ("given", "recalibrated", "balanced")
EVALUATION = Evaluation(
    name="calibration",
    help="the verifier recalibrated to each dev set (cross-fitted): ECE and accuracy at 0.5",
    primary="mean/ece_recalibrated",
    higher_is_better=False,
)
SIZES = (20, 50, 100)
"""labelled pairs per fit in the learning curve (``fewer_pairs``)"""


def fewer_pairs(
    p: np.ndarray, y: np.ndarray, groups: Sequence[str], folds: int = 5, seeds: int = 5
) -> dict[str, float]:
    """ECE recalibrated to the rate, and balanced accuracy at 0.5 of the balanced fit, when
    each fit sees only N of the other folds' pairs (N in ``SIZES``), means over ``seeds`` draws
    (a draw with one class only is skipped)."""
    out: dict[str, float] = {}
    for n in SIZES:
        ece, bal = [], []
        for seed in range(seeds):
            try:
                q = cross_fitted(p, y, groups, folds, pairs=n, seed=seed)
                b = cross_fitted(p, y, groups, folds, balanced=True, pairs=n, seed=seed)
            except ValueError:
                continue
            ece.append(expected_calibration_error(y, q))
            bal.append(binary_report(y, b)["balanced_accuracy"])
        out[f"ece_recalibrated_n{n}"] = float(np.mean(ece)) if ece else float("nan")
        out[f"balanced_accuracy_balanced_n{n}"] = float(np.mean(bal)) if bal else float("nan")
    return out


def recalibration_metrics(
    p: Sequence[float], y: Sequence[int], groups: Sequence[str], folds: int = 5
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Metrics of P(supported) ``p`` as given and cross-fitted to gold ``y`` (1 = supported),
    and the probabilities of each variant (``VARIANTS``)."""
    p_, y_ = np.asarray(p, dtype=float), np.asarray(y, dtype=int)
    recal = cross_fitted(p_, y_, groups, folds)
    balanced = cross_fitted(p_, y_, groups, folds, balanced=True)
    out: dict[str, float] = {"n": float(len(y_)), SUPPORTED: float(y_.sum())}
    variants = {"given": p_, "recalibrated": recal, "balanced": balanced}
    for name, q in variants.items():
        report = binary_report(y_, q)
        report["ece"] = expected_calibration_error(y_, q)
        for key in KEYS:
            out[f"{key}_{name}"] = float(report[key])
    return out, variants


def run(
    model_ref: str,
    out: str | Path,
    *,
    data_dir=None,
    sources=None,
    limit=None,
    max_length: int = 128,
    folds: int = 5,
    decompose: bool = False,
    gather: bool = False,
    device: str = "auto",
    progress: bool = True,
) -> dict[str, Any]:
    """Score each set's dev rows, cross-fit; write ``metrics.json`` and ``reliability.png``."""
    from training.data.nli_sources import expand
    from training.eval.attribution import build_model, load_dev_sets, score_rows

    names = expand(list(sources or ["shared"]))
    dev = load_dev_sets(data_dir, names, limit=limit)
    model = build_model(model_ref, device, max_length, gather=gather)
    metrics: dict[str, float] = {}
    curves: dict[str, tuple[np.ndarray, dict[str, np.ndarray]]] = {}
    lines: list[str] = []
    for name, rows in dev.items():
        scores = score_rows(
            model,
            rows,
            progress=progress,
            desc=f"score {name}",
            decompose=decompose,
            per_sentence=True,
        )
        y = np.array([r.label == SUPPORTED for r in rows], dtype=int)
        groups = [r.group for r in rows]
        try:
            m, variants = recalibration_metrics(scores[:, 0], y, groups, folds)
        except ValueError as e:
            raise ValueError(
                f"{name}: cannot cross-fit ({e}); raise --limit or lower --folds"
            ) from None
        m.update(fewer_pairs(scores[:, 0], y, groups, folds))
        metrics.update({f"{name}/{k}": v for k, v in m.items()})
        curves[name] = (y, variants)
        for i, r in enumerate(rows):
            row = {"source": name, "id": r.id, "label": r.label}
            row.update({f"p_{v}": float(variants[v][i]) for v in VARIANTS})
            lines.append(json.dumps(row) + "\n")
    for key in [f"{k}_{w}" for k in KEYS for w in VARIANTS] + [
        f"{k}_n{n}" for k in ("ece_recalibrated", "balanced_accuracy_balanced") for n in SIZES
    ]:
        metrics[f"mean/{key}"] = float(np.nanmean([metrics[f"{n}/{key}"] for n in curves]))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    report = {
        "primary": EVALUATION.primary,
        "model": model_ref,
        "sources": list(curves),
        "folds": folds,
        "max_length": max_length,
        "decompose": decompose,
        "gather": gather,
        "metrics": metrics,
    }
    write_text(out / "metrics.json", json.dumps(report, indent=2, default=float))
    write_text(out / "scores.jsonl", "".join(lines))
    plot(curves, out / "reliability.png")
    return report


def plot(curves: dict[str, tuple[np.ndarray, dict[str, np.ndarray]]], path: Path) -> Path:
    """One reliability panel per set: observed share supported against P(supported), one line
    per variant (as given, recalibrated, balanced)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(3.6 * len(curves), 3.8), squeeze=False)
    for ax, (name, (y, variants)) in zip(axes[0], curves.items(), strict=True):
        ax.plot([0, 1], [0, 1], color="grey", ls="--", lw=0.8)
        for label, p in variants.items():
            idx = np.minimum((p * 10).astype(int), 9)
            xs = [p[idx == b].mean() for b in range(10) if (idx == b).sum() >= 3]
            ys = [y[idx == b].mean() for b in range(10) if (idx == b).sum() >= 3]
            ece = expected_calibration_error(y, p)
            ax.plot(xs, ys, marker="o", label=f"{label} (ECE {ece:.3f})")
        ax.set_title(f"{name} (n={len(y)})")
        ax.set_xlabel("P(supported)")
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("observed share supported")
    return save_figure(fig, path)


def add_cli_args(e: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    """``purr eval calibration``'s arguments (its own ``-v``; no config)."""
    add_dev_set_args(e, "folder for metrics.json and reliability.png", limit=300, max_length=128)
    option(e, "--folds", int, 5, "cross-fitting folds (by document)")
    switch(e, "--decompose", "score each claim's atomic parts")
    switch(e, "--gather", "also read a gathered window")
    add_device_args(e)


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval calibration``: where the report went and its means."""
    check_data_dir(args.data_dir)
    if args.folds < 2:
        raise ValueError(f"--folds must be at least 2, got {args.folds}")
    report = run(
        args.model,
        args.out,
        data_dir=args.data_dir,
        sources=[s.strip() for s in args.sources.split(",") if s.strip()],
        limit=args.limit,
        max_length=args.max_length,
        folds=args.folds,
        decompose=args.decompose,
        gather=args.gather,
        device=args.device,
    )
    metrics = report["metrics"]
    return {"out": args.out, "mean": {k[5:]: v for k, v in metrics.items() if k[:5] == "mean/"}}
