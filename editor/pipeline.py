"""``Pipeline``: research -> revision -> attribution report, with graceful degradation.

``Pipeline.edit(text, context=None, evidence=None) -> EditResult`` (``editor.result``) and
``edit_batch``. Input limits (``limits.*``) are checked first and raise ``InputError`` with
what to do; after that nothing raises: a stage that fails or runs past its timeout gives status
``degraded`` with the original text and the reason. Non-English text comes back unchanged with a
warning (the models here are English-only). The stages come from the builder
(``editor.factory``): research, the revision stage (a ``Reviser`` asking the judge,
``editor.revision``) and the report; the models load once and are shared. Each edit's stages
run in one line in an ``EditRun`` (``editor.edit_run``), which holds that edit's own state.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from editor.attribution.base import AttributionModel
from editor.batch import BatchOutcome, edit_batch
from editor.checking import check_citations
from editor.citations.results import CheckResult
from editor.edit_run import EditRun
from editor.factory import (
    Components,
    build_reviser,
    first_use_work,
)
from editor.inputs import InputError, check_input, given_sources
from editor.report.builder import Reporter
from editor.research.cache import TenantCache
from editor.result import EditResult
from editor.revision.base import Revises
from editor.scope import one_edit
from editor.stages import StageRunner, load_alongside
from editor.text.nlp import get_nlp

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

    def applying_unsure(self) -> Pipeline:
        """A pipeline over the same components, models and index whose judge also applies the
        fixes it is unsure of (``judge.apply_unsure``: what ``--apply-unsure`` asks for one run,
        and a request's ``apply_unsure`` for one call). Raises ``ValueError`` where the revision
        stage has no judge's policy to change."""
        policy = getattr(self.editor, "policy", None)
        if policy is None:
            raise ValueError(
                f"the {type(self.editor).__name__} editor has no judge to apply unsure fixes"
            )
        if policy.apply_unsure:
            return self
        reviser = copy.copy(self.editor)  # the same proposers and judge: no model loads twice
        reviser.policy = policy.model_copy(update={"apply_unsure": True})  # type: ignore[attr-defined]
        return Pipeline(self.components, reviser, self.attribution, self.max_evidence)

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

    def edit(
        self,
        text: str,
        context: str | None = None,
        evidence: Sequence[str] | None = None,
        sources: Sequence[Any] | None = None,
        *,
        cache: TenantCache | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> EditResult:
        """Research (unless ``evidence`` is given; a query ``cache`` holds is not researched
        again), revise, and report; with ``sources`` (the documents a cited text cites,
        ``Source``s or ``{id, text, title?, url?}``), repair its citations against them instead
        (``editor.citations.repair``). Citation markers ([1], [1, 3], [^1]) are taken out first
        and put back after their words. One ``EditRun`` runs the stages (``editor.edit_run``),
        calling ``progress`` with each stage's name as it starts.

        Raises ``InputError`` for input that breaks the limits; never raises for a failing
        stage: the result is then ``degraded`` with the original text and the reason."""
        self.check_input(text, context, evidence)  # the text as given: its type, size, limits
        if sources is not None and evidence is not None:
            raise InputError("give either evidence or sources, not both")
        given = None if sources is None else given_sources(sources)
        return EditRun(self, context, cache, progress=progress).edit(text, evidence, given)

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
