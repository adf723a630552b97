"""Train the learned judge's head (``editor.judge.signals.Head``) from both judges' signals on
labelled sentences, choose its operating point on dev, and measure it against each judge alone
and their union on dev and test.

``purr train judge --rows DIR --out FOLDER``: the rows of ``purr data judge-rows`` (train, dev,
test); their signals are collected into ``FOLDER/signals-SPLIT.jsonl`` (resumable), then two
logistic regressions (scikit-learn) are fitted: P(the sentence is wrong) over the sentence's
signals, P(the edit is right) over the sentence's and the edit's. Train and dev together are
cut into five folds by article; each fold is scored by the regressions fitted on the other four,
and those held-out scores calibrate the final regressions (Platt: a logistic regression on the
score) and choose the operating point: the lowest P(edit right) at which the held-out edits
applied are right at least ``--precision`` of the time (0.9); the suggestion point the lowest at
which half are. Test is read only to report. Writes ``head.json``, ``metrics.json`` (every way of
deciding on the held-out folds and on test) and ``operating-point.png``.
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


def tally(records: Sequence[dict[str, Any]], edits: Sequence[str | None]) -> dict[str, Any]:
    """What applying ``edits`` (one per record, None: none) does: fixed, wrong edits, right
    sentences changed."""
    from training.eval.judge_signals import fixes

    fixed = wrong_edit = broken = 0
    for r, text in zip(records, edits, strict=True):
        if text is None:
            continue
        if not r["wrong"]:
            broken += 1
        elif fixes(r, text):
            fixed += 1
        else:
            wrong_edit += 1
    n_wrong = sum(r["wrong"] for r in records)
    n_right = len(records) - n_wrong
    n = fixed + wrong_edit + broken
    return {
        "wrong": n_wrong,
        "fixed": fixed,
        "wrong_edits": wrong_edit,
        "right": n_right,
        "right_changed": broken,
        "harmful": wrong_edit + broken,
        "edits": n,
        "edits_right": round(fixed / n, 3) if n else None,
        "right_unchanged": round(1 - broken / n_right, 3) if n_right else None,
    }


def outcomes(records: Sequence[dict[str, Any]], method: str, head: Head | None = None,
             apply_min: float = 0.0) -> dict[str, Any]:  # fmt: skip
    """What ``method`` does to the records (``learned``: edits from ``apply_min``)."""
    edits = []
    for r in records:
        text, p = applied(r, method, head)
        edits.append(text if method != "learned" or p >= apply_min else None)
    return tally(records, edits)


def choose_point(records, best: Sequence[tuple[str | None, float]], precision: float):
    """The lowest P(edit right) at which the ``best`` edits (text, P) applied are right at least
    ``precision`` of the time (1.0 when at none), and the curve (point, fixed, harmful)."""
    curve, chosen = [], 1.0
    for t in sorted(np.round(np.arange(0.05, 1.0, 0.01), 2), reverse=True):
        o = tally(records, [text if p >= t else None for text, p in best])
        curve.append((float(t), o["fixed"], o["harmful"]))
        if o["edits"] and o["fixed"] / o["edits"] >= precision:
            chosen = float(t)
    return chosen, sorted(curve)


def _folds(records: Sequence[dict[str, Any]], k: int = 5) -> list[int]:
    import hashlib

    return [hashlib.md5(str(r.get("document") or r["id"]).encode()).digest()[1] % k
            for r in records]  # fmt: skip


def _fit_pair(records, s_names, e_names) -> tuple[Logistic, Logistic]:
    wrong = _fit(_matrix([r["signals"] for r in records], s_names),
                 np.array([int(r["wrong"]) for r in records]), s_names)  # fmt: skip
    cx, cy = candidate_rows(records)
    return wrong, _fit(_matrix(cx, e_names), np.array(cy), e_names)


def fit_head(
    train: Sequence[dict[str, Any]], dev: Sequence[dict[str, Any]], precision: float = 0.9
) -> tuple[Head, list, dict[str, Any]]:
    """The head fitted on train and dev, calibrated and its points chosen on held-out folds of
    them (see the module doc); also the held-out folds' outcomes."""
    pool = list(train) + list(dev)
    s_names = sorted(pool[0]["signals"])
    cx, _ = candidate_rows(pool)
    if not cx:
        raise ValueError("no judge proposed any edit on the training rows")
    e_names = sorted(cx[0])
    folds = _folds(pool)
    z_wrong = np.zeros(len(pool))
    z_right: list[list[float]] = [[] for _ in pool]
    for k in sorted(set(folds)):
        fit_on = [r for r, f in zip(pool, folds, strict=True) if f != k]
        w, rt = _fit_pair(fit_on, s_names, e_names)
        for i, (r, f) in enumerate(zip(pool, folds, strict=True)):
            if f == k:
                z_wrong[i] = w.score(r["signals"])
                z_right[i] = [rt.score({**r["signals"], **c["signals"]}) for c in r["candidates"]]
    a_w, b_w = _platt_ab(z_wrong, np.array([int(r["wrong"]) for r in pool]))
    flat = np.array([z for zs in z_right for z in zs])
    labels = np.array([int(c["right"]) for r in pool for c in r["candidates"]])
    a_r, b_r = _platt_ab(flat, labels)
    best = []
    for r, zs in zip(pool, z_right, strict=True):
        if not zs:
            best.append((None, 0.0))
            continue
        i = int(np.argmax(zs))
        best.append((r["candidates"][i]["text"], _sigmoid(a_r * zs[i] + b_r)))
    apply_min, curve = choose_point(pool, best, precision)
    suggest_min, _ = choose_point(pool, best, 0.5)
    w, rt = _fit_pair(pool, s_names, e_names)
    head = Head(
        Logistic(w.names, w.coef, w.intercept, a_w, b_w),
        Logistic(rt.names, rt.coef, rt.intercept, a_r, b_r),
        apply_min,
        min(suggest_min, apply_min),
    )
    held_out: dict[str, Any] = {}
    for name in ["all", *sorted({str(r.get("dataset")) for r in pool})]:
        idx = [i for i, r in enumerate(pool) if name in ("all", str(r.get("dataset")))]
        part = [pool[i] for i in idx]
        got = {m: outcomes(part, m) for m in ("rules", "span", "union")}
        got["learned"] = tally(part, [best[i][0] if best[i][1] >= apply_min else None for i in idx])
        held_out[name] = got
    return head, curve, held_out


