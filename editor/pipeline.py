"""``Pipeline``: research -> revision -> attribution report, with graceful degradation.

The revision stage (agreement model and editors) lands in its own issue; until then the
pipeline runs the identity editor, which is what ``purr eval`` measures as the baseline.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from editor.attribution import AttributionModel, auto_ais
from editor.attribution import build as build_attribution
from editor.factory import Components
from editor.metrics import f1_ap, preservation
from editor.report import select_evidence
from editor.research import unique_evidence
from editor.result import AttributionReport, EditResult, SentenceReport, Step
from editor.types import Evidence, Query

log = logging.getLogger(__name__)


class Editor(Protocol):
    """Revises a text given evidence; returns the new text and the steps taken."""

    name: str

    def revise(
        self, text: str, evidence: Sequence[Evidence], context: str | None = None
    ) -> tuple[str, list[Step]]: ...


class IdentityEditor:
    """Changes nothing: the baseline every editor is measured against."""

    name = "identity"

    def revise(
        self, text: str, evidence: Sequence[Evidence], context: str | None = None
    ) -> tuple[str, list[Step]]:
        return text, []


def given_evidence(texts: Sequence[str], source: str = "given") -> list[Evidence]:
    """Evidence supplied by the caller (ids ``given-0``, ``given-1``, ...)."""
    return [
        Evidence(
            id=f"{source}-{i}", text=t, title="", source=source, url=None, query="", relevance=1.0
        )
        for i, t in enumerate(texts)
    ]


class Pipeline:
    """Composes the shared components with an editor and an attribution model."""

    def __init__(
        self,
        components: Components,
        editor: Editor | None = None,
        attribution: AttributionModel | None = None,
        max_evidence: int = 5,
    ):
        self.components = components
        self.editor = editor or IdentityEditor()
        self._attribution = attribution
        self.max_evidence = max_evidence

    @property
    def attribution(self) -> AttributionModel:
        if self._attribution is None:
            self._attribution = build_attribution(
                self.components.cfg.attribution, self.components.settings
            )
        return self._attribution

    def edit(
        self, text: str, context: str | None = None, evidence: Sequence[str] | None = None
    ) -> EditResult:
        """Research (unless ``evidence`` is given), revise, and report. Never raises for a
        failing stage: the result is ``degraded`` with the original text and the reason."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError("text is empty; pass the passage to edit")
        timings: dict[str, float] = {}
        warnings: list[str] = []
        queries: list[Query] = []
        found: list[Evidence] = []
        t = time.perf_counter()
        try:
            if evidence is None:
                results = self.components.researcher.research(text, context)
                queries = [qe.query for qe in results]
                found = unique_evidence(results)
            else:
                queries = self.components.querygen.generate(text, context)
                found = given_evidence(evidence)
        except Exception as e:  # noqa: BLE001 - any stage failure degrades, never loses the text
            return self._degraded(text, context, f"research failed: {e}", timings, t, "research")
        timings["research"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        try:
            revised, steps = self.editor.revise(text, found, context)
        except Exception as e:  # noqa: BLE001
            return self._degraded(
                text, context, f"revision failed: {e}", timings, t, "revision", queries, found
            )
        timings["revision"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        try:
            report = self.report(text, revised, queries, found, context)
        except Exception as e:  # noqa: BLE001
            warnings.append(f"attribution report failed: {e}")
            report = None
        timings["report"] = (time.perf_counter() - t) * 1000
        status = "edited" if revised != text else "unchanged"
        return EditResult(
            text,
            revised,
            context,
            tuple(q.text for q in queries),
            tuple(found),
            tuple(steps),
            report,
            status,
            tuple(warnings),
            timings,
        )

    def report(
        self,
        original: str,
        revised: str,
        queries: Sequence[Query],
        evidence: Sequence[Evidence],
        context: str | None = None,
    ) -> AttributionReport:
        """Select at most M evidence by query coverage and score both texts against them."""
        chosen = self.select(queries, evidence)
        texts = [e.text for e in chosen]
        threshold = self.components.cfg.attribution.threshold
        before = auto_ais(original, texts, self.attribution, context=context, threshold=threshold)
        after = (
            before
            if revised == original
            else auto_ais(revised, texts, self.attribution, context=context, threshold=threshold)
        )
        pres = preservation(original, revised)
        sentences = tuple(
            SentenceReport(
                s.text,
                s.decontextualized,
                s.attribution,
                chosen[s.evidence_index].id if s.evidence_index is not None else None,
                s.applicable,
            )
            for s in after.sentences
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
        reranker = self.components.reranker
        if reranker is None or not queries:
            return sorted(evidence, key=lambda e: -e.relevance)[: self.max_evidence]
        texts = [e.text for e in evidence]
        relevance = np.stack(
            [reranker.relevance(q.text, texts) for q in queries]
        )  # (queries, evidence)
        return [evidence[i] for i in select_evidence(relevance, self.max_evidence)]

    def _degraded(
        self, text, context, reason, timings, started, stage, queries=(), found=()
    ) -> EditResult:
        timings[stage] = (time.perf_counter() - started) * 1000
        log.warning("degraded: %s", reason)
        return EditResult(
            text,
            text,
            context,
            tuple(q.text for q in queries),
            tuple(found),
            (),
            None,
            "degraded",
            (reason,),
            timings,
        )
