"""The reader's contract: ``read(question, evidence) -> Reading``, one answer span copied from
the evidence with its probability, or "no answer here".

The reader is the question-based half of checking a text (QAGS, QuestEval, QAFactEval; RARR's
agreement model asks a question for the same reason): asked what the text answers, it answers
from the evidence, and its answer is typed by construction (it is the evidence's own words, with
their offsets). What a reading means for a sentence is the judge's to decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Answer:
    """A span of the evidence: ``text == evidence[start:end]``; ``probability``: the reader's
    probability that this span is the answer (against every other span and "no answer")."""

    text: str
    start: int
    end: int
    probability: float


@dataclass(frozen=True)
class Reading:
    """What the reader found for one (question, evidence): its best answers, best first, and
    the probability that the evidence does not answer the question (``no_answer``; taken from
    the window that most believes it does)."""

    question: str
    answers: tuple[Answer, ...]
    no_answer: float

    @property
    def best(self) -> Answer | None:
        return self.answers[0] if self.answers else None


class Reader(Protocol):
    """An extractive reader (see the module doc)."""

    def read(self, question: str, evidence: str) -> Reading:
        """The reading of one evidence for one question."""
        ...

    def read_batch(self, items: Sequence[tuple[str, str]]) -> list[Reading]:
        """The readings of (question, evidence) pairs, batched."""
        ...
