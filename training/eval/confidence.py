"""``purr eval confidence``: how far the reader's probabilities can be trusted. For each
question, the top span's probability and the top answer's mass (``editor.reader.answers``: the
spans of one value summed) against whether it is right (token F1 >= 0.5 with a gold answer, as
SQuAD scores a span): reliability curves, expected calibration error (ECE, 10 bins) and how
often the top pick is right. Platt scaling is fitted on a dev split (SQuAD 2.0 dev's answerable
questions outside XQuAD's passages) and scored on XQuAD English; ``--save`` writes the
answer-level calibration next to the reader (``answer_calibration.json``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from training.args import option, switch
from training.eval.base import Evaluation

EVALUATION = Evaluation(
    name="confidence",
    help="the reader's span and answer-level probabilities: reliability, ECE, Platt calibration",
    primary="xquad_answer_ece_calibrated",
    higher_is_better=False,
)
BINS = 10


def ece(p: Sequence[float], right: Sequence[bool], bins: int = BINS) -> float:
    """Expected calibration error over ``bins`` equal-width bins.

    >>> ece([0.9, 0.9, 0.1, 0.1], [True, True, False, False])
    0.1
    """
    p_, y = np.asarray(p, float), np.asarray(right, float)
    edges = np.minimum((p_ * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = edges == b
        if inside.any():
            total += inside.sum() / len(p_) * abs(y[inside].mean() - p_[inside].mean())
    return round(float(total), 4)


def reliability(p: Sequence[float], right: Sequence[bool], bins: int = BINS) -> list[dict]:
    """Per bin: its range, questions, mean confidence and share right."""
    p_, y = np.asarray(p, float), np.asarray(right, float)
    edges = np.minimum((p_ * bins).astype(int), bins - 1)
    return [
        {
            "bin": [b / bins, (b + 1) / bins],
            "n": int((edges == b).sum()),
            "confidence": round(float(p_[edges == b].mean()), 4),
            "right": round(float(y[edges == b].mean()), 4),
        }
        for b in range(bins)
        if (edges == b).any()
    ]


def fit_platt(p: Sequence[float], right: Sequence[bool]) -> tuple[float, float]:
    """``(a, b)`` of ``sigmoid(a * logit(p) + b)`` minimising the log loss, by a grid search
    refined twice (robust where Newton's method diverges on near-separable rows).

    >>> a, b = fit_platt([0.2, 0.3, 0.6, 0.7] * 20, [False, True, True, True] * 20)
    >>> a > 0
    True
    """
    x = np.log(np.clip(p, 1e-4, 1 - 1e-4) / (1 - np.clip(p, 1e-4, 1 - 1e-4)))
    y = np.asarray(right, float)

    def loss(a: float, b: float) -> float:
        q = np.clip(1 / (1 + np.exp(-np.clip(a * x + b, -30, 30))), 1e-9, 1 - 1e-9)
        return float(-(y * np.log(q) + (1 - y) * np.log(1 - q)).mean())

    best, step = (2.0, 0.0), (2.0, 4.0)
    for _ in range(3):
        grid = [
            (best[0] + i * step[0] / 4, best[1] + j * step[1] / 4)
            for i in range(-4, 5)
            for j in range(-4, 5)
            if best[0] + i * step[0] / 4 > 0
        ]
        best = min(grid, key=lambda ab: loss(*ab))
        step = (step[0] / 4, step[1] / 4)
    return round(best[0], 4), round(best[1], 4)


def fit_isotonic(p: Sequence[float], right: Sequence[bool], bins: int = 20) -> tuple[list, list]:
    """An isotonic curve (pool adjacent violators over ``bins`` quantile bins): the points
    ``(mean confidence, share right)``, share right never falling as confidence rises.

    >>> xs, ys = fit_isotonic([0.1, 0.2, 0.3, 0.4] * 10, [False, True, False, True] * 10, 4)
    >>> ys == sorted(ys)
    True
    """
    order = np.argsort(p)
    p_, y = np.asarray(p, float)[order], np.asarray(right, float)[order]
    chunks = zip(np.array_split(p_, bins), np.array_split(y, bins), strict=True)
    blocks = [[float(c.mean()), float(r.mean()), len(c)] for c, r in chunks if len(c)]
    merged: list[list[float]] = []
    for blk in blocks:
        merged.append(blk)
        while len(merged) > 1 and merged[-2][1] > merged[-1][1]:
            (x1, y1, n1), (x2, y2, n2) = merged[-2], merged.pop()
            n = n1 + n2
            merged[-1] = [(x1 * n1 + x2 * n2) / n, (y1 * n1 + y2 * n2) / n, n]
    return [round(m[0], 4) for m in merged], [round(m[1], 4) for m in merged]


def picks(rows: Sequence[Any], readings: Sequence[Any]) -> dict[str, tuple[list, list]]:
    """For ``span`` and ``answer``: each question's top pick's probability and whether it is
    right."""
    from editor.reader.answers import by_answer
    from training.eval.reader import token_f1

    out: dict[str, tuple[list, list]] = {"span": ([], []), "answer": ([], [])}
    for row, reading in zip(rows, readings, strict=True):
        golds = [t for t, _ in row.answers]
        for name, best in (
            ("span", reading.best),
            ("answer", next(iter(by_answer(reading)), None)),
        ):
            ok = best is not None and max(token_f1(best.text, g) for g in golds) >= 0.5
            out[name][0].append(best.probability if best is not None else 0.0)
            out[name][1].append(ok)
    return out


def plot(curves: dict[str, list[dict]], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from retrieval.files import save_png

    fig, ax = plt.subplots(figsize=(5, 4.5))
    ax.plot([0, 1], [0, 1], ls=":", color="grey", label="calibrated")
    for name, bins in curves.items():
        ax.plot([b["confidence"] for b in bins], [b["right"] for b in bins], marker="o", label=name)
    ax.set_xlabel("confidence")
    ax.set_ylabel("share right (F1 >= 0.5)")
    ax.set_title("XQuAD English: reliability")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_png(fig, png)


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    p.add_argument("--reader", default=None, help="a reader folder (default: the shipped one)")
    option(p, "--data", Path, None, "the shared data folder")
    option(p, "--dev", int, 800, "dev questions the calibration is fit on")
    option(p, "--limit", int, 0, "at most this many XQuAD questions")
    switch(p, "--save", "write answer_calibration.json to --reader")
    p.add_argument("--out", required=True, help="folder for metrics.json and reliability.png")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")


def main(args: argparse.Namespace) -> dict[str, Any]:
    from tqdm.auto import tqdm

    from editor.reader.answers import Calibration
    from editor.reader.extractive import ExtractiveReader
    from training.data.reader import load, test_contexts

    if args.dev < 50:
        raise ValueError(f"--dev must be >= 50 questions to fit a calibration, got {args.dev}")
    reader = ExtractiveReader(args.reader)
    held = test_contexts(args.data)
    dev = [r for r in load("squad2_dev", args.data) if r.answerable and r.context not in held]
    sets = {"dev": dev[: args.dev], "xquad": load("xquad", args.data)[: args.limit or None]}
    read = {}
    for name, rows in sets.items():
        readings = []
        for i in tqdm(range(0, len(rows), 64), desc=name):
            readings += reader.read_batch([(r.question, r.context) for r in rows[i : i + 64]])
        read[name] = picks(rows, readings)
    report: dict[str, Any] = {
        "reader": str(reader.path),
        "questions": {k: len(v) for k, v in sets.items()},
    }
    curves = {}
    fitted_on = f"squad2_dev answerable outside XQuAD, {len(sets['dev'])} questions"
    for level in ("span", "answer"):
        a, b = fit_platt(*read["dev"][level])
        xs, ys = fit_isotonic(*read["dev"][level])
        cals = {
            "platt": Calibration(a, b, fitted_on),
            "isotonic": Calibration(fitted_on=fitted_on, xs=tuple(xs), ys=tuple(ys)),
        }
        p, right = read["xquad"][level]
        report[level] = {
            "platt": {"a": a, "b": b},
            "isotonic": {"xs": xs, "ys": ys},
            "xquad_top_right": int(sum(right)),
            "xquad_ece": ece(p, right),
            "reliability": reliability(p, right),
        }
        curves[f"{level} (raw, ECE {report[level]['xquad_ece']})"] = report[level]["reliability"]
        for how, cal in cals.items():
            fitted = [cal(x) for x in p]
            report[level][f"xquad_ece_{how}"] = ece(fitted, right)
            report[level][f"reliability_{how}"] = reliability(fitted, right)
            curves[f"{level} ({how}, ECE {ece(fitted, right)})"] = reliability(fitted, right)
        if level == "answer" and args.save:  # the fit the dev split itself scores better
            dev_p, dev_right = read["dev"][level]
            dev_ece = {h: ece([c(x) for x in dev_p], dev_right) for h, c in cals.items()}
            report["saved"] = min(dev_ece, key=lambda h: dev_ece[h])
            cals[report["saved"]].save(reader.path / "answer_calibration.json")
    report["xquad_answer_ece_calibrated"] = min(
        report["answer"]["xquad_ece_platt"], report["answer"]["xquad_ece_isotonic"]
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    plot(curves, out / "reliability.png")
    (out / "metrics.json").write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    return report
