"""``purr eval paraphrase``: does the verifier's verdict survive a paraphrase of the claim?

Real answers rarely copy their evidence's wording. On the dev rows of the NLI sets, every claim
that a rewrite of ``training.data.nli_paraphrase`` applies to (a phrase of time or place fronted,
active turned passive, a copula inverted: the same facts, the same label) is scored as written
and as rewritten against the same evidence. Reported per source, per rewrite and over all rows:
balanced accuracy and ROC-AUC of both, the share of verdicts (P(supported) >= 0.5) that flip,
and the mean change of P(supported). Primary: ``all/verdict_flip_rate`` (lower is better).

    purr eval paraphrase --model editor/models/purr-attribution --out runs/para
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from editor.verdicts import SUPPORTED
from retrieval.files import write_text
from training.args import add_dev_set_args, add_device_args, check_data_dir
from training.eval.attribution_metrics import binary_report
from training.eval.base import Evaluation
from training.figures import save_figure

EVALUATION = Evaluation(
    name="paraphrase",
    help="how often the verifier's verdict flips when a claim is reworded",
    primary="all/verdict_flip_rate",
    higher_is_better=False,
)


def paraphrase_metrics(
    y: Sequence[int], written: Sequence[float], rewritten: Sequence[float]
) -> dict[str, float]:
    """Metrics of one group of rows: gold ``y`` (1 = supported), P(supported) as written and
    as rewritten.

    >>> m = paraphrase_metrics([1, 0, 1, 0], [0.9, 0.2, 0.6, 0.4], [0.8, 0.3, 0.4, 0.4])
    >>> m["verdict_flip_rate"], m["balanced_accuracy_written"], m["balanced_accuracy_rewritten"]
    (0.25, 1.0, 0.75)
    >>> round(m["mean_change"], 3)
    -0.05
    """
    y_, a, b = np.asarray(y), np.asarray(written, float), np.asarray(rewritten, float)
    out = {"n": float(len(y_))}
    for name, p in (("written", a), ("rewritten", b)):
        report = binary_report(y_, p)
        out[f"balanced_accuracy_{name}"] = report["balanced_accuracy"]
        out[f"roc_auc_{name}"] = report["roc_auc"]
    out["verdict_flip_rate"] = float(np.mean((a >= 0.5) != (b >= 0.5))) if len(a) else np.nan
    out["mean_change"] = float(np.mean(b - a)) if len(a) else float("nan")
    out["mean_abs_change"] = float(np.mean(np.abs(b - a))) if len(a) else float("nan")
    return out


def run(
    model_ref: str,
    out: str | Path,
    *,
    data_dir=None,
    sources=None,
    limit=None,
    max_length: int = 128,
    device: str = "auto",
    progress: bool = True,
) -> dict[str, Any]:
    """Score written and rewritten claims; write ``metrics.json`` and ``metrics.png``."""
    from editor.text.nlp import get_nlp
    from training.data.nli_paraphrase import paraphrase_rows
    from training.data.nli_sources import expand
    from training.eval.attribution import build_model, load_dev_sets, score_rows

    names = expand(list(sources or ["shared", "extra", "eval-only"]))
    dev = load_dev_sets(data_dir, names, limit=limit)
    made = {name: paraphrase_rows(rows, get_nlp(), progress=progress) for name, rows in dev.items()}
    model = build_model(model_ref, device, max_length)
    rows = [(name, *m) for name, ms in made.items() for m in ms]
    if not rows:
        raise ValueError(f"no claim of {', '.join(names)} could be rewritten; add sources")
    scores = score_rows(model, [r[1] for r in rows] + [r[2] for r in rows], progress=progress)
    written, rewritten = scores[: len(rows), 0], scores[len(rows) :, 0]
    y = np.array([r[1].label == SUPPORTED for r in rows], dtype=int)
    groups: dict[str, np.ndarray] = {"all": np.ones(len(rows), bool)}
    for key in sorted({r[0] for r in rows}) + sorted({r[3] for r in rows}):
        groups[key] = np.array([key in (r[0], r[3]) for r in rows])
    metrics = {
        f"{g}/{k}": v
        for g, mask in groups.items()
        for k, v in paraphrase_metrics(y[mask], written[mask], rewritten[mask]).items()
    }
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    examples = [
        {
            "source": s,
            "kind": k,
            "label": a.label,
            "written": a.hypothesis,
            "rewritten": b.hypothesis,
            "p_written": float(p),
            "p_rewritten": float(q),
        }
        for (s, a, b, k), p, q in zip(rows, written, rewritten, strict=True)
    ]
    report = {
        "primary": EVALUATION.primary,
        "model": model_ref,
        "sources": names,
        "max_length": max_length,
        "metrics": metrics,
    }
    write_text(out / "metrics.json", json.dumps(report, indent=2, default=float))
    write_text(out / "pairs.jsonl", "".join(json.dumps(e) + "\n" for e in examples))
    plot(metrics, out / "metrics.png", str(model_ref)[-50:])
    return report


def plot(metrics: dict[str, float], path: Path, title: str) -> Path:
    """Balanced accuracy as written and rewritten, and the flip rate, per rewrite and in all."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from training.data.nli_paraphrase import KINDS

    groups = [g for g in (*KINDS, "all") if f"{g}/n" in metrics]
    keys = ("balanced_accuracy_written", "balanced_accuracy_rewritten", "verdict_flip_rate")
    x = np.arange(len(groups))
    fig, ax = plt.subplots(figsize=(1.8 * len(groups) + 2, 4))
    for j, key in enumerate(keys):
        ax.bar(x + (j - 1) * 0.27, [metrics[f"{g}/{key}"] for g in groups], 0.27, label=key)
    ax.set_xticks(x, [f"{g}\n(n={int(metrics[f'{g}/n'])})" for g in groups])
    ax.set_ylim(0, 1)
    ax.set_title(f"claims reworded: {title}")
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def add_cli_args(e: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    """``purr eval paraphrase``'s arguments (its own ``-v``; no config)."""
    add_dev_set_args(
        e,
        "folder for metrics.json, pairs.jsonl, metrics.png",
        sources="shared,extra,eval-only",
        limit=600,
        max_length=128,
    )
    add_device_args(e)


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval paraphrase``: where the report went and its metrics over all rows."""
    check_data_dir(args.data_dir)
    report = run(
        args.model,
        args.out,
        data_dir=args.data_dir,
        sources=[s.strip() for s in args.sources.split(",") if s.strip()],
        limit=args.limit,
        max_length=args.max_length,
        device=args.device,
    )
    metrics = report["metrics"]
    return {"out": args.out, "all": {k[4:]: v for k, v in metrics.items() if k.startswith("all/")}}
