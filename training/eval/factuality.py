"""``purr eval factuality``: how well MAFE and the verifier agree with human factuality labels.

On the dev rows of sets with human labels (QAGS: summary sentences of CNN/DM and XSum articles
judged consistent or not; SummEdits: summaries judged consistent or not), each summary is scored
two ways against its document:

- MAFE precision (``editor.citations.mafe``): questions from the summary answered from the
  document (a summary with no question to ask scores 1: it states nothing checkable);
- the verifier's P(supported) (the attribution model, as the checker and the report use it);
- with ``--reader``, MAFE precision answered by the judge's extractive reader instead of the
  sentence-matching rule (``mafe_reader``: each span asked as a declarative question,
  ``mafe_cloze``: as the blanked sentence).

Per set and method: ROC AUC against the label, the point-biserial correlation (Pearson's r with
the 0/1 label), the balanced accuracy at the best threshold for that set (an upper bound, the
same for both methods) and, for the verifier, at its configured threshold. Rows go to
``results.jsonl`` (a row journal: a killed run resumes); numbers to ``metrics.json``; ROC curves
to ``factuality.png``.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from editor.attribution.base import AttributionModel
from editor.attribution.verifier import judge_batch
from editor.citations.mafe import mafe
from editor.verdicts import SUPPORTED
from training.args import option
from training.eval.base import Evaluation, stopped
from training.figures import save_figure

EVALUATION = Evaluation(
    name="factuality",
    help="MAFE (QA-based factuality) and the verifier against human labels (QAGS, SummEdits dev)",
    primary="mafe/roc_auc",
)


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """The probability that a positive outranks a negative (ties count half).

    >>> roc_auc([0.9, 0.8, 0.3, 0.1], [1, 0, 1, 0])
    0.75
    """
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    if not sx or not sy:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / (sx * sy)


def balanced_accuracy(scores: Sequence[float], labels: Sequence[int], threshold: float) -> float:
    pos = [s >= threshold for s, y in zip(scores, labels, strict=True) if y]
    neg = [s < threshold for s, y in zip(scores, labels, strict=True) if not y]
    parts = [sum(p) / len(p) for p in (pos, neg) if p]
    return sum(parts) / len(parts) if parts else 0.0


def best_threshold(scores: Sequence[float], labels: Sequence[int]) -> tuple[float, float]:
    """(threshold, balanced accuracy) at the best of the scores' own values."""
    best = (0.5, 0.0)
    for t in sorted(set(scores)):
        acc = balanced_accuracy(scores, labels, t)
        if acc > best[1]:
            best = (t, acc)
    return best


READER_FORMS = {
    "question": ("mafe_reader",),
    "cloze": ("mafe_cloze",),
    "both": ("mafe_reader", "mafe_cloze"),
}
"""``--reader``: the MAFE columns the reader answers (none without it)."""


def score_rows(
    model: AttributionModel,
    rows: Sequence[Any],
    batch: int = 8,
    reader: Any = None,
    forms: Sequence[str] = (),
    policy: Any = None,
) -> list[dict[str, Any]]:
    """MAFE precision (and, with a ``reader``, the reader's for each of ``forms``) and the
    verifier's P(supported) of each (document, summary) row."""
    out = []
    for i in range(0, len(rows), batch):
        chunk = rows[i : i + batch]
        scores, _ = judge_batch(model, [(r.premise, r.hypothesis) for r in chunk])
        for r, sc in zip(chunk, scores, strict=True):
            m = mafe(r.hypothesis, r.premise)
            res = {
                "id": r.id,
                "label": r.label,
                "mafe": m.precision,
                "mafe_questions": len(m.precision_questions),
                "verifier": sc.supported,
            }
            for col in forms:
                form = "cloze" if col == "mafe_cloze" else "question"
                res[col] = mafe(
                    r.hypothesis, r.premise, reader=reader, form=form, policy=policy
                ).precision
            out.append(res)
    return out


def methods(results: Sequence[dict[str, Any]]) -> list[str]:
    """The scored columns present in every row: MAFE, the reader's MAFE forms, the verifier."""
    cols = ["mafe", "mafe_reader", "mafe_cloze", "verifier"]
    return [c for c in cols if results and all(c in r for r in results)]


def summarise(results: Sequence[dict[str, Any]], threshold: float) -> dict[str, Any]:
    labels = [int(r["label"] == SUPPORTED) for r in results]
    out: dict[str, Any] = {
        "rows": len(results),
        SUPPORTED: sum(labels),
        "no_questions": sum(r["mafe"] is None for r in results),
    }
    for method in methods(results):
        scores = [1.0 if r[method] is None else float(r[method]) for r in results]
        t, acc = best_threshold(scores, labels)
        auc, corr = roc_auc(scores, labels), pearson(scores, [float(y) for y in labels])
        out[method] = {
            "roc_auc": None if auc is None else round(auc, 4),
            "pearson_r": None if corr is None else round(corr, 4),
            "best_threshold": round(t, 4),
            "balanced_accuracy_at_best": round(acc, 4),
        }
    v = [float(r["verifier"]) for r in results]
    out["verifier"]["balanced_accuracy_at_threshold"] = round(
        balanced_accuracy(v, labels, threshold), 4
    )
    out["verifier"]["threshold"] = threshold
    return out


