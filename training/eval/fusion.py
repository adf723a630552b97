"""``purr eval fusion``: does the verifier's fusion earn its place over the NLI model alone?

The features (``editor.attribution.fusion.FEATURES``: the NLI model's three log-odds, the slot
check's verdict, coverage, their products) are computed on the dev split of each source, which
the NLI model never trained on. The rows are halved by document group: fusions are fitted on one
half (classes weighted equally, temperature on the same half) and judged on the other, against
the NLI model alone and against the shipped ``fusion.json`` (fitted on the model's training
rows). Each feature group is ablated in turn: a group whose removal does not lower the fused
balanced accuracy is not earning its place. Per source and mean over sources: balanced accuracy
at 0.5 (primary: the full refit's mean), ROC-AUC and ECE of P(supported); ``metrics.json`` and a
bar plot ``fusion.png``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from training.args import add_dev_set_args, check_data_dir
from training.eval.base import Evaluation
from training.figures import save_figure

EVALUATION = Evaluation(
    name="fusion",
    help="the verifier's fusion against the NLI model alone, fitted on held-apart dev rows",
    primary="mean/refit_all/balanced_accuracy",
)

GROUPS = {
    "slot": ("slot_contradicted", "slot_consistent"),
    "coverage": ("word_coverage", "slot_coverage"),
    "products": ("contradicted_x_coverage", "supported_x_coverage"),
}
"""The feature groups ablated one at a time (the NLI log-odds stay in every variant)."""


def variant_columns(features: Sequence[str]) -> dict[str, list[int]]:
    """Feature columns of each refitted variant: all, the NLI log-odds only, all but a group.

    >>> from editor.attribution.fusion import FEATURES
    >>> cols = variant_columns(FEATURES)
    >>> cols["refit_nli_only"], len(cols["refit_all"]), len(cols["refit_without_slot"])
    ([0, 1, 2], 9, 7)
    """
    out = {"refit_all": list(range(len(features))), "refit_nli_only": [0, 1, 2]}
    for name, group in GROUPS.items():
        out[f"refit_without_{name}"] = [i for i, f in enumerate(features) if f not in group]
    return out


def scores(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    """Balanced accuracy at 0.5, ROC-AUC and ECE of P(supported) ``p`` for labels ``y``
    (0 = supported)."""
    from training.eval.attribution_metrics import binary_report, expected_calibration_error

    target = (y == 0).astype(int)
    r = binary_report(target, p)
    return {
        "balanced_accuracy": r["balanced_accuracy"],
        "roc_auc": r["roc_auc"],
        "ece": expected_calibration_error(target, p),
        "n": float(len(y)),
    }


def run(
    model: str, data_dir: str | None, sources: list[str], limit: int | None, out: Path
) -> dict[str, Any]:
    """Collect features, fit the variants on one half, judge on the other; write the report."""
    from editor.attribution import build
    from editor.attribution.fusion import (
        FEATURES,
        FUSION_FILE,
        Fusion,
        fit_temperature,
        fit_weights,
    )
    from editor.attribution.verifier import FusedVerifier
    from editor.config import AttributionConfig
    from training.data.nli import LABELS, is_dev
    from training.eval.attribution import load_dev_sets

    folder = Path(model).expanduser()
    nli = build(AttributionConfig(type="purr", model=str(folder), fusion=False))
    verifier = FusedVerifier(nli, None)
    dev = load_dev_sets(data_dir, sources, limit=limit)
    fit_x, fit_y, held = [], [], {}
    for name, rows in dev.items():
        pairs = [(r.premise, r.hypothesis) for r in rows]
        Xs = verifier.feature_matrix(pairs, progress=True, desc=f"features {name}")
        ys = np.array([LABELS.index(r.label) for r in rows], dtype=int)
        half = np.array([is_dev(r.group, 0.5, salt="purr-fusion-ablation") for r in rows])
        fit_x.append(Xs[~half])
        fit_y.append(ys[~half])
        held[name] = (Xs[half], ys[half])
    X, y = np.concatenate(fit_x), np.concatenate(fit_y)
    shipped = Fusion.load(folder / FUSION_FILE) if (folder / FUSION_FILE).is_file() else None
    predictors: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "nli_alone": lambda Z: 1 / (1 + np.exp(-Z[:, 0])),  # the model's own P(supported)
    }
    if shipped is not None:
        predictors["shipped_fusion"] = lambda Z: shipped.probabilities(Z)[:, 0]
    for name, cols in variant_columns(FEATURES).items():
        W, b, mean, scale = fit_weights(X[:, cols], y)
        fit = {
            "W": W.tolist(),
            "b": b.tolist(),
            "mean": mean.tolist(),
            "scale": scale.tolist(),
            "features": tuple(FEATURES[i] for i in cols),
        }
        t = fit_temperature(Fusion(**fit).logits(X[:, cols]), y)
        fused = Fusion(**fit, temperature=t)
        predictors[name] = lambda Z, f=fused, c=cols: f.probabilities(Z[:, c])[:, 0]
    metrics: dict[str, float] = {}
    for source, (Xh, yh) in held.items():
        for name, predict in predictors.items():
            for key, value in scores(yh, predict(Xh)).items():
                metrics[f"{source}/{name}/{key}"] = value
    for name in predictors:
        for key in ("balanced_accuracy", "roc_auc", "ece"):
            values = [metrics[f"{s}/{name}/{key}"] for s in held]
            metrics[f"mean/{name}/{key}"] = float(np.nanmean(values))
    report = {
        "primary": EVALUATION.primary,
        "model": str(folder),
        "labels": list(LABELS),
        "fit_rows": int(len(y)),
        "held_rows": {s: int(len(v[1])) for s, v in held.items()},
        "metrics": metrics,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps(report, indent=2, default=float), "utf-8")
    plot(metrics, list(predictors), out / "fusion.png")
    return report


def plot(metrics: dict[str, float], names: list[str], path: Path) -> Path:
    """Mean balanced accuracy and ROC-AUC of each variant, as bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.5))
    x = np.arange(len(names))
    for k, key in enumerate(("balanced_accuracy", "roc_auc")):
        ax.bar(x + 0.4 * k, [metrics[f"mean/{n}/{key}"] for n in names], 0.4, label=key)
    ax.set_xticks(x + 0.2, names, rotation=25, ha="right", fontsize=8)
    ax.set_ylim(0.4, 1.0)
    ax.legend(fontsize=8)
    ax.set_title("fusion variants on held-apart dev rows (mean over sources)")
    return save_figure(fig, path)


def add_cli_args(e: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    add_dev_set_args(
        e,
        "folder for metrics.json and fusion.png",
        model="NLI model folder (default: the shipped one)",
        model_required=False,
        data_dir="the shared/data folder",
        sources_help="NLI sets or aliases (shared, extra)",
        limit_help="dev rows per source",
    )
    e.add_argument("-v", "--verbose", action="store_true", help="debug logging")


def main(args: argparse.Namespace) -> dict[str, Any]:
    from editor.attribution.factories import default_purr_path
    from training.data.nli_sources import expand

    check_data_dir(args.data_dir)
    model = args.model or str(default_purr_path())
    if not (Path(model).expanduser() / "config.json").is_file():
        raise ValueError(f"--model {model}: not a trained NLI model folder (no config.json)")
    sources = expand([s.strip() for s in args.sources.split(",") if s.strip()])
    report = run(model, args.data_dir, sources, args.limit, Path(args.out))
    return {"out": args.out, "held_rows": report["held_rows"], "metrics": report["metrics"]}
