"""A question's answer in a text and in the evidence: the span of the kind the question asks
for (``editor.text.words.question_type``) that the question does not itself name. The
question-aware agreement gate and editor compare and swap these."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from editor.attribution.slots import Slot, norm, typed_spans
from editor.text.words import content_words, named_in_question
from retrieval.sentences import split

ANSWER_KINDS = {
    "person": {"person", "org"},
    "date": {"date"},
    "place": {"place"},
    "number": {"number"},
    "title": {"other"},
}
"""The slot kinds an answer to each question type fills (``question_type``)."""


def answer_span(doc: Any, question: str, kinds: set[str]) -> Slot | None:
    """The text's answer: its first typed span of ``kinds`` the question does not name."""
    for slot in typed_spans(doc):
        if slot.kind in kinds and not named_in_question(slot.text, question):
            return slot
    return None


def evidence_answers(
    nlp: Any, evidence: Sequence[str], question: str, kinds: set[str], top: int = 3
) -> list[str]:
    """Spans of ``kinds`` the question does not name, from the evidence sentences that share
    most of its content words (at least two, or all of a shorter question's), best first."""
    asked = content_words(question)
    need = min(2, len(asked))
    ranked = sorted(
        (
            (-len(asked & content_words(s)), i, s)
            for i, s in enumerate(x for text in evidence for x in split(text))
        ),
    )
    sentences = [s for shared, _, s in ranked if -shared >= max(need, 1)][:top]
    out: list[str] = []
    for doc in nlp.pipe(sentences):
        for slot in typed_spans(doc):
            if slot.kind in kinds and not named_in_question(slot.text, question):
                if norm(slot.text) not in {norm(x) for x in out}:
                    out.append(slot.text)
    return out
