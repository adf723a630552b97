"""``Pipeline``: research -> revision -> attribution report, with graceful degradation.

``Pipeline.edit(text, context=None, evidence=None) -> EditResult`` (``editor.result``) and
``edit_batch``. Input limits (``limits.*``) are checked first and raise ``InputError`` with
what to do; after that nothing raises: a stage that fails or runs past its timeout gives status
``degraded`` with the original text and the reason. Non-English text comes back unchanged with a
warning (the models here are English-only). The stages come from the builder
(``editor.factory``): research, the revision stage (a ``Reviser`` asking the judge,
``editor.revision``) and the report; the models load once and are shared.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from editor.attribution.base import AttributionModel
from editor.batch import BatchOutcome, edit_batch
from editor.checking import check_citations
from editor.citations.markers import protect, restore
from editor.citations.results import CheckResult
from editor.citations.sources import Source
from editor.factory import (
    Components,
    build_repairer,
    build_reviser,
    first_use_work,
)
from editor.inputs import InputError, check_input, given_sources
from editor.installed import skipped
from editor.report.builder import Reporter
from editor.report.findings import findings
from editor.research.cache import TenantCache
from editor.research.given import assign_queries, given_evidence
from editor.research.hops import hops_of
from editor.research.instructions import set_aside_instructions, set_aside_researched
from editor.research.researcher import unique_evidence
from editor.result import EditResult, Status
from editor.revision.base import Revises
from editor.scope import one_edit
from editor.stages import StageRunner, load_alongside
from editor.text.language import check_language
from editor.text.nlp import get_nlp
from editor.types import Evidence, Query

log = logging.getLogger(__name__)


class Pipeline:
    """Composes the shared components with an editor and an attribution model."""

    def __init__(
        self,
        components: Components,
        editor: Revises | None = None,
        attribution: AttributionModel | None = None,
        max_evidence: int = 5,
    ):
        self.components = components
        self._attribution = attribution
        self._editor = editor
        self.max_evidence = max_evidence
        self.stages = StageRunner()  # each stage call on its own thread, under its timeout
        self._prepare_lock = threading.Lock()
        self._prepared_research = False
        self._prepared_models = False
        self._prepared_conversions = False

    @property
    def cfg(self):
        return self.components.cfg

    @property
    def attribution(self) -> AttributionModel:
        if self._attribution is None:
            self._attribution = self.components.attribution
        return self._attribution

    @property
    def editor(self) -> Revises:
        """The revision stage (built from the config on first use)."""
        if self._editor is None:
            self._editor = build_reviser(
                self.cfg,
                attribution=lambda: self.attribution,
                llm=lambda: self.components.llm,
                parser=self.components.parser,
            )
        return self._editor

    def prepare(self, research: bool = True, conversions: bool = False) -> None:
        """Do the first-use work now, before any stage's timeout starts (logged; a no-op once
        done). The causal LMs' conversions wait for their first load unless ``conversions``."""
        with self._prepare_lock:
            done = self._prepared_models and (self._prepared_research or not research)
            if done and (self._prepared_conversions or not conversions):
                return
            work = first_use_work(self.components, research, conversions)
            self._prepared_conversions = self._prepared_conversions or conversions
            for item in work:
                log.warning("preparing: %s (first use only; %s)", item.what, item.estimate)
                started = time.perf_counter()
                item.run()
                log.warning("prepared in %.0f s", time.perf_counter() - started)
            # the models every edit needs, so a stage's timeout bounds its own work only
            research_now = research and not self._prepared_research
            load_alongside(
                self.components.load_research_models if research_now else None,
                None if self._prepared_models else self._load_judge_models,
            )
            self._prepared_research = self._prepared_research or research_now
            self._prepared_models = True

    def _load_judge_models(self) -> None:
        get_nlp()  # sentences and decontextualisation, in research and the report
        if callable(load := getattr(self.attribution, "load", None)):
            load()
        from editor.reader import load_for

        load_for(self.cfg)  # the reader, where the judge asks it (its graph builds once)

    def close(self) -> None:
        """Refuse further edits (stages already running finish on their own threads)."""
        self.stages.close()

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def load_models(self) -> None:
        """``prepare`` the models, then load the editor's too rather than on first use (the
        service's warm-up: the first request must not pay for loading)."""
        self.prepare(research=False, conversions=True)
        for proposer in getattr(self.editor, "proposers", [self.editor]):  # the Reviser's
            if callable(load := getattr(getattr(proposer, "editor", proposer), "load", None)):
                load()

    def check_input(self, text: Any, context: Any = None, evidence: Any = None) -> None:
        """Raise ``InputError`` saying what is wrong with the input and what to do."""
        check_input(self.cfg.limits, text, context, evidence)

    @one_edit  # one state per edit: its parses, pair scores and fixes (editor.scope)
    def edit(
        self,
        text: str,
        context: str | None = None,
        evidence: Sequence[str] | None = None,
        sources: Sequence[Any] | None = None,
        *,
        cache: TenantCache | None = None,
    ) -> EditResult:
        """Research (unless ``evidence`` is given; a query ``cache`` holds is not researched
        again), revise, and report; with ``sources`` (the
        documents a cited text cites, ``Source``s or ``{id, text, title?, url?}``), repair its
        citations against them instead (``editor.citations.repair``). Citation markers ([1],
        [1, 3], [^1]) are taken out first and put back after their words.

        Raises ``InputError`` for input that breaks the limits; never raises for a failing
        stage: the result is then ``degraded`` with the original text and the reason."""
        if sources is not None:
            self.check_input(text, context, evidence)
            if evidence is not None:
                raise InputError("give either evidence or sources, not both")
            return self._repair(text, context, given_sources(sources))
        self.check_input(text, context, evidence)  # the text as given: its type, size, limits
        protected = protect(text)
        if not protected.has_markers:
            return self._edit(text, context, evidence, cache)
        result = self._edit(protected.clean, context, evidence, cache)
        revised = restore(protected, result.revised)
        status: Status = result.status
        if status != "degraded":
            status = "edited" if revised != text else "unchanged"
        return replace(result, original=text, revised=revised, status=status)

    def _repair(self, text: str, context: str | None, sources: list[Source]) -> EditResult:
        """Citation repair of a cited text against its own sources, with the report."""
        lim = self.cfg.limits
        timings: dict[str, float] = {}
        refused = self._refused(text, context, self.cfg.citations.research, timings)
        if refused is not None:
            return refused
        notes: list[str] = skipped(self.cfg)
        if self.cfg.research.set_aside_instructions:
            sources = set_aside_instructions(sources, notes)
        found = tuple(s.evidence("given") for s in sources)
        t = time.perf_counter()
        repairer = build_repairer(self.components, self.attribution, self.editor)
        try:
            repaired = self.stages.run(
                lambda: repairer.repair(text, sources, context),
                lim.revision_timeout_s,
                "citations",
            )
        except Exception as e:  # noqa: BLE001
            return self._degraded(
                text, context, f"citation repair failed: {e}", timings, t, "citations", (), found
            )
        timings["citations"] = (time.perf_counter() - t) * 1000
        found = found + tuple(s.evidence("research") for s in repaired.added_sources)
        warnings = notes + list(repaired.after.warnings)
        report = self._report(
            text, repaired.revised, [], list(found), context, warnings, timings, repaired.steps
        )
        status: Status = "edited" if repaired.revised != text else "unchanged"
        return EditResult(
            text,
            repaired.revised,
            context,
            (),
            found,
            repaired.steps,
            report,
            status,
            tuple(warnings),
            timings,
            repaired.report(),
            findings=findings(text, repaired.steps),
        )

    def _refused(
        self, text: str, context: str | None, research: bool, timings: dict[str, float]
    ) -> EditResult | None:
        """The result of a text no stage sees: one that does not look like English (returned
        unchanged), or any when the first-use work fails (``degraded``); None once prepared,
        with the time it took in ``timings``."""
        if self.cfg.limits.english_only:
            verdict = check_language(text)
            if not verdict.english:
                reason = f"{verdict.reason}; returned unchanged"
                return EditResult.untouched(text, context, reason, "unchanged")
        t = time.perf_counter()
        try:
            self.prepare(research=research)
        except Exception as e:  # noqa: BLE001 - a failed first-use build degrades, never raises
            return self._degraded(text, context, f"preparing failed: {e}", timings, t, "prepare")
        timings["prepare"] = (time.perf_counter() - t) * 1000
        return None

    def _report(self, text, revised, queries, found, context, warnings, timings, steps=()):
        """The attribution report under its timeout; a failure is a warning, never an error."""
        t = time.perf_counter()
        try:
            return self.stages.run(
                lambda: self.reporter.report(text, revised, queries, found, context, steps),
                self.cfg.limits.report_timeout_s,
                "report",
            )
        except Exception as e:  # noqa: BLE001
            warnings.append(f"attribution report failed: {e}")
            return None
        finally:
            timings["report"] = (time.perf_counter() - t) * 1000

    def _edit(
        self,
        text: str,
        context: str | None = None,
        evidence: Sequence[str] | None = None,
        cache: TenantCache | None = None,
    ) -> EditResult:
        if not text.strip():  # nothing but citation markers
            raise InputError("the text has no words outside its citation markers")
        lim = self.cfg.limits
        timings: dict[str, float] = {}
        refused = self._refused(text, context, evidence is None, timings)
        if refused is not None:
            return refused
        t = time.perf_counter()
        try:  # the one parse every stage reads (components.parser hands it on)
            self.components.parser.parse(text, context)
        except Exception as e:  # noqa: BLE001
            return self._degraded(text, context, f"parsing failed: {e}", timings, t, "parse")
        timings["parse"] = (time.perf_counter() - t) * 1000
        warnings: list[str] = skipped(self.cfg)  # what this install leaves out
        queries: list[Query] = []
        found: list[Evidence] = []
        t = time.perf_counter()
        # the web's notes of this edit's research: pages that fell back to snippets, budgets
        # spent, cache misses, and its stage timings (collected on the research thread, so
        # concurrent edits never see each other's)
        web_notes: dict[str, Any] = {"failures": [], "timings": {}}
        try:

            def research() -> tuple[list[Query], list[Evidence], list[Evidence]]:
                if evidence is None:
                    with self.components.researcher.web_notes(web_notes):
                        results = self.components.researcher.research(text, context, cache)
                    pairs = [  # one (query, evidence) step each, even for shared snippets
                        replace(e, query=qe.query.text) for qe in results for e in qe.evidence
                    ]
                    return [qe.query for qe in results], unique_evidence(results), pairs
                qs = self.components.querygen.generate(text, context)
                given = given_evidence(evidence)
                return qs, given, assign_queries(qs, given)

            queries, found, to_revise = self.stages.run(
                research, lim.research_timeout_s, "research"
            )
            if self.cfg.research.set_aside_instructions:
                found, to_revise = set_aside_researched(found, to_revise, warnings)
            warnings.extend(f"web: {w}" for w in web_notes["failures"])
        except Exception as e:  # noqa: BLE001 - any stage failure degrades, never loses the text
            timings.update(web_notes["timings"])
            return self._degraded(text, context, f"research failed: {e}", timings, t, "research")
        timings["research"] = (time.perf_counter() - t) * 1000
        timings.update(web_notes["timings"])
        t = time.perf_counter()
        try:
            revised, steps = self.stages.run(
                lambda: self.editor.revise(text, to_revise, context),
                lim.revision_timeout_s,
                "revision",
            )
        except Exception as e:  # noqa: BLE001
            return self._degraded(
                text, context, f"revision failed: {e}", timings, t, "revision", queries, found
            )
        timings["revision"] = (time.perf_counter() - t) * 1000
        report = self._report(text, revised, queries, found, context, warnings, timings, steps)
        if not found:
            warnings.append("no evidence found; nothing could be checked")
        status: Status = "edited" if revised != text else "unchanged"
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
            hops=hops_of(queries),
            findings=findings(text, steps),
        )

    @one_edit
    def check(
        self,
        text: str,
        sources: Sequence[Any],
        qa: bool = False,
        reference: str | None = None,
    ) -> CheckResult:
        """Check a cited text's citations against ``sources`` (``Source``s or ``{id, text,
        title?, url?}``): each sentence's verdicts and outcome, ALCE's citation precision and
        recall; with ``qa``, MAFE's QA-based precision against the sources too (and its recall
        of a ``reference``). Raises ``InputError`` for bad input; a failing verifier gives
        ``degraded``."""
        return check_citations(self, text, sources, qa, reference)

    def edit_batch(
        self,
        texts: Sequence[str],
        contexts: Sequence[str | None] | None = None,
        evidence: Sequence[Sequence[str] | None] | None = None,
        progress: bool = False,
        sources: Sequence[Sequence[Any] | None] | None = None,
    ) -> list[BatchOutcome]:
        """``edit`` over many passages, in order: one ``BatchOutcome`` per row, with the result,
        or the ``InputError`` of a row with bad input (which does not stop the batch)."""
        return edit_batch(self.edit, texts, contexts, evidence, progress, sources)

    @property
    def reporter(self) -> Reporter:
        """The report stage: evidence selection and auto-AIS with the pipeline's models."""
        return Reporter(
            self.attribution,
            self.components.reranker,
            self.max_evidence,
            self.cfg.judge.attributed_min,
            self.cfg.attribution.decompose,
            self.components.parser,
            self.cfg.judge.contradicted_min,
        )

    def _degraded(
        self, text, context, reason, timings, started, stage, queries=(), found=()
    ) -> EditResult:
        timings[stage] = (time.perf_counter() - started) * 1000
        log.warning("degraded: %s", reason)
        asked = tuple(q.text for q in queries)
        untouched = EditResult.untouched(text, context, reason)
        return replace(untouched, queries=asked, evidence=tuple(found), timings_ms=timings)
