"""Train the learned judge's head (``editor.judge.signals.Head``) from both judges' signals on
labelled sentences, choose its operating point on dev, and measure it against each judge alone
and their union on dev and test.

``purr train judge --rows DIR --out FOLDER``: the rows of ``purr data judge-rows`` (train, dev,
test); their signals are collected into ``FOLDER/signals-SPLIT.jsonl`` (resumable), then two
logistic regressions (scikit-learn) are fitted on train: P(the sentence is wrong) over the
sentence's signals, P(the edit is right) over the sentence's and the edit's. Each is recalibrated
on dev (Platt: a logistic regression on its score). The operating point is the lowest
P(edit right) at which the edits applied on dev are right at least ``--precision`` of the time
(0.9); the suggestion point the lowest at which half the suggestions are. Writes ``head.json``,
``metrics.json`` (every way of deciding on dev and test) and ``operating-point.png``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from editor.judge.signals import Head, Logistic

METHODS = ("rules", "span", "union", "learned")


def _matrix(rows: Sequence[dict[str, float]], names: Sequence[str]) -> np.ndarray:
    return np.array([[r.get(n, 0.0) for n in names] for r in rows], dtype=float)


def _fit(x: np.ndarray, y: np.ndarray, names: Sequence[str], c: float = 1.0) -> Logistic:
    from sklearn.linear_model import LogisticRegression

    if len(set(y.tolist())) < 2:
        raise ValueError("the training rows have one label only; give rows of both kinds")
    m = LogisticRegression(C=c, max_iter=2000).fit(x, y)
    return Logistic(tuple(names), tuple(float(v) for v in m.coef_[0]), float(m.intercept_[0]))


def _platt(model: Logistic, x: np.ndarray, y: np.ndarray) -> Logistic:
    """``model`` recalibrated on (x, y): a logistic regression on its score."""
    from sklearn.linear_model import LogisticRegression

    if len(set(y.tolist())) < 2:
        return model
    z = x @ np.array(model.coef) + model.intercept
    m = LogisticRegression(C=1e6, max_iter=2000).fit(z[:, None], y)
    return Logistic(model.names, model.coef, model.intercept, float(m.coef_[0][0]),
                    float(m.intercept_[0]))  # fmt: skip


def candidate_rows(records: Sequence[dict[str, Any]]) -> tuple[list[dict[str, float]], list[int]]:
    xs, ys = [], []
    for r in records:
        for c in r["candidates"]:
            xs.append({**r["signals"], **c["signals"]})
            ys.append(int(c["right"]))
    return xs, ys


def applied(r: dict[str, Any], method: str, head: Head | None = None) -> tuple[str | None, float]:
    """The edit ``method`` applies to record ``r`` (None: none) and, for ``learned``, its
    P(edit right) (else 1.0)."""
    by = {c["source"]: c for c in r["candidates"]}
    if method in ("rules", "span"):
        c = by.get(method)
        return (c["text"] if c and c["decision"] == "safe" else None), 1.0
    if method == "union":
        for s in ("span", "rules"):
            if s in by and by[s]["decision"] == "safe":
                return by[s]["text"], 1.0
        return None, 1.0
    assert head is not None
    scored = [(head.right({**r["signals"], **c["signals"]}), c) for c in r["candidates"]]
    if not scored:
        return None, 0.0
    p, best = max(scored, key=lambda x: x[0])
    return best["text"], p


def outcomes(records: Sequence[dict[str, Any]], method: str, head: Head | None = None,
             apply_min: float = 0.0) -> dict[str, Any]:  # fmt: skip
    """What ``method`` does to the records: fixed, wrong edits, right sentences changed."""
    from training.eval.judge_signals import same

    fixed = wrong_edit = broken = 0
    for r in records:
        text, p = applied(r, method, head)
        if text is None or (method == "learned" and p < apply_min):
            continue
        if not r["wrong"]:
            broken += 1
        elif same(text, r["fix"]):
            fixed += 1
        else:
            wrong_edit += 1
    n_wrong = sum(r["wrong"] for r in records)
    n_right = len(records) - n_wrong
    edits = fixed + wrong_edit + broken
    return {
        "wrong": n_wrong,
        "fixed": fixed,
        "wrong_edits": wrong_edit,
        "right": n_right,
        "right_changed": broken,
        "harmful": wrong_edit + broken,
        "edits": edits,
        "edits_right": round(fixed / edits, 3) if edits else None,
        "right_unchanged": round(1 - broken / n_right, 3) if n_right else None,
    }


def choose_point(records, head: Head, precision: float, grid=None) -> tuple[float, list]:
    """The lowest P(edit right) whose applied edits on ``records`` are right at least
    ``precision`` of the time (1.0 when none is), and the curve (point, fixed, harmful)."""
    grid = grid if grid is not None else np.round(np.arange(0.05, 1.0, 0.01), 2)
    curve = []
    chosen = 1.0
    for t in sorted(grid, reverse=True):
        o = outcomes(records, "learned", head, float(t))
        curve.append((float(t), o["fixed"], o["harmful"]))
        if o["edits"] and o["fixed"] / o["edits"] >= precision:
            chosen = float(t)
    return chosen, sorted(curve)


def fit_head(
    train: Sequence[dict[str, Any]], dev: Sequence[dict[str, Any]], precision: float = 0.9
) -> tuple[Head, list]:
    """The head fitted on ``train``, recalibrated and its points chosen on ``dev``."""
    s_names = sorted(train[0]["signals"])
    xs = [r["signals"] for r in train]
    wrong = _fit(_matrix(xs, s_names), np.array([int(r["wrong"]) for r in train]), s_names)
    dx = [r["signals"] for r in dev]
    wrong = _platt(wrong, _matrix(dx, s_names), np.array([int(r["wrong"]) for r in dev]))
    cx, cy = candidate_rows(train)
    if not cx:
        raise ValueError("no judge proposed any edit on the training rows")
    e_names = sorted(cx[0])
    right = _fit(_matrix(cx, e_names), np.array(cy), e_names)
    dcx, dcy = candidate_rows(dev)
    if dcx:
        right = _platt(right, _matrix(dcx, e_names), np.array(dcy))
    head = Head(wrong, right, 1.0, 1.0)
    apply_min, curve = choose_point(dev, head, precision)
    suggest_min, _ = choose_point(dev, head, 0.5)
    head = Head(wrong, right, apply_min, min(suggest_min, apply_min))
    return head, curve


def report(records: Sequence[dict[str, Any]], head: Head) -> dict[str, Any]:
    return {
        m: outcomes(records, m, head if m == "learned" else None, head.apply_min) for m in METHODS
    }


def plot(curve: list, head: Head, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t, fixed, harmful = zip(*curve, strict=True)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(t, fixed, label="fixed (dev)")
    ax.plot(t, harmful, label="harmful (dev)")
    ax.axvline(head.apply_min, ls="--", c="k", lw=0.8, label=f"applied from {head.apply_min:.2f}")
    ax.axvline(head.suggest_min, ls=":", c="grey", lw=0.8, label="suggested from")
    ax.set_xlabel("P(edit right)")
    ax.set_ylabel("sentences")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def write(folder: Path, head: Head, curve: list, metrics: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "head.json").write_text(json.dumps(head.to_json(), indent=2) + "\n")
    (folder / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    plot(curve, head, folder / "operating-point.png")
