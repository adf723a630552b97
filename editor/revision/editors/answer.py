"""Question-aware editing: with a question as context, the answer is the span of the type the
question asks for (a person for "who", a date for "when", a place for "where", a number for
"how many"), and the fix is the evidence's answer to the same question, not any name on the
page.

``AnswerEditor`` wraps an editor (dspy's ``Refine`` habit: composition, not subclassing). Given a
question it finds the answer span in the text (a typed span of the asked kind that the question
does not itself name), reads the evidence's answer (``editor.claims.answers``: the span of
the same kind, not named in the question, nearest the question's words in the evidence sentence
sharing most of them), puts it in the span's place and keeps it when that raises
P(supported) - P(contradicted) by ``min_gain`` and ends up supported more than contradicted.
Without a question, or with no answer span or no evidence answer, the wrapped editor answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from editor.attribution.base import AttributionModel
from editor.claims.answers import ANSWER_KINDS, answer_span, asked_of, evidence_answers
from editor.claims.granularity import PLACE_KINDS
from editor.claims.places import load as load_places
from editor.claims.slot_values import bare_name, is_year_range
from editor.claims.slots import Slot
from editor.policy import swap_helps
from editor.revision.editors.base import Editor, OneByOne, Revision, edits
from editor.revision.editors.substitute import swap_in
from editor.text.words import is_question, question_type
from editor.types import Evidence, evidence_text


class AnswerEditor(OneByOne):
    """The answer span of a question's reply, with the evidence's answer (see the module doc)."""

    def __init__(
        self,
        inner: Editor,
        attribution: AttributionModel,
        min_gain: float = 0.2,
        nlp: Any = None,
    ) -> None:
        self.inner = inner
        self.attribution = attribution
        self.min_gain = min_gain
        self._nlp = nlp
        self.name = inner.name
        self.settles = True
        """a proposer of the question's answer: where it writes one, no other editor is asked"""

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            from editor.text.nlp import get_nlp

            self._nlp = get_nlp()
        return self._nlp

    def load(self) -> None:
        load = getattr(self.inner, "load", None)
        if callable(load):
            load()

    def applies(self, text: str, context: str | None) -> bool:
        """Whether it edits at all: a question's answer, or its inner editor."""
        return is_question(context) or edits(self.inner)

    def edit(self, text: str, evidence: Sequence[Evidence], context: str | None = None) -> Revision:
        if not is_question(context) or not evidence or not text.strip():
            return self.inner.edit(text, evidence, context)
        assert context is not None
        revision = self.answer(text, evidence, asked_of(context, evidence[0].query))
        if revision is None or revision.text == text:
            inner = self.inner.edit(text, evidence, context)
            if inner.text != text or revision is None:
                return inner
        return revision

    def answer(self, text: str, evidence: Sequence[Evidence], question: str) -> Revision | None:
        """The answer-span revision, or None where the question's type, the text's answer or
        the evidence's answers are missing."""
        kinds = ANSWER_KINDS.get(question_type(question))
        if kinds is None:
            return None
        span = answer_span(self.nlp(text), question, kinds)
        if span is None:
            return None
        premises = [evidence_text(e) for e in evidence]
        answers = [
            a
            for a in evidence_answers(self.nlp, premises, question, kinds)
            if not (span.kind in PLACE_KINDS and load_places().relation(span.text, a))
            # a range of years for one date (or back) is another kind of answer
            and is_year_range(Slot(0, len(a), a, span.kind)) == is_year_range(span)
        ][:1]  # the evidence's answer to the question, not any name on the page
        if not answers or any(bare_name(a) == bare_name(span.text) for a in answers[:1]):
            return None  # the evidence's best answer is the text's own
        texts = [text] + [swap_in(text, span.start, span.end, a) for a in answers]
        n = len(premises)
        scores = self.attribution.score_batch([(p, t) for t in texts for p in premises])

        def margin(i: int) -> tuple[float, float, float]:
            best = max(scores[i * n : (i + 1) * n], key=lambda s: s.supported - s.contradicted)
            return best.supported - best.contradicted, best.supported, best.contradicted

        base = margin(0)[0]
        best_i = max(range(1, len(texts)), key=lambda i: margin(i)[0])
        gain = margin(best_i)[0]
        what = f"answer: {span.text!r} -> {answers[best_i - 1]!r}"
        if swap_helps(base, gain, self.min_gain):
            return Revision(
                texts[best_i], f"{what}: support - contradiction {base:.2f} -> {gain:.2f}", "answer"
            )
        return Revision(text, f"no answer of the evidence fits ({what}: {base:.2f} -> {gain:.2f})")
