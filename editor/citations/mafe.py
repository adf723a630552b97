"""QA-based factuality (MAFE, from the keys-to-text work): questions asked of one text are
answered from another and the answers matched.

Questions come from spans of a text: its typed slots (names, numbers, dates, with the verifier's
slot reader) and its noun phrases. A question is its sentence with the span blanked ("The tower
was completed in ___."), typed by the span's kind. It is answered from the other text without
looking at the expected answer: among the other text's sentences that hold a span of the
question's kind, the one sharing the most content words with the question (those near the blank
count twice); there, the span of that kind in the blank's grammatical role (the same dependency
on the same word: "___ was completed" asks for the subject of "complete"), then with the most
surrounding words in common (a span whose words are mostly in the question is not an answer).
The answer is matched to the span
by the verifier's typed slot comparison for dates, numbers and names ("31 March 1889" states
"March 1889"; a date or number otherwise scores 0, its value decides) and by normalised token F1
for the rest.

- precision: questions from the output answered from the sources (is what it says there);
- recall: questions from a reference answered from the output (does it say what it should).

Offline and model-free apart from spaCy: no question-generation or reading model is needed, so
it runs wherever the checker does. With ``reader`` (``editor.reader``, the judge's extractive
reader) each span is asked as a question instead (``form``: the cloze, or the sentence with the
question word of the span's kind in its place) and the reader's answer, copied from the other
text, is matched the way the judge matches answers (``same_answer``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from editor.claims.slot_values import states_same
from editor.claims.slots import Slot, family, typed_spans
from editor.judge.agreement.reader import as_question
from editor.text.nlp import get_nlp
from editor.text.words import content_words
from retrieval.sentences import split

MAX_QUESTIONS = 32
"""Most questions asked of one text (the first spans in reading order)."""
_WINDOW = 5


@dataclass(frozen=True)
class Question:
    """One question and its answer from the other text."""

    question: str
    expected: str
    kind: str
    answer: str | None
    f1: float
    same_value: bool

    @property
    def score(self) -> float:
        """1 for the same value; a date or number otherwise scores 0 (its value decides, not
        its words: "300 metres" is not half of "330 metres"); other answers their token F1."""
        if self.same_value:
            return 1.0
        return 0.0 if self.kind in {"date", "number", "ordinal"} else self.f1

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "expected": self.expected,
            "kind": self.kind,
            "answer": self.answer,
            "f1": round(self.f1, 4),
            "same_value": self.same_value,
        }


@dataclass(frozen=True)
class Mafe:
    """Precision (output asked, sources answer), recall (reference asked, output answers)."""

    precision: float | None
    recall: float | None
    precision_questions: tuple[Question, ...] = ()
    recall_questions: tuple[Question, ...] = ()

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None:
            return p if r is None else r if p is None else None
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_json(self) -> dict[str, Any]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 4)

        return {
            "precision": r(self.precision),
            "recall": r(self.recall),
            "f1": r(self.f1),
            "questions": [q.to_json() for q in self.precision_questions],
            "recall_questions": [q.to_json() for q in self.recall_questions],
        }


def _norm_tokens(text: str) -> list[str]:
    text = re.sub(r"[^\w\s]", " ", text.lower())
    return [t for t in text.split() if t not in {"a", "an", "the"}]


def token_f1(a: str, b: str) -> float:
    """SQuAD's token F1 of two answers.

    >>> round(token_f1("the Chrysler Building", "Chrysler Building in New York"), 3)
    0.571
    """
    x, y = _norm_tokens(a), _norm_tokens(b)
    common = sum((Counter(x) & Counter(y)).values())
    if not common:
        return 0.0
    p, r = common / len(x), common / len(y)
    return 2 * p * r / (p + r)


@dataclass(frozen=True)
class _Span:
    slot: Slot
    kind: str  # a slot family, or "np"


def _spans(doc: Any) -> list[_Span]:
    slots = typed_spans(doc)
    outer = [
        s
        for s in slots
        if not any(o is not s and o.start <= s.start and s.end <= o.end for o in slots)
    ]
    out = [_Span(s, family(s.kind)) for s in outer]
    for chunk in doc.noun_chunks:
        a, b = chunk.start_char, chunk.end_char
        if chunk.root.pos_ not in {"NOUN", "PROPN"} or not content_words(chunk.text):
            continue
        if any(s.start < b and a < s.end for s in outer):
            continue
        out.append(_Span(Slot(a, b, chunk.text, "np"), "np"))
    return sorted(out, key=lambda s: s.slot.start)


def _around(doc: Any, slot: Slot) -> set[str]:
    """Content words within a few tokens of the span."""
    before = doc.text[: slot.start].split()[-_WINDOW:]
    after = doc.text[slot.end :].split()[:_WINDOW]
    return content_words(" ".join(before + after))


def _role(doc: Any, slot: Slot) -> tuple[str, str]:
    """The span's grammatical role: its head token's dependency and the lemma it hangs on
    ("The tower was completed": nsubjpass of "complete")."""
    span = doc.char_span(slot.start, slot.end, alignment_mode="expand")
    if span is None or not len(span):
        return "", ""
    root = span.root
    head = root.head
    while head.pos_ == "ADP" and head.head.i != head.i:  # "completed in ___": the verb
        head = head.head
    return root.dep_, head.lemma_.lower() if head.i != root.i else ""


class _Reader:
    """A text split and parsed once, to answer questions from."""

    def __init__(self, text: str, nlp: Any) -> None:
        self.docs = list(nlp.pipe(split(text) or [text]))
        self.words = [content_words(d.text) for d in self.docs]
        self.spans = [_spans(d) for d in self.docs]

    def answer(self, qdoc: Any, span: _Span) -> tuple[str | None, bool]:
        """The answer span's text (None: unanswerable) and whether it states the same value."""
        asked = content_words(qdoc.text) - content_words(span.slot.text)
        if not asked:
            return None, False

        def fits(c: _Span) -> bool:  # an answer is not already in the question
            words = content_words(c.slot.text)
            return c.kind == span.kind and len(words & asked) < max(1, len(words)) / 2

        context = _around(qdoc, span.slot)
        scored = [
            (2 * len(context & w) + len(asked & w), -i)
            for i, w in enumerate(self.words)
            if any(fits(c) for c in self.spans[i])
        ]
        if not scored or max(scored)[0] == 0:
            return None, False
        best = -max(scored)[1]
        doc = self.docs[best]
        candidates = [c for c in self.spans[best] if fits(c)]
        role = _role(qdoc, span.slot)

        def fit_score(c: _Span) -> int:
            dep, head = _role(doc, c.slot)
            same_head = head == role[1] and head != ""
            return (
                4 * (same_head and dep == role[0])
                + 2 * same_head
                + len(context & _around(doc, c.slot))
            )

        pick = max(candidates, key=fit_score)
        same = span.kind != "np" and states_same(qdoc, span.slot, doc, pick.slot)
        return pick.slot.text, same


