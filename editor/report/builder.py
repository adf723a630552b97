"""The attribution report of an edit: at most M evidence chosen by query coverage (with the
reranker's relevance, else the research relevance), then auto-AIS of the text before and after
the edit against them, preservation and F1_AP."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from editor.attribution.base import AttributionModel
from editor.policy import ATTRIBUTED_MIN, CONTRADICTED_MIN
from editor.report.auto_ais import auto_ais
from editor.report.metrics import f1_ap, preservation
from editor.report.selection import select_evidence
from editor.report.sentence_verdicts import judged_verdicts, sentence_spans
from editor.result import AttributionReport, PartReport, SentenceReport, Step
from editor.text.document import TextParser
from editor.types import Evidence, Query
from retrieval.rerank import Reranker


class Reporter:
    """Builds ``AttributionReport``s with one attribution model and an optional reranker."""

    def __init__(
        self,
        attribution: AttributionModel,
        reranker: Reranker | None,
        max_evidence: int = 5,
        threshold: float = ATTRIBUTED_MIN,
        decompose: bool = False,
        parser: TextParser | None = None,
        contradicted_min: float = CONTRADICTED_MIN,
    ) -> None:
        self.attribution = attribution
        self.parser = parser or TextParser()
        self.reranker = reranker
        self.max_evidence = max_evidence
        self.threshold = threshold
        self.decompose = decompose
        self.contradicted_min = contradicted_min

    def report(
        self,
        original: str,
        revised: str,
        queries: Sequence[Query],
        evidence: Sequence[Evidence],
        context: str | None = None,
        steps: Sequence[Step] = (),
    ) -> AttributionReport:
        """Select at most M evidence by query coverage and score both texts against them; a
        sentence the judge assessed (``steps``) takes the judge's verdict."""
        chosen = self.select(queries, evidence)
        texts = [e.text for e in chosen]
        kw = {
            "context": context,
            "threshold": self.threshold,
            "decompose": self.decompose,
            "parser": self.parser,
            "contradicted_min": self.contradicted_min,
        }
        before = auto_ais(original, texts, self.attribution, **kw)
        after = before if revised == original else auto_ais(revised, texts, self.attribution, **kw)
        pres = preservation(original, revised)

        def evidence_id(i: int | None) -> str | None:
            return chosen[i].id if i is not None else None

        judged = judged_verdicts(steps, revised)
        spans = sentence_spans(revised, [s.text for s in after.sentences])

        sentences = tuple(
            SentenceReport(
                s.text,
                s.decontextualized,
                s.attribution,
                evidence_id(s.evidence_index),
                s.applicable,
                judged.get(span, s.verdict) if span is not None else s.verdict,
                tuple(
                    PartReport(
                        p.text,
                        p.start,
                        p.end,
                        p.kind,
                        p.attribution,
                        evidence_id(p.evidence_index),
                        p.verdict,
                    )
                    for p in s.parts
                ),
                span in judged,
            )
            for s, span in zip(after.sentences, spans, strict=True)
        )
        score = None if after.attribution is None else f1_ap(after.attribution, pres)
        return AttributionReport(
            tuple(e.id for e in chosen),
            sentences,
            before.attribution,
            after.attribution,
            pres,
            score,
        )

    def select(self, queries: Sequence[Query], evidence: Sequence[Evidence]) -> list[Evidence]:
        if len(evidence) <= self.max_evidence:
            return list(evidence)
        reranker = self.reranker
        if reranker is None or not queries:
            return sorted(evidence, key=lambda e: -e.relevance)[: self.max_evidence]
        texts = [e.text for e in evidence]
        relevance = np.stack(
            [reranker.relevance(q.text, texts) for q in queries]
        )  # (queries, evidence)
        return [evidence[i] for i in select_evidence(relevance, self.max_evidence)]
