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
  answer, a hedge ("about");
- with a verifier (the attribution model): P(supported) and P(contradicted) of the text's
  sentence by the evidence, and of the sentence with the candidate in place of the text's answer
  (``verified``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
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
VERIFIED = ("v_before", "v_after", "v_gain", "c_before", "c_after")
"""The verifier's signals (``verified``); a head trained without them reads them as 0."""


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


def verified(
    score_batch: Callable[[list[tuple[str, str]]], list[Any]],
    text: str,
    said: Answer,
    evidence: str,
    found: list[Candidate],
) -> None:
    """Add the verifier's signals (``VERIFIED``) to each of ``found``: ``score_batch`` (an
    attribution model's) scores the sentence of ``text`` holding ``said`` against ``evidence``,
    before and with each candidate in the place of ``said``."""
    from retrieval.sentences import split_spans

    if not found:
        return
    a, b = next(((a, b) for a, b in split_spans(text) if a <= said.start < b), (0, len(text)))
    b = max(b, said.end)
    edited = [text[a : said.start] + c.answer.text + text[said.end : b] for c in found]
    got = score_batch([(evidence, text[a:b])] + [(evidence, e) for e in edited])
    first = got[0]
    for c, s in zip(found, got[1:], strict=True):
        c.signals.update(
            v_before=first.supported,
            v_after=s.supported,
            v_gain=s.supported - first.supported,
            c_before=first.contradicted,
            c_after=s.contradicted,
        )


def observe(
    text: str,
    question: str,
    readings: tuple[Reading, Reading],
    evidence: str,
    hedged: bool,
    score_batch: Callable[[list[tuple[str, str]]], list[Any]] | None = None,
) -> list[Candidate]:
    """``candidates`` for the text's best answer, the entity labels read by the packaged
    spaCy model: the text's and the evidence's readings of ``question``; with ``score_batch``
    (a verifier's), its signals too."""
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

    found = candidates(
        text,
        said,
        mine,
        theirs,
        lambda a: labels_at(doc(evidence), a.start, a.end),
        expected(question),
        labels_at(doc(text), said.start, said.end),
        hedged,
    )
    if score_batch is not None:
        verified(score_batch, text, said, evidence, found)
    return found


@dataclass(frozen=True)
class ReaderHead:
    """P(applying a candidate is right) and the points that decide (see the module doc)."""

    right: Logistic
    apply_min: float
    prove_min: float
    suggest_min: float

    def __call__(self, signals: Mapping[str, float]) -> float:
        return self.right(signals)

    @property
    def verified(self) -> bool:
        """Whether the head reads the verifier's signals (``VERIFIED``)."""
        return any(n in VERIFIED for n in self.right.names)

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