def plot(results: dict[str, list[dict[str, Any]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4.5), squeeze=False)
    for ax, (name, rows) in zip(axes[0], results.items(), strict=True):
        labels = [int(r["label"] == SUPPORTED) for r in rows]
        for method in methods(rows):
            scores = [1.0 if r[method] is None else float(r[method]) for r in rows]
            pts = [(0.0, 0.0)]
            P, N = max(1, sum(labels)), max(1, len(labels) - sum(labels))
            for t in sorted(set(scores), reverse=True):
                tp = sum(s >= t and y for s, y in zip(scores, labels, strict=True))
                fp = sum(s >= t and not y for s, y in zip(scores, labels, strict=True))
                pts.append((fp / N, tp / P))
            pts.append((1.0, 1.0))
            auc = roc_auc(scores, labels)
            ax.plot(
                [p[0] for p in pts],
                [p[1] for p in pts],
                label=f"{method} (AUC {auc:.2f})" if auc is not None else method,
            )
        ax.plot([0, 1], [0, 1], ls=":", color="grey")
        ax.set_title(f"{name} dev ({len(rows)} rows)")
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.legend(fontsize=8)
    save_figure(fig, path)


def run(
    model: AttributionModel,
    sets: dict[str, list[Any]],
    out: Path,
    threshold: float = 0.5,
    stop: Any = None,
    reader: Any = None,
    forms: Sequence[str] = (),
    policy: Any = None,
) -> dict[str, Any]:
    from contextlib import nullcontext

    from retrieval.files import GracefulStop, RowJournal, write_text

    out.mkdir(parents=True, exist_ok=True)
    guard = GracefulStop() if stop is None else nullcontext(stop)
    key = {id(r): f"{name}:{r.id}" for name, rows in sets.items() for r in rows}
    everything = [r for rows in sets.values() for r in rows]
    with RowJournal(out / "results.jsonl") as journal, guard as stop:
        todo = list(journal.pending(everything, key=lambda r: key[id(r)]))
        bar = tqdm(total=len(todo), desc="eval factuality")
        for i in range(0, len(todo), 8):
            if stop.requested:
                break
            chunk = todo[i : i + 8]
            scored = score_rows(model, chunk, reader=reader, forms=forms, policy=policy)
            for r, res in zip(chunk, scored, strict=True):
                journal.write({**res, "id": key[id(r)]})
            bar.update(len(chunk))
        bar.close()
    if stop.requested:
        return {"interrupted": True, "done": journal.written}
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text("utf-8").splitlines() if x]
    by_set = {name: [r for r in rows if r["id"].split(":", 1)[0] == name] for name in sets}
    metrics = {name: summarise(res, threshold) for name, res in by_set.items() if res}
    write_text(out / "metrics.json", json.dumps(metrics, indent=2))
    plot({k: v for k, v in by_set.items() if v}, out / "factuality.png")
    return metrics


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    """``purr eval factuality``'s arguments."""
    p.add_argument("--out", required=True, help="folder for results.jsonl, metrics.json, plot")
    p.add_argument("--sets", default="qags,summedits", help="labelled sets (default both)")
    option(p, "--limit", int, 300, "dev rows per set (default 300)")
    p.add_argument("--data", default=None, help="the data folder (default ../shared/data)")
    p.add_argument(
        "--reader",
        choices=["none", *READER_FORMS],
        default="question",
        help="MAFE answered by the judge's reader too: as questions, clozes or both",
    )
    common(p)


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval factuality`` on the labelled dev sets."""
    from editor.attribution.base import build
    from editor.config import load_config
    from retrieval.files import GracefulStop
    from training.eval.attribution import load_dev_sets

    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit must be >= 1, got {args.limit}")
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    sets = load_dev_sets(args.data, names, limit=args.limit)
    if not any(sets.values()):
        raise ValueError(f"no dev rows in {names}; check --data and --sets")
    cfg = load_config(args.config, list(args.overrides))
    model = build(cfg.attribution)
    model.load()
    forms = READER_FORMS.get(getattr(args, "reader", "none"), ())
    reader, policy = None, cfg.judge.reader
    if forms:
        from editor.reader import shared_reader

        reader = shared_reader(policy.model, policy.quantize)
    with GracefulStop() as stop:
        metrics = run(model, sets, Path(args.out), cfg.judge.attributed_min, stop, reader, forms)
    if metrics.get("interrupted"):
        metrics["stopped"] = stopped(stop, metrics["done"])
    return metrics
