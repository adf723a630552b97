"""What the learned judge reads: both judges' signals on a sentence and on each proposed edit,
and the head that turns them into P(the sentence is wrong) and P(the edit is right).

The signals: the rules judge's NLI probabilities, the slot rule that fired (slot, role,
negation, NLI, the question's answer), its verdict; the span judge's pair probabilities, the
words it flags and whether its pointer found the evidence's words for them; whether both ask
for an edit; and for an edit: which judge wrote it, what its own judge decided (applied,
unsure, refused), its size, how many words it puts in and how many of them stand in the
evidence, whether it changes a number, whether the other judge wrote the same edit, and what
the other judge decides of it.

The head is two logistic regressions over those signals, each with a Platt recalibration fitted
on a dev split, stored as JSON (``head.json``: names, weights, calibration, operating point).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rapidfuzz.distance import Levenshtein

from editor.judge.base import Decision, Finding
from editor.text.words import TOKEN, word_changes

RULES = ("slot", "role", "negation", "nli", "question", "llm")


def default_head() -> Path:
    """The shipped head's folder (``editor/models/purr-judge``)."""
    return Path(__file__).resolve().parents[1] / "models" / "purr-judge"


_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class DecidedEdit:
    """An edit of the judged sentence one judge proposed: ``source`` (``span`` or ``rules``),
    the revised sentence, why, what that judge decided of it and what the other one does."""

    source: str
    text: str
    reason: str
    decision: Decision
    cross: Decision | None = None
    """what the other judge decides of the same edit (None: it could not read it)"""


def sentence_signals(rules: Finding, span: Finding) -> dict[str, float]:
    """The signals on the sentence both judges assessed."""
    con_flags = [f for f in span.flags if f.kind == "contradicted"]
    out = {
        "r_sup": rules.supported or 0.0,
        "r_con": rules.contradicted or 0.0,
        "r_open": float(rules.opens),
        "r_supported": float(rules.verdict == "supported"),
        "s_sup": span.supported or 0.0,
        "s_con": span.contradicted or 0.0,
        "s_open": float(span.opens),
        "s_supported": float(span.verdict == "supported"),
        "s_contradicted": float(span.verdict == "contradicted"),
        "s_flagged": float(bool(con_flags)),
        "s_pointed": float(any(f.fix for f in con_flags)),
        "both_open": float(rules.opens and span.opens),
    }
    out.update({f"rule_{r}": float(rules.rule == r) for r in RULES})
    return out


def edit_signals(
    sentence: str, candidate: DecidedEdit, evidence: str, others: Sequence[DecidedEdit] = ()
) -> dict[str, float]:
    """The signals on one proposed edit of ``sentence``."""
    changes = word_changes(sentence, candidate.text, ("replace", "insert", "delete"))
    removed = [w for old, _ in changes for w in old]
    added = [w for _, new in changes for w in new]
    ev_words = {w.lower() for w in TOKEN.findall(evidence)}
    stated = sum(w.lower() in ev_words for w in added)
    d = candidate.decision.applicability
    cross = candidate.cross.applicability if candidate.cross is not None else None
    return {
        "e_cross_safe": float(cross == "safe"),
        "e_cross_unsafe": float(cross == "unsafe"),
        "e_span": float(candidate.source == "span"),
        "e_safe": float(d == "safe"),
        "e_unsafe": float(d == "unsafe"),
        "e_chars": min(Levenshtein.distance(sentence, candidate.text), 60) / 60,
        "e_added": min(len(added), 8) / 8,
        "e_removed": min(len(removed), 8) / 8,
        "e_stated": stated / len(added) if added else 0.0,
        "e_all_stated": float(bool(added) and stated == len(added)),
        "e_number": float(any(_DIGIT.search(w) for w in removed + added)),
        "e_agreed": float(any(o.text == candidate.text and o is not candidate for o in others)),
    }


@dataclass(frozen=True)
class Logistic:
    """A logistic regression over named signals, with a Platt recalibration (``a * z + b``)."""

    names: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float
    a: float = 1.0
    b: float = 0.0

    def score(self, signals: Mapping[str, float]) -> float:
        """The regression's raw score, before the recalibration."""
        pairs = zip(self.names, self.coef, strict=True)
        return self.intercept + sum(c * signals.get(n, 0.0) for n, c in pairs)

    def __call__(self, signals: Mapping[str, float]) -> float:
        z = max(-30.0, min(30.0, self.a * self.score(signals) + self.b))
        return 1.0 / (1.0 + math.exp(-z))

    def to_json(self) -> dict[str, Any]:
        return {"names": list(self.names), "coef": list(self.coef), "intercept": self.intercept,
                "a": self.a, "b": self.b}  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Logistic:
        names, coef = tuple(data["names"]), tuple(float(c) for c in data["coef"])
        if len(names) != len(coef):
            raise ValueError(f"a head lists {len(names)} signals but {len(coef)} weights")
        return cls(names, coef, float(data["intercept"]), float(data["a"]), float(data["b"]))


@dataclass(frozen=True)
class Head:
    """P(the sentence is wrong) and P(an edit is right), and the points that decide: an edit is
    applied at ``apply_min`` and above, suggested from ``suggest_min``; a sentence is reported
    contradicted from ``wrong_min``."""

    wrong: Logistic
    right: Logistic
    apply_min: float
    suggest_min: float
    wrong_min: float = 0.5

    @classmethod
    def load(cls, folder: str | Path) -> Head:
        path = Path(folder) / "head.json"
        if not path.is_file():
            raise FileNotFoundError(
                f"no judge head at {path}; train one with `purr train judge` or set "
                "judge.head to a folder that has head.json"
            )
        try:
            data = json.loads(path.read_text("utf-8"))
            return cls(
                Logistic.from_json(data["wrong"]),
                Logistic.from_json(data["right"]),
                float(data["apply_min"]),
                float(data["suggest_min"]),
                float(data.get("wrong_min", 0.5)),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{path} is not a judge head ({e}); retrain it") from e

    def to_json(self) -> dict[str, Any]:
        return {
            "wrong": self.wrong.to_json(),
            "right": self.right.to_json(),
            "apply_min": self.apply_min,
            "suggest_min": self.suggest_min,
            "wrong_min": self.wrong_min,
        }
