"""The judge's decision on a reader's proposal: where the reader answers a question from the
evidence otherwise than from the text, is the evidence's answer the fix?

One decision, learned on question rows (``purr train reader-head``): a logistic regression over
what the readings say of each candidate answer (``signals``), recalibrated on a dev split, gives
P(applying the candidate is right). The candidate is applied from ``apply_min``, proves its own
edit from ``prove_min`` (it stands where the verifier, a reader of word overlap, only lacks
proof: the wrong value may stand elsewhere in the same document), is suggested from
``suggest_min``, else only doubted. The points are chosen on dev rows (applied edits right at
least nine times in ten) and stored with the weights in ``reader.json``.

The signals, per candidate (an evidence answer that differs from the text's):
- its answer mass in the evidence (spans of one value summed, calibrated), whether it is the
  top answer, the mass of evidence answers that agree with the text (the text's answer standing
  in the evidence too), the rest, and P(no answer) in the evidence;
- the text's answer: its probability in the text's reading and P(no answer) there;
- the question's expected kind against the candidate's and the text answer's entity labels
  (``editor.claims.answer_types``), and whether the two share a label;
- the edit: both numbers, the candidate already in the text, its length against the text's
  answer, a hedge ("about").
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from editor.claims.answer_types import fit
from editor.claims.slot_values import bare_name
from editor.judge.answer_match import same_answer
from editor.judge.signals import Logistic
from editor.reader.base import Answer, Reading

NAMES = (
    "c_mass", "c_logit", "c_top", "said_ev", "rest_ev", "no_ev", "said_p", "no_text",
    "fit_good", "fit_bad", "said_fit_good", "said_fit_bad", "same_labels", "numeric",
    "in_text", "longer", "hedged",
)  # fmt: skip


def default_reader_head() -> Path:
    """The shipped head (``editor/models/purr-judge/reader.json``)."""
    return Path(__file__).resolve().parents[1] / "models" / "purr-judge" / "reader.json"


@dataclass(frozen=True)
class Candidate:
    """One evidence answer that differs from the text's, what the readings say of it."""

    answer: Answer
    signals: dict[str, float]


def candidates(
    text: str,
    said: Answer,
    mine: Reading,
    theirs: Reading,
    labels: Any,
    wanted: frozenset[str] | None,
    said_labels: frozenset[str],
    hedged: bool = False,
) -> list[Candidate]:
    """The evidence's answers that differ from the text's ``said`` (an answer of ``mine``, the
    text's reading), with their signals. ``labels(answer)``: the candidate's entity labels in
    the evidence; ``wanted``: the labels the question asks for (None: unknown)."""
    after = text[said.end :]
    agree = [a for a in theirs.answers if same_answer(said.text, a.text, after, hedged)]
    said_ev = min(1.0, sum(a.probability for a in agree))
    out = []
    for k, a in enumerate(theirs.answers):
        if any(a is b for b in agree):
            continue
        got = labels(a)
        p = min(max(a.probability, 1e-4), 1 - 1e-4)
        signals = {
            "c_mass": a.probability,
            "c_logit": math.log(p / (1 - p)) / 5,
            "c_top": float(k == 0),
            "said_ev": said_ev,
            "rest_ev": max(0.0, 1.0 - a.probability - said_ev - theirs.no_answer),
            "no_ev": theirs.no_answer,
            "said_p": said.probability,
            "no_text": mine.no_answer,
            "fit_good": float(fit(wanted, got) == 1),
            "fit_bad": float(fit(wanted, got) == -1),
            "said_fit_good": float(fit(wanted, said_labels) == 1),
            "said_fit_bad": float(fit(wanted, said_labels) == -1),
            "same_labels": float(bool(got & said_labels)),
            "numeric": float(any(c.isdigit() for c in a.text + said.text)),
            "in_text": float(f" {bare_name(a.text)} " in f" {bare_name(text)} "),
            "longer": min(abs(len(a.text) - len(said.text)), 40) / 40,
            "hedged": float(hedged),
        }
        out.append(Candidate(a, signals))
    return out


def observe(
    text: str, question: str, readings: tuple[Reading, Reading], evidence: str, hedged: bool
) -> list[Candidate]:
    """``candidates`` for the text's best answer, the entity labels read by the packaged
    spaCy model: the text's and the evidence's readings of ``question``."""
    from editor.claims.answer_types import expected, labels_at
    from editor.text.nlp import get_nlp

    nlp, (mine, theirs) = get_nlp(), readings
    said = mine.best
    if said is None:
        return []
    docs: dict[str, Any] = {}

    def doc(t: str) -> Any:
        if t not in docs:
            docs[t] = nlp(t)
        return docs[t]

    return candidates(
        text,
        said,
        mine,
        theirs,
        lambda a: labels_at(doc(evidence), a.start, a.end),
        expected(question),
        labels_at(doc(text), said.start, said.end),
        hedged,
    )


@dataclass(frozen=True)
class ReaderHead:
    """P(applying a candidate is right) and the points that decide (see the module doc)."""

    right: Logistic
    apply_min: float
    prove_min: float
    suggest_min: float

    def __call__(self, signals: Mapping[str, float]) -> float:
        return self.right(signals)

    def choose(self, found: list[Candidate]) -> tuple[Candidate, float] | None:
        """The candidate the head believes most, with its probability; never one of a kind the
        question does not ask for."""
        scored = [(c, self(c.signals)) for c in found if not c.signals["fit_bad"]]
        return max(scored, key=lambda x: x[1]) if scored else None

    @classmethod
    def load(cls, path: str | Path | None = None) -> ReaderHead:
        path = Path(path) if path else default_reader_head()
        if path.is_dir():
            path = path / "reader.json"
        if not path.is_file():
            raise FileNotFoundError(
                f"no reader head at {path}; train one with `purr train reader-head` or set "
                "judge.reader.head to a reader.json"
            )
        try:
            d = json.loads(path.read_text("utf-8"))
            return cls(
                Logistic.from_json(d["right"]),
                float(d["apply_min"]),
                float(d["prove_min"]),
                float(d["suggest_min"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{path} is not a reader head ({e}); retrain it") from e

    def to_json(self) -> dict[str, Any]:
        return {
            "right": self.right.to_json(),
            "apply_min": self.apply_min,
            "prove_min": self.prove_min,
            "suggest_min": self.suggest_min,
        }
