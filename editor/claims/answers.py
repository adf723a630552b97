"""A question's answer in a text and in the evidence: the span of the kind the question asks
for (``editor.text.words.question_type``) that the question does not itself name. The
question-aware agreement gate and editor compare and swap these."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from editor.claims.slots import Slot, norm, typed_spans
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
    """Spans of ``kinds`` the question does not name, from the evidence sentences that share at
    least half of its content words (and two), best sentence first; within a sentence the span
    nearest to one of the question's words first ("music by A, lyrics by B" answers "who wrote
    the lyrics" with B). Spans inside quotation marks are titles, never people, places or dates.

    >>> from editor.text.nlp import get_nlp
    >>> evidence_answers(get_nlp(), ["The Phantom of the Opera is a musical with music by "
    ...     "Andrew Lloyd Webber and lyrics by Charles Hart."],
    ...     "who wrote the lyrics for phantom of the opera", {"person", "org"})[0]
    'Charles Hart'
    """
    asked = content_words(question)
    need = max(min(2, len(asked)), (len(asked) + 1) // 2, 1)
    ranked = sorted(
        (
            (-len(asked & content_words(s)), i, s)
            for i, s in enumerate(x for text in evidence for x in split(text))
        ),
    )
    sentences = [s for shared, _, s in ranked if -shared >= need][:top]
    out: list[str] = []
    for doc in nlp.pipe(sentences):
        cues = [t.i for t in doc if t.lower_ in asked]
        found = []
        for slot in typed_spans(doc):
            if slot.kind not in kinds or named_in_question(slot.text, question):
                continue
            if _quoted(doc.text, slot) and slot.kind != "other":
                continue
            tokens = [t.i for t in doc if slot.start <= t.idx < slot.end]
            gap = min(  # a cue before the span ("lyrics by B") beats one after it ("A and lyrics")
                (t - c if c < t else c - t + 0.5 for c in cues for t in tokens if c not in tokens),
                default=99,
            )
            # the whole entity before a number inside it ("150 kilograms", not "150")
            found.append((gap, slot.start, -len(slot.text), slot.text))
        for *_, text in sorted(found):
            if norm(text) not in {norm(x) for x in out}:
                out.append(text)
    return out


def _quoted(text: str, slot: Slot) -> bool:
    """Whether the span stands inside quotation marks ("Cinderella" in a list of tales)."""
    before, after = text[: slot.start].rstrip(), text[slot.end :].lstrip()
    return before[-1:] in {'"', "“", "'", "‘"} and after[:1] in {'"', "”", "'", "’"}


def asked_of(question: str, evidence_query: str | None) -> str:
    """The question an evidence answers: hop 2's question about the bridge entity ("Who
    directed Forrest Gump?", same opening words as the user's question) where the evidence
    came from it, else the user's question.

    >>> asked_of("Who directed the film that won Best Picture?", "Who directed Forrest Gump?")
    'Who directed Forrest Gump?'
    >>> asked_of("Who directed the film?", "The film was directed by Steven Spielberg.")
    'Who directed the film?'
    """
    q = evidence_query or ""
    hop_2 = q.rstrip().endswith("?") and q != question and q.split()[:2] == question.split()[:2]
    return q if hop_2 else question


_PARTS = re.compile(
    r"(?i),?\s+and\s+(?=(?:how|what|when|where|who|whom|whose|which|why|is|are|was|were|does|"
    r"do|did|can|will|has|have)\b)"
)


def question_parts(question: str) -> list[str]:
    """The questions one question asks: "How much does it cost, and how loud is it?" asks two.

    >>> question_parts("How much does the T4 weigh, and how long does it run?")
    ['How much does the T4 weigh?', 'How long does it run?']
    >>> question_parts("Who wrote and directed Alien?")
    ['Who wrote and directed Alien?']
    """
    parts = [p.strip().rstrip("?").strip() for p in _PARTS.split(question) if p.strip()]
    if len(parts) < 2:
        return [question]
    return [f"{p[:1].upper()}{p[1:]}?" for p in parts]
