"""RARR's agreement as a question asks it: with a question as context, does the evidence give
the same answer as the text? ``QuestionAgreement`` wraps any agreement model: where the wrapped
model does not find a disagreement, it compares the text's answer span (the kind of span the
question asks for, not named in the question; ``editor.claims.answers``) with the
evidence's answers (spans of that kind in the evidence sentences that share the question's
words). The evidence disagrees when it answers and neither names the text's answer anywhere
nor a place that contains or is it (``editor.claims.places``): "the evidence answers
'Guwahati', the text 'Calcutta'".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from editor.claims.answers import ANSWER_KINDS, answer_span, asked_of, evidence_answers
from editor.claims.granularity import PLACE_KINDS
from editor.claims.places import load as load_places
from editor.claims.slot_values import bare_name
from editor.claims.slots import Slot, norm
from editor.judge.agreement.base import AgreementModel, FromBatch
from editor.judge.base import Finding
from editor.text.words import is_question, question_type
from editor.types import Evidence, evidence_text
from retrieval.sentences import split_spans


class QuestionAgreement(FromBatch):
    """``inner``'s verdicts, and with a question as context the answer comparison (see the
    module doc)."""

    def __init__(self, inner: AgreementModel, nlp: Any = None) -> None:
        self.inner = inner
        self._nlp = nlp

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            from editor.text.nlp import get_nlp

            self._nlp = get_nlp()
        return self._nlp

    def check_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Finding]:
        verdicts = self.inner.check_batch(items, context)
        kinds = ANSWER_KINDS.get(question_type(context)) if is_question(context) else None
        if kinds is None:
            return verdicts
        assert context is not None
        spans: dict[tuple[str, str], Slot | None] = {}  # parse each text once per question
        out = []
        for (text, _, evidence), verdict in zip(items, verdicts, strict=True):
            # evidence of a hop-1 query (a description inside the question: "the film that
            # won ...") answers the description with the bridge entity, not the question
            hop_1 = evidence.query and evidence.query != context and evidence.query in context
            if not verdict.opens and not hop_1:
                question = asked_of(context, evidence.query)
                if (text, question) not in spans:
                    spans[(text, question)] = answer_span(self.nlp(text), question, kinds)
                span = spans[(text, question)]
                if span is not None:
                    verdict = self._answers_differ(text, span, evidence, question, kinds) or verdict
            out.append(verdict)
        return out

    def _answers_differ(
        self, text: str, span: Slot, evidence: Evidence, question: str, kinds: set[str]
    ) -> Finding | None:
        premise = evidence_text(evidence)
        answers = evidence_answers(self.nlp, [premise], question, kinds)
        if not answers or f" {bare_name(span.text)} " in f" {norm(premise)} ":
            return None
        places = load_places()
        if span.kind in PLACE_KINDS and any(places.relation(span.text, a) for a in answers):
            return None
        sentence = next(((a, b) for a, b in split_spans(text) if a <= span.start < b), None)
        return Finding(
            "contradicted",
            f"the evidence answers the question with {answers[0]!r}, the text with {span.text!r}",
            sentence,
            rule="question",
            opens=True,
        )
