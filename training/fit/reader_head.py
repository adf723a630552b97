"""Train the judge's reader head (``editor.judge.reader_head``) on question rows
(``training.data.answer_rows``) and choose its operating points on dev.

``purr train reader-head --data ../shared/data --out FOLDER``: each row's text and evidence are
read with the shipped reader, exactly as the judge reads them (answers by value, calibrated);
every evidence answer that differs from the text's is a candidate, labelled right where the row
is wrong and the candidate states a gold answer. A logistic regression (scikit-learn) over the
candidates' signals is fitted on train, recalibrated (Platt) on dev, and the points chosen on dev
rows (the head's best candidate per row): ``apply_min`` the lowest P at which applied edits are
right ``--precision`` of the time (0.9), ``prove_min`` at ``--prove-precision`` (0.95),
``suggest_min`` where the rows under ``apply_min`` are right suggestions half the time. With
``--documents``, a documents set's even rows join train and its odd rows dev. Writes
``reader.json``, ``reader-metrics.json`` and ``reader-operating-point.png``; the signals are
kept in ``reader-signals-SPLIT.jsonl``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from editor.judge.reader_head import NAMES, ReaderHead
from editor.judge.signals import Logistic

GRID = tuple(round(float(t), 2) for t in np.arange(0.05, 1.0, 0.01))


def collect(
    agreement: Any,
    rows: Sequence[Any],
    min_text: float,
    bar: Callable = iter,
    score_batch: Callable | None = None,
) -> list[dict[str, Any]]:
    """Each row's candidates and their signals, read by ``agreement`` (a ``ReaderAgreement``);
    with ``score_batch`` (a verifier's), the verifier's signals too."""
    from editor.judge.answer_match import hedged_at
    from editor.judge.reader_head import observe

    out = []
    for k in bar(range(0, len(rows), 16)):
        chunk = rows[k : k + 16]
        pairs = [(r.question, t) for r in chunk for t in (r.text, r.evidence)]
        got = agreement.readings(pairs)
        for j, r in enumerate(chunk):
            mine, theirs = got[2 * j], got[2 * j + 1]
            said = mine.best
            record: dict[str, Any] = {**asdict(r), "evidence": "", "candidates": []}
            if said is not None and said.probability >= min_text:
                hedged = hedged_at(r.text, said.start, said.text)
                readings = (mine, theirs)
                for c in observe(r.text, r.question, readings, r.evidence, hedged, score_batch):
                    good = r.wrong and any(states(c.answer.text, g) for g in r.gold)
                    record["candidates"].append(
                        {"text": c.answer.text, "signals": c.signals, "right": good}
                    )
            out.append(record)
    return out


def states(answer: str, gold: str) -> bool:
    """Whether ``answer`` states the gold answer: the same numbers, or the same name (a name
    and its full form), or half its words (token F1 >= 0.5, SQuAD's normalisation).

    >>> states("2.8 kg", "2.8 kilograms"), states("the Roman Empire", "Roman Empire")
    (True, True)
    >>> states("5 kg", "2019"), states("Neil Armstrong", "Armstrong"), states("five", "5")
    (False, True, True)
    """
    from editor.judge.answer_match import numerals
    from editor.reader.answers import value_of

    a, g = value_of(numerals(answer)), value_of(numerals(gold))
    if a[:1] == ("#",) or g[:1] == ("#",):
        return a == g
    common = sum(min(a.count(w), g.count(w)) for w in set(a))
    return bool(common) and 2 * common / (len(a) + len(g)) >= 0.5


def _xy(
    records: Sequence[dict[str, Any]], names: Sequence[str] = NAMES
) -> tuple[np.ndarray, np.ndarray]:
    xs = [[c["signals"][n] for n in names] for r in records for c in r["candidates"]]
    ys = [int(c["right"]) for r in records for c in r["candidates"]]
    return np.array(xs, dtype=float).reshape(-1, len(names)), np.array(ys)


def decisions(records: Sequence[dict[str, Any]], head: ReaderHead) -> list[tuple[float, bool]]:
    """Per row, the head's chosen candidate: (P, whether applying it is right); rows with no
    candidate of a kind the question allows: (0, False)."""
    out = []
    for r in records:
        ok = [c for c in r["candidates"] if not c["signals"]["fit_bad"]]
        if not ok:
            out.append((0.0, False))
            continue
        best = max(ok, key=lambda c: head(c["signals"]))
        out.append((head(best["signals"]), bool(best["right"])))
    return out


def curve(decided: Sequence[tuple[float, bool]]) -> list[tuple[float, int, int]]:
    """(threshold, right edits applied, wrong edits applied) over ``GRID``."""
    return [
        (t, sum(ok for p, ok in decided if p >= t), sum(not ok for p, ok in decided if p >= t))
        for t in GRID
    ]


def point(points: Sequence[tuple[float, int, int]], precision: float) -> float:
    """The lowest threshold from which every higher one keeps applied edits right at least
    ``precision`` of the time (1.0 where none does)."""
    best = 1.0
    for t, right, wrong in reversed(points):
        if right + wrong and right / (right + wrong) < precision:
            break
        best = t
    return best


def fit(
    train: Sequence[dict[str, Any]],
    dev: Sequence[dict[str, Any]],
    precision: float = 0.9,
    prove_precision: float = 0.95,
    names: Sequence[str] = NAMES,
) -> tuple[ReaderHead, list[tuple[float, int, int]]]:
    """The head fitted on ``train`` over the signals ``names``, recalibrated and its points
    chosen on ``dev``."""
    from sklearn.linear_model import LogisticRegression

    names = tuple(names)
    x, y = _xy(train, names)
    if len(set(y.tolist())) < 2:
        raise ValueError("the training rows have one label only; give more rows")
    m = LogisticRegression(C=1.0, max_iter=3000).fit(x, y)
    raw = Logistic(names, tuple(float(v) for v in m.coef_[0]), float(m.intercept_[0]))
    xd, yd = _xy(dev, names)
    z = np.array([raw.score(dict(zip(names, row, strict=True))) for row in xd])
    platt = LogisticRegression(C=1e6, max_iter=2000).fit(z[:, None], yd)
    a, b = float(platt.coef_[0][0]), float(platt.intercept_[0])
    cal = Logistic(raw.names, raw.coef, raw.intercept, a, b)
    probe = ReaderHead(cal, 1.0, 1.0, 1.0)
    decided = decisions(dev, probe)
    points = curve(decided)
    apply_min, prove_min = point(points, precision), point(points, prove_precision)
    suggest_min = band_point(decided, apply_min)
    return ReaderHead(cal, apply_min, max(prove_min, apply_min), suggest_min), points


def band_point(decided: Sequence[tuple[float, bool]], upper: float, share: float = 0.5) -> float:
    """The lowest threshold under ``upper`` from which the rows decided below ``upper`` would
    be right suggestions at least ``share`` of the time (``upper`` where none is).

    >>> band_point([(0.1, False), (0.2, False), (0.3, False), (0.4, True), (0.5, True)], 0.8)
    0.11
    """
    best = upper
    for t in reversed([g for g in GRID if g < upper]):
        band = [ok for p, ok in decided if t <= p < upper]
        if band and sum(band) / len(band) < share:
            break
        best = t
    return best


def tally(records: Sequence[dict[str, Any]], head: ReaderHead) -> dict[str, float]:
    """What the head does at its points: wrong rows fixed, edits applied that are wrong (to a
    wrong row or a right one), suggestions, and the ECE of its P over every candidate."""
    decided = decisions(records, head)
    applied = [(p, ok) for p, ok in decided if p >= head.apply_min]
    probs = [(head(c["signals"]), c["right"]) for r in records for c in r["candidates"]]
    return {
        "rows": len(records),
        "wrong_rows": sum(r["wrong"] for r in records),
        "fixed": sum(ok for _, ok in applied),
        "harmful": sum(not ok for _, ok in applied),
        "suggested": sum(head.suggest_min <= p < head.apply_min for p, _ in decided),
        "any_candidate_right": sum(any(c["right"] for c in r["candidates"]) for r in records),
        "ece": ece(probs),
    }


def ece(probs: Sequence[tuple[float, bool]], bins: int = 10) -> float:
    """Expected calibration error over equal-width bins.

    >>> ece([(0.9, True), (0.9, False)])
    0.4
    """
    total, n = 0.0, len(probs)
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        part = [(p, ok) for p, ok in probs if lo <= p < hi or (b == bins - 1 and p == 1.0)]
        if part:
            gap = abs(np.mean([p for p, _ in part]) - np.mean([ok for _, ok in part]))
            total += len(part) / n * gap
    return round(float(total), 4)


def write(folder: Path, head: ReaderHead, points: list, metrics: dict[str, Any]) -> None:
    """``reader.json``, ``reader-metrics.json`` and the operating-point plot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from training.figures import save_figure

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "reader.json").write_text(json.dumps(head.to_json(), indent=2) + "\n", "utf-8")
    text = json.dumps(metrics, indent=2) + "\n"
    (folder / "reader-metrics.json").write_text(text, "utf-8")
    t, right, wrong = zip(*points, strict=True)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(t, right, label="right edits applied (dev)")
    ax.plot(t, wrong, label="wrong edits applied (dev)")
    for x, style, name in ((head.apply_min, "--", "apply"), (head.suggest_min, ":", "suggest")):
        ax.axvline(x, ls=style, c="k", lw=0.8, label=f"{name} from {x:.2f}")
    ax.set_xlabel("P(the fix is right)")
    ax.set_ylabel("rows")
    ax.legend(fontsize=8)
    save_figure(fig, folder / "reader-operating-point.png")