def ask(
    text: str,
    other: str,
    nlp: Any = None,
    max_questions: int = MAX_QUESTIONS,
    reader: Any = None,
    form: str = "question",
    policy: Any = None,
) -> list[Question]:
    """Questions from ``text``'s spans, answered from ``other``: by the sentence-matching rule
    above, or by an extractive ``reader`` (``editor.reader``) asked each span as a ``form``
    question, its answer taken as the judge takes it (``policy``: ``judge.reader``)."""
    nlp = nlp or get_nlp()
    asked: list[tuple[Any, _Span]] = []
    for qdoc in nlp.pipe(split(text) or [text]):
        asked += [(qdoc, span) for span in _spans(qdoc)]
    asked = asked[:max_questions]
    if reader is not None:
        return _read(asked, other, reader, form, policy)
    answers = _Reader(other, nlp)
    out: list[Question] = []
    for qdoc, span in asked:
        s = span.slot
        found, same = answers.answer(qdoc, span)
        f1 = token_f1(s.text, found) if found else 0.0
        out.append(
            Question(as_question(qdoc.text, s, span.kind), s.text, span.kind, found, f1, same)
        )
    return out


def _read(
    asked: Sequence[tuple[Any, _Span]], other: str, reader: Any, form: str, policy: Any
) -> list[Question]:
    from editor.config.revision import ReaderPolicy
    from editor.judge.agreement.reader import answered
    from editor.judge.answer_match import same_answer

    policy = policy or ReaderPolicy()

    questions = [as_question(qdoc.text, sp.slot, sp.kind, form) for qdoc, sp in asked]
    readings = reader.read_batch([(q, other) for q in questions]) if questions else []
    out = []
    for q, (_, sp), r in zip(questions, asked, readings, strict=True):
        best = answered(r, policy)
        found = best.text if best is not None else None
        same = found is not None and sp.kind != "np" and same_answer(sp.slot.text, found)
        f1 = token_f1(sp.slot.text, found) if found else 0.0
        out.append(Question(q, sp.slot.text, sp.kind, found, f1, same))
    return out


def mafe(
    output: str,
    sources: str | Sequence[str],
    reference: str | None = None,
    nlp: Any = None,
    reader: Any = None,
    form: str = "question",
    policy: Any = None,
) -> Mafe:
    """MAFE precision of ``output`` against ``sources`` and, with a ``reference``, its recall;
    answered by the sentence-matching rule, or by ``reader`` asked ``form`` questions.

    >>> m = mafe("The tower was completed in 1887 in Paris.",
    ...          "The Eiffel Tower in Paris was completed in 1889.")
    >>> [(q.expected, q.answer, q.score) for q in m.precision_questions]
    [('The tower', None, 0.0), ('1887', '1889', 0.0), ('Paris', 'Paris', 1.0)]
    """
    nlp = nlp or get_nlp()
    src = sources if isinstance(sources, str) else "\n".join(sources)
    pq = ask(output, src, nlp, reader=reader, form=form, policy=policy)
    precision = sum(q.score for q in pq) / len(pq) if pq else None
    recall, rq = None, []
    if reference is not None:
        rq = ask(reference, output, nlp, reader=reader, form=form, policy=policy)
        recall = sum(q.score for q in rq) / len(rq) if rq else None
    return Mafe(precision, recall, tuple(pq), tuple(rq))
