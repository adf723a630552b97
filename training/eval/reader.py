"""``purr eval reader``: the extractive reader on XQuAD English (answer F1 and exact match, the
SQuAD way) and on SQuAD 2.0 dev's unanswerable questions (no-answer accuracy; the first 1,500
by default), without the passages XQuAD holds. Also sweeps the "no answer" operating point
(``SWEEP``: F1 against no-answer accuracy, ``tradeoff.png``) and draws the learning curve of
the reader's own ``state.json``.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import string
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from training.args import option
from training.eval.base import Evaluation

EVALUATION = Evaluation(
    name="reader",
    help="the extractive reader: XQuAD English F1/EM and SQuAD 2.0 dev no-answer accuracy",
    primary="xquad_f1",
)


def normalize(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, articles or extra spaces.

    >>> normalize("The  Roman Empire!")
    'roman empire'
    """
    text = "".join(c for c in text.lower() if c not in string.punctuation)
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD's token F1.

    >>> token_f1("the Roman Empire", "Roman Republic")
    0.5
    """
    p, g = normalize(prediction).split(), normalize(gold).split()
    common = sum((collections.Counter(p) & collections.Counter(g)).values())
    if not p or not g:
        return float(p == g)
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def predicted(reading: Any, null_ratio: float = 1.0) -> str:
    """The reader's answer text, or "" where "no answer" is ``null_ratio`` times as likely as
    its best span or more."""
    best = reading.best
    if best is None or reading.no_answer >= null_ratio * best.probability:
        return ""
    return best.text


def score_readings(rows: Sequence[Any], readings: Sequence[Any], null_ratio: float = 1.0):
    """F1 and EM (x100) over answerable rows, no-answer accuracy over the others, and the
    share of answerable rows the reader wrongly calls unanswered.

    >>> from editor.reader.base import Answer, Reading
    >>> from training.data.reader import QARow
    >>> rows = [QARow("q", "Paris is big.", (("Paris", 0),), "a", "t"),
    ...         QARow("q", "Lyon is big.", (), "a", "t", "other")]
    >>> reads = [Reading("q", (Answer("Paris", 0, 5, 0.9),), 0.05), Reading("q", (), 0.9)]
    >>> score_readings(rows, reads)["f1"], score_readings(rows, reads)["no_answer_accuracy"]
    (100.0, 1.0)
    """
    f1s, ems, nulls, missed = [], [], [], 0
    for row, reading in zip(rows, readings, strict=True):
        text = predicted(reading, null_ratio)
        if row.answerable:
            golds = [t for t, _ in row.answers]
            f1s.append(max(token_f1(text, g) for g in golds) if text else 0.0)
            ems.append(float(any(normalize(text) == normalize(g) for g in golds)) if text else 0.0)
            missed += not text
        else:
            nulls.append(float(text == ""))
    n = max(1, len(f1s))
    return {
        "f1": round(100 * sum(f1s) / n, 2),
        "em": round(100 * sum(ems) / n, 2),
        "no_answer_accuracy": round(sum(nulls) / max(1, len(nulls)), 4),
        "answerable_unanswered": round(missed / n, 4),
        "answerable": len(f1s),
        "unanswerable": len(nulls),
    }


def plot_curve(curve: list[dict[str, Any]], png: Path) -> None:
    """The training curve: tuning F1 and no-answer accuracy against examples seen."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    xs = [p["examples"] for p in curve]
    ax.plot(xs, [p["f1"] for p in curve], marker="o", label="F1 (QED dev slice)")
    ax.plot(
        xs,
        [100 * p["no_answer_accuracy"] for p in curve],
        marker="s",
        label="no-answer accuracy x100",
    )
    for key, label in (("xquad_f1", "XQuAD F1"),):
        pts = [(p["examples"], p[key]) for p in curve if key in p]
        if pts:
            ax.plot(*zip(*pts, strict=True), marker="^", label=label)
    ax.set_xlabel("training examples")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


SWEEP = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0)
"""The "no answer" operating points ``purr eval reader`` reports: no-answer as likely as this
share of the best span (1.0: the more likely of the two)."""


def plot_tradeoff(sweep: list[dict[str, Any]], png: Path) -> None:
    """XQuAD F1 against SQuAD 2.0 no-answer accuracy, one point per null ratio."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.8, 3.4))
    xs = [100 * p["no_answer_accuracy"] for p in sweep]
    ax.plot(xs, [p["xquad_f1"] for p in sweep], marker="o")
    for p, x in zip(sweep, xs, strict=True):
        ax.annotate(f"{p['null_ratio']:g}", (x, p["xquad_f1"]), fontsize=7)
    ax.set_xlabel("SQuAD 2.0 no-answer accuracy (%)")
    ax.set_ylabel("XQuAD English F1")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


def reader_args(p: argparse.ArgumentParser) -> None:
    """The reader read and the data read with it (``purr eval reader`` and ``reader_layers``)."""
    p.add_argument("--reader", default=None, help="a reader folder (default: the shipped one)")
    option(p, "--data", Path, None, "the shared data folder")


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    """``purr eval reader``'s arguments."""
    reader_args(p)
    option(p, "--limit", int, 0, "at most this many questions per set")
    option(
        p,
        "--null-ratio",
        float,
        1.0,
        "answer 'none' where no-answer is this many times as likely as the span",
    )
    option(
        p,
        "--unanswerable",
        int,
        1500,
        "SQuAD 2.0 dev unanswerable questions read (outside XQuAD's passages)",
    )
    p.add_argument("--quantize", choices=["int8", "none"], default="int8")
    p.add_argument("--out", required=True, help="folder for metrics.json and reader.png")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval reader``."""
    from tqdm.auto import tqdm

    from editor.reader.extractive import ExtractiveReader
    from training.data.reader import load, test_contexts

    reader = ExtractiveReader(args.reader, quantize=args.quantize)
    xquad = load("xquad", args.data)
    held = test_contexts(args.data)
    squad2 = [r for r in load("squad2_dev", args.data) if r.context not in held]
    squad2 = [r for r in squad2 if not r.answerable][: args.limit or args.unanswerable]
    if args.limit:
        xquad = xquad[: args.limit]
    report: dict[str, Any] = {"reader": str(reader.path)}
    read: dict[str, tuple[list[Any], list[Any]]] = {}
    for name, rows in (("xquad", xquad), ("squad2_dev", squad2)):
        readings = []
        for i in tqdm(range(0, len(rows), 64), desc=name):
            readings += reader.read_batch([(r.question, r.context) for r in rows[i : i + 64]])
        read[name] = (rows, readings)
        report[name] = score_readings(rows, readings, args.null_ratio)
    report["xquad_f1"] = report["xquad"]["f1"]
    report["squad2_no_answer_accuracy"] = report["squad2_dev"]["no_answer_accuracy"]
    report["sweep"] = [
        {
            "null_ratio": ratio,
            "xquad_f1": score_readings(*read["xquad"], ratio)["f1"],
            "no_answer_accuracy": score_readings(*read["squad2_dev"], ratio)["no_answer_accuracy"],
        }
        for ratio in SWEEP
    ]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    plot_tradeoff(report["sweep"], out / "tradeoff.png")
    (out / "metrics.json").write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    state = reader.path / "state.json"
    if state.is_file():
        plot_curve(json.loads(state.read_text("utf-8"))["curve"], out / "reader.png")
    return report