def _sigmoid(z: float) -> float:
    return float(1.0 / (1.0 + np.exp(-np.clip(z, -30, 30))))


def _platt_ab(z: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    from sklearn.linear_model import LogisticRegression

    if len(set(y.tolist())) < 2:
        return 1.0, 0.0
    m = LogisticRegression(C=1e6, max_iter=2000).fit(z[:, None], y)
    return float(m.coef_[0][0]), float(m.intercept_[0])


def report(records: Sequence[dict[str, Any]], head: Head) -> dict[str, Any]:
    return {
        m: outcomes(records, m, head if m == "learned" else None, head.apply_min) for m in METHODS
    }


def plot(curve: list, head: Head, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from training.figures import save_figure

    t, fixed, harmful = zip(*curve, strict=True)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(t, fixed, label="fixed (held-out folds)")
    ax.plot(t, harmful, label="harmful (held-out folds)")
    ax.axvline(head.apply_min, ls="--", c="k", lw=0.8, label=f"applied from {head.apply_min:.2f}")
    ax.axvline(head.suggest_min, ls=":", c="grey", lw=0.8, label="suggested from")
    ax.set_xlabel("P(edit right)")
    ax.set_ylabel("sentences")
    ax.legend(fontsize=8)
    save_figure(fig, out)


def write(folder: Path, head: Head, curve: list, metrics: dict[str, Any], command: str) -> None:
    """``head.json``, ``metrics.json``, the curve's plot and the card (``README.md``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "head.json").write_text(json.dumps(head.to_json(), indent=2) + "\n")
    (folder / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    plot(curve, head, folder / "operating-point.png")
    (folder / "README.md").write_text(card(head, metrics, command))


def card(head: Head, metrics: dict[str, Any], command: str) -> str:
    """The head's model card: what it reads, the data, the recipe, the command, the figures."""
    rows = ["| rows | judge | fixed | wrong edits | right changed | applied edits right |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    parts = {f"held-out, {k}": v for k, v in metrics["held_out"].items()}
    for part, found in {**parts, "test (BUMP)": metrics["test"]}.items():
        for m, o in found.items():
            share = "-" if o["edits_right"] is None else f"{o['edits_right']:.0%}"
            rows.append(f"| {part} | {m} | {o['fixed']} of {o['wrong']} | "
                        f"{o['wrong_edits']} | {o['right_changed']} of {o['right']} | {share} |")  # fmt: skip
    n = metrics["rows"]
    return f"""# purr-judge: the learned judge's head

Two logistic regressions over both judges' signals (`editor/judge/signals.py`): P(the sentence
is wrong) and P(an edit is right). `judge.type=learned` applies an edit from P(edit right)
{head.apply_min:.2f} (the operating point), suggests it from {head.suggest_min:.2f}, and reports
a sentence contradicted from P(wrong) {head.wrong_min:.2f}. JSON weights, no pickle.

**Data** (`purr data judge-rows`): sentences of BUMP's CNN/DailyMail summaries with the one
error a person put in (MIT), of SummEdits' summaries with an error an LLM inserted and people
confirmed (Apache-2.0; only the documents `purr data real-claims` keeps for dev) and, where the
rows were made with `--planted`, of passages of the embedded Wikipedia summaries with an error
put in by rule (`purr data planted`; train and dev only, never the articles of the planted set
kept for measuring); each with its fix, the right sentences of the same texts, and the source's
passages about each sentence as evidence; split by document: {n["train"]} train, {n["dev"]} dev,
{n["test"]} test (BUMP only: real errors, read only to report).

**Recipe**: both judges' signals on every row (`training/eval/judge_signals.py`); train and dev
cut into five folds by document; held-out scores calibrate the regressions (Platt) and choose
the operating point: the lowest P(edit right) at which held-out applied edits are right at
least {metrics.get("precision", 0.9):.0%} of the time. Test is read only to report.

**Reproduce**: `{command}`

{chr(10).join(rows)}

An edit counts as right only when it writes the person's fix (whitespace aside).
"""
