"""The ``nli`` agreement model: question-guided NLI over the attribution model (see the package doc)."""

from __future__ import annotations

from collections.abc import Sequence

from editor.attribution.base import AttributionModel
from editor.attribution.verifier import judge_batch
from editor.judge.agreement.base import FromBatch, slot_flags, slot_rule
from editor.judge.base import Finding
from editor.policy import refutes
from editor.text.document import TextParser
from editor.text.words import answering_sentences
from editor.types import Evidence, evidence_text


class NLIAgreement(FromBatch):
    """Question-guided NLI agreement over the attribution model (see the module doc)."""

    name = "nli"

    def __init__(
        self,
        attribution: AttributionModel,
        contradiction_threshold: float = 0.5,
        support_threshold: float = 0.5,
        sentences_per_query: int = 1,
        decontextualize: bool = True,
        parser: TextParser | None = None,
        off: frozenset[str] = frozenset(),
    ) -> None:
        self.attribution = attribution
        self.off = off
        """the gate's rules turned off (``GATE_RULES``; ``judge.rules_off``, for ablations)"""
        self.parser = parser or TextParser()
        self.contradiction_threshold = contradiction_threshold
        self.support_threshold = support_threshold
        self.sentences_per_query = sentences_per_query
        self.decontextualize = decontextualize

    def check_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Finding]:
        plans: list[list[tuple[tuple[int, int], str]]] = []
        pairs: list[tuple[str, str]] = []
        standalone: dict[str, dict[str, str]] = {}  # text -> sentence -> decontextualised
        for text, query, ev in items:
            spans = answering_sentences(text, query, self.sentences_per_query)
            hyps = self._hypotheses(text, spans, context, standalone)
            plans.append(list(zip(spans, hyps, strict=True)))
            pairs.extend((evidence_text(ev), h) for h in hyps)
        judged_scores, judged_slots = judge_batch(self.attribution, pairs)  # verifier: reasons
        scores, slots = iter(judged_scores), iter(judged_slots)
        out: list[Finding] = []
        for (text, _, _), plan in zip(items, plans, strict=True):
            if not plan:
                out.append(Finding("not_checkable", "no sentence of the text answers the query"))
                continue
            judged = [(span, hyp, next(scores)) for span, hyp in plan]
            named = [next(slots) for _ in plan]
            refuted = [
                (j, sl)
                for j, sl in zip(judged, named, strict=True)
                if sl is not None and sl.names_a_difference and slot_rule(sl.reason) not in self.off
            ]
            if refuted:  # the evidence names a different date, number, name or role
                (span, hyp, s), sl = refuted[0]
                assert sl.claim_span is not None  # names_a_difference
                out.append(
                    Finding(
                        "contradicted",
                        f"the evidence contradicts {hyp!r}: {sl.reason}",
                        span,
                        s.supported,
                        s.contradicted,
                        slot_rule(sl.reason),
                        slot_flags(text, span, hyp, sl.claim_span, sl.evidence_span),
                        opens=True,
                    )
                )
                continue
            out.append(self._decide(judged))
        return out

    def _hypotheses(
        self,
        text: str,
        spans: list[tuple[int, int]],
        context: str | None,
        cache: dict[str, dict[str, str]],
    ) -> list[str]:
        sentences = [text[a:b] for a, b in spans]
        if not self.decontextualize or not sentences:
            return sentences
        if text not in cache:
            full = self.parser.parse(text, context).decontextualized
            cache[text] = {d.original: d.decontextualized for d in full}
        return [cache[text].get(s, s) for s in sentences]

    def _decide(self, judged) -> Finding:
        # the sentence the evidence speaks to most clearly, contradiction first
        span, hyp, s = max(judged, key=lambda j: (j[2].contradicted, j[2].supported))
        if "nli" not in self.off and refutes(s, None, self.contradiction_threshold):
            return Finding(
                "contradicted",
                f"the evidence contradicts {hyp!r} (P(contradicted) {s.contradicted:.2f})",
                span,
                s.supported,
                s.contradicted,
                "nli",
                opens=True,
            )
        span, hyp, s = max(judged, key=lambda j: j[2].supported)
        if s.supported >= self.support_threshold:
            return Finding(
                "supported",
                f"the evidence supports {hyp!r} (P(supported) {s.supported:.2f})",
                span,
                s.supported,
                s.contradicted,
            )
        return Finding(
            "not_stated",
            f"the evidence neither supports nor contradicts {hyp!r} "
            f"(P(supported) {s.supported:.2f}, P(contradicted) {s.contradicted:.2f})",
            span,
            s.supported,
            s.contradicted,
        )
