"""``EditRun``: one edit of one text, its stages in one line.

``Pipeline.edit`` checks the input and hands the text to an ``EditRun``, which holds what is the
edit's alone: its ``EditScope`` (the parses, pair scores and fixes its stages share), its
timings and its warnings. The run takes the citation markers out, then runs the stages in
order, each once and each under its timeout (``editor.stages``):

    language -> prepare -> parse -> research -> revision -> report -> findings

(with ``sources``, citation repair stands in for research and revision). A stage that fails
raises ``StageFailed``; the run catches it in one place and returns the text as it came, with
the reason (``degraded``). A text that does not look like English comes back unchanged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from editor.citations.markers import protect, restore
from editor.citations.sources import Source
from editor.factory import build_repairer
from editor.inputs import InputError
from editor.report.findings import findings
from editor.research.cache import TenantCache
from editor.research.given import assign_queries, given_evidence
from editor.research.hops import hops_of
from editor.research.instructions import set_aside_instructions, set_aside_researched
from editor.research.researcher import unique_evidence
from editor.result import EditResult, Status, Step
from editor.scope import EditScope
from editor.text.language import check_language
from editor.types import Evidence, Query

T = TypeVar("T")
log = logging.getLogger(__name__)

STAGES = ("prepare", "parse", "research", "revision", "citations", "report")
"""The stages an edit may run, in order (``EditRun.progress`` is told each as it starts)."""


class StageFailed(RuntimeError):
    """A stage of the run failed or ran past its timeout; ``reason`` says which and why."""

    def __init__(self, stage: str, reason: str):
        super().__init__(reason)
        self.stage, self.reason = stage, reason


class Refused(Exception):
    """The text comes back unchanged, with the reason, without any stage seeing it."""


@dataclass
class EditRun:
    """One edit of one text with ``pipeline``'s stages (see the module doc)."""

    pipeline: Any
    """the ``editor.pipeline.Pipeline`` whose stages, models and config the run uses"""
    context: str | None = None
    cache: TenantCache | None = None
    """the service's per-query research cache (None: research every query)"""
    scope: EditScope = field(default_factory=EditScope)
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    queries: list[Query] = field(default_factory=list)
    found: list[Evidence] = field(default_factory=list)
    progress: Callable[[str], None] | None = None
    """called with a stage's name (one of ``STAGES``) as it starts: a long edit's progress"""

    def edit(
        self,
        text: str,
        evidence: Sequence[str] | None = None,
        sources: list[Source] | None = None,
    ) -> EditResult:
        """The edit of ``text``: research (or the given ``evidence``), revision and report;
        with ``sources``, citation repair against them instead."""
        with self.scope.active():
            if sources is not None:
                return self._run(text, lambda: self._repair(text, sources))
            protected = protect(text)
            if not protected.clean.strip():  # nothing but citation markers
                raise InputError("the text has no words outside its citation markers")
            result = self._run(protected.clean, lambda: self._edit(protected.clean, evidence))
        if not protected.has_markers:
            return result
        revised = restore(protected, result.revised)
        status: Status = result.status
        if status != "degraded":
            status = "edited" if revised != text else "unchanged"
        return replace(result, original=text, revised=revised, status=status)

    def _run(self, text: str, stages: Callable[[], EditResult]) -> EditResult:
        """``stages()``, or ``text`` as it came with the reason where they refuse or fail."""
        try:
            return stages()
        except Refused as r:
            return EditResult.untouched(text, self.context, str(r), "unchanged")
        except StageFailed as failed:
            log.warning("degraded: %s", failed.reason)
            untouched = EditResult.untouched(text, self.context, failed.reason)
            asked = tuple(q.text for q in self.queries)
            return replace(
                untouched, queries=asked, evidence=tuple(self.found), timings_ms=self.timings
            )

    def stage(self, name: str, work: Callable[[], T], timeout_s: float | None = None) -> T:
        """``work()`` as stage ``name`` (on the stage runner where it has a timeout), timed;
        its failure raised as ``StageFailed``."""
        if self.progress is not None:
            self.progress(name)
        started = time.perf_counter()
        try:
            if timeout_s is None:
                return work()
            return self.pipeline.stages.run(work, timeout_s, name)
        except Exception as e:  # noqa: BLE001 - any stage failure degrades, never loses the text
            raise StageFailed(name, f"{_FAILED.get(name, name + ' failed')}: {e}") from e
        finally:
            self.timings[name] = (time.perf_counter() - started) * 1000

    def _ready(self, text: str, research: bool) -> None:
        """Refuse a text that does not look like English; do the first-use work."""
        if self.pipeline.cfg.limits.english_only:
            verdict = check_language(text)
            if not verdict.english:
                raise Refused(f"{verdict.reason}; returned unchanged")
        self.stage("prepare", lambda: self.pipeline.prepare(research=research))

    def _edit(self, text: str, evidence: Sequence[str] | None) -> EditResult:
        pipe, lim = self.pipeline, self.pipeline.cfg.limits
        self._ready(text, research=evidence is None)
        # the one parse every stage reads (components.parser hands it on)
        self.stage("parse", lambda: pipe.components.parser.parse(text, self.context))
        to_revise = self._research(text, evidence)
        revised, steps = self.stage(
            "revision",
            lambda: pipe.editor.revise(text, to_revise, self.context),
            lim.revision_timeout_s,
        )
        report = self._report(text, revised, steps)
        if not self.found:
            self.warnings.append("no evidence found; nothing could be checked")
        return self._result(text, revised, steps, report, hops=hops_of(self.queries))

    def _research(self, text: str, evidence: Sequence[str] | None) -> list[Evidence]:
        """Research ``text`` (or read the given ``evidence``): the (query, evidence) pairs to
        revise with; the queries and unique evidence are kept on the run."""
        components, cfg = self.pipeline.components, self.pipeline.cfg
        # the web's notes of this edit's research: pages that fell back to snippets, budgets
        # spent, cache misses, and its stage timings (collected on the research thread, so
        # concurrent edits never see each other's)
        notes: dict[str, Any] = {"failures": [], "timings": {}}

        def research() -> tuple[list[Query], list[Evidence], list[Evidence]]:
            if evidence is None:
                with components.researcher.web_notes(notes):
                    results = components.researcher.research(text, self.context, self.cache)
                pairs = [  # one (query, evidence) step each, even for shared snippets
                    replace(e, query=qe.query.text) for qe in results for e in qe.evidence
                ]
                return [qe.query for qe in results], unique_evidence(results), pairs
            qs = components.querygen.generate(text, self.context)
            given = given_evidence(evidence)
            return qs, given, assign_queries(qs, given)

        try:
            queries, found, to_revise = self.stage(
                "research", research, cfg.limits.research_timeout_s
            )
            if cfg.research.set_aside_instructions:
                found, to_revise = set_aside_researched(found, to_revise, self.warnings)
            self.warnings.extend(f"web: {w}" for w in notes["failures"])
        except StageFailed:
            raise
        except Exception as e:  # noqa: BLE001 - the research's own reading of what it found
            raise StageFailed("research", f"research failed: {e}") from e
        finally:
            self.timings.update(notes["timings"])
        self.queries, self.found = queries, found
        return to_revise

    def _repair(self, text: str, sources: list[Source]) -> EditResult:
        """Citation repair of a cited text against its own sources, with the report."""
        pipe = self.pipeline
        self._ready(text, research=pipe.cfg.citations.research)
        if pipe.cfg.research.set_aside_instructions:
            sources = set_aside_instructions(sources, self.warnings)
        self.found = [s.evidence("given") for s in sources]
        repairer = build_repairer(pipe.components, pipe.attribution, pipe.editor)
        repaired = self.stage(
            "citations",
            lambda: repairer.repair(text, sources, self.context),
            pipe.cfg.limits.revision_timeout_s,
        )
        self.found += [s.evidence("research") for s in repaired.added_sources]
        self.warnings.extend(repaired.after.warnings)
        report = self._report(text, repaired.revised, repaired.steps)
        return self._result(text, repaired.revised, repaired.steps, report, repaired.report())

    def _report(self, text: str, revised: str, steps: Sequence[Step]):
        """The attribution report under its timeout; a failure is a warning, never an error."""
        reporter = self.pipeline.reporter
        try:
            return self.stage(
                "report",
                lambda: reporter.report(
                    text, revised, self.queries, self.found, self.context, steps
                ),
                self.pipeline.cfg.limits.report_timeout_s,
            )
        except StageFailed as e:
            self.warnings.append(f"attribution report failed: {e.__cause__}")
            return None

    def _result(self, text, revised, steps, report, citations=None, hops=()) -> EditResult:
        status: Status = "edited" if revised != text else "unchanged"
        return EditResult(
            text,
            revised,
            self.context,
            tuple(q.text for q in self.queries),
            tuple(self.found),
            tuple(steps),
            report,
            status,
            tuple(self.warnings),
            self.timings,
            citations,
            hops=hops,
            findings=findings(text, steps),
        )


_FAILED = {
    "prepare": "preparing failed",
    "parse": "parsing failed",
    "citations": "citation repair failed",
}
"""how a stage's failure reads where ``NAME failed`` does not say it"""
