"""``Pipeline``: research -> revision -> attribution report, with graceful degradation.

``Pipeline.edit(text, context=None, evidence=None) -> EditResult`` (the result contract of
DESIGN.md) and ``edit_batch``. Input limits (``limits.*``) are checked first and raise
``InputError`` with what to do; after that nothing raises: a stage that fails or runs past its
timeout gives status ``degraded`` with the original text and the reason. Non-English text is
returned unchanged with a warning (the models here are English-only).

The revision stage is a ``Reviser`` (agreement gate + editor, ``editor.revision``) built from
``cfg.editor``, ``cfg.agreement`` and ``cfg.revision`` unless one is passed in. The attribution
model is loaded once and shared by the agreement model, the ``substitute`` editor and the report.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

import numpy as np
from tqdm.auto import tqdm

from editor.attribution import AttributionModel, auto_ais
from editor.attribution import build as build_attribution
from editor.factory import Components, first_use_work
from editor.metrics import f1_ap, preservation
from editor.nlp import get_nlp, looks_english
from editor.report import select_evidence
from editor.research import unique_evidence
from editor.result import AttributionReport, EditResult, SentenceReport, Status, Step
from editor.stages import StageRunner
from editor.types import Evidence, Query
from retrieval.sentences import split

log = logging.getLogger(__name__)


class InputError(ValueError):
    """The caller's input breaks a limit or a type; the message says what to do.
    ``too_large``: it is over a size limit (HTTP 413) rather than malformed (422)."""

    def __init__(self, message: str, too_large: bool = False) -> None:
        super().__init__(message)
        self.too_large = too_large


class Revises(Protocol):
    """The revision stage: the revised text and the steps taken."""

    name: str

    def revise(
        self, text: str, evidence: Sequence[Evidence], context: str | None = None
    ) -> tuple[str, list[Step]]: ...


def given_evidence(texts: Sequence[str], source: str = "given") -> list[Evidence]:
    """Evidence supplied by the caller (ids ``given-0``, ``given-1``, ...)."""
    return [
        Evidence(
            id=f"{source}-{i}", text=t, title="", source=source, url=None, query="", relevance=1.0
        )
        for i, t in enumerate(texts)
    ]


def assign_queries(queries: Sequence[Query], evidence: Sequence[Evidence]) -> list[Evidence]:
    """Given evidence carries no query: pair each query with the given evidence that shares the
    most content words with it (one (query, evidence) step per query, as research would give).

    >>> ev = given_evidence(["Paris is the capital of France.", "The Nile is long."])
    >>> [(e.id, e.query) for e in assign_queries([Query("How long is the Nile?", "t")], ev)]
    [('given-1', 'How long is the Nile?')]
    """
    from editor.agreement import content_words

    if not queries or not evidence:
        return list(evidence)
    words = [content_words(e.text) for e in evidence]
    out = []
    for q in queries:
        target = content_words(q.text)
        best = max(range(len(evidence)), key=lambda i: (len(target & words[i]), -i))
        out.append(replace(evidence[best], query=q.text))
    return out


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

    @property
    def cfg(self):
        return self.components.cfg

    @property
    def attribution(self) -> AttributionModel:
        if self._attribution is None:
            self._attribution = build_attribution(self.cfg.attribution, self.components.settings)
        return self._attribution

    @property
    def editor(self) -> Revises:
        """The revision stage (built from the config on first use)."""
        if self._editor is None:
            from editor.agreement import build as build_agreement
            from editor.editors import build as build_editor
            from editor.revision import Reviser

            def llm() -> Any:
                return self.components.llm

            def attribution() -> AttributionModel:
                return self.attribution

            editor = build_editor(self.cfg.editor, attribution, llm, self.cfg.llm)
            if self.cfg.editor.fallback and self.cfg.editor.type != "identity":
                from editor.fallback import FallbackEditor

                second = self.cfg.editor.model_copy(
                    update={"type": self.cfg.editor.fallback, "fallback": None}
                )
                editor = FallbackEditor(
                    editor,
                    build_editor(second, attribution, llm, self.cfg.llm),
                    self.cfg.revision.max_edit_chars,
                    self.cfg.revision.max_edit_ratio,
                )
            gate = self.cfg.revision.gate and self.cfg.editor.type != "identity"
            agreement = build_agreement(self.cfg.agreement, attribution, llm) if gate else None
            reviser = Reviser(
                editor, agreement, self.cfg.revision.model_copy(update={"gate": gate})
            )
            self._editor = reviser
            return reviser
        return self._editor

    def prepare(self, research: bool = True) -> None:
        """Do the first-use work now, before any stage's timeout starts: each item is logged
        (what, and roughly how long) and shows a progress bar. A no-op once done."""
        with self._prepare_lock:
            if self._prepared_models and (self._prepared_research or not research):
                return
            for item in first_use_work(self.components, research):
                log.warning("preparing: %s (first use only; %s)", item.what, item.estimate)
                started = time.perf_counter()
                item.run()
                log.warning("prepared in %.0f s", time.perf_counter() - started)
            # the models every edit needs load here too, so that a stage's timeout bounds
            # its own work only (the editor's model loads when the gate first calls it)
            if research and not self._prepared_research:
                self.components.load_research_models()
                self._prepared_research = True
            if not self._prepared_models:
                get_nlp()  # sentences and decontextualisation, in research and the report
                load = getattr(self.attribution, "load", None)
                if callable(load):
                    load()
                self._prepared_models = True

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
        self.prepare(research=False)
        editor = getattr(self.editor, "editor", self.editor)  # the Reviser's editor
        load_editor = getattr(editor, "load", None)
        if callable(load_editor):
            load_editor()

    def check_input(self, text: Any, context: Any = None, evidence: Any = None) -> None:
        """Raise ``InputError`` saying what is wrong with the input and what to do."""
        lim = self.cfg.limits
        if not isinstance(text, str):
            raise InputError(f"text must be a string, got {type(text).__name__}")
        if not text.strip():
            raise InputError("text is empty; pass the passage to edit")
        if len(text) > lim.max_chars:
            raise InputError(
                f"text has {len(text):,} characters, over the limit of {lim.max_chars:,}; "
                "split it into smaller passages or raise limits.max_chars",
                too_large=True,
            )
        n = len(split(text))
        if n > lim.max_sentences:
            raise InputError(
                f"text has {n} sentences, over the limit of {lim.max_sentences}; split it or "
                "raise limits.max_sentences",
                too_large=True,
            )
        if context is not None:
            if not isinstance(context, str):
                raise InputError(f"context must be a string, got {type(context).__name__}")
            if len(context) > lim.max_context_chars:
                raise InputError(
                    f"context has {len(context):,} characters, over the limit of "
                    f"{lim.max_context_chars:,}; pass the last turns only or raise "
                    "limits.max_context_chars",
                    too_large=True,
                )
        if evidence is not None and not (
            isinstance(evidence, (list, tuple)) and all(isinstance(e, str) for e in evidence)
        ):
            raise InputError("evidence must be a list of strings")

    def edit(
        self, text: str, context: str | None = None, evidence: Sequence[str] | None = None
    ) -> EditResult:
        """Research (unless ``evidence`` is given), revise, and report.

        Raises ``InputError`` for input that breaks the limits; never raises for a failing
        stage: the result is then ``degraded`` with the original text and the reason."""
        self.check_input(text, context, evidence)
        lim = self.cfg.limits
        if lim.english_only and not looks_english(text):
            reason = "the text does not look like English; returned unchanged"
            return EditResult.untouched(text, context, reason, "unchanged")
        timings: dict[str, float] = {}
        t = time.perf_counter()
        try:
            self.prepare(research=evidence is None)
        except Exception as e:  # noqa: BLE001 - a failed first-use build degrades, never raises
            return self._degraded(text, context, f"preparing failed: {e}", timings, t, "prepare")
        timings["prepare"] = (time.perf_counter() - t) * 1000
        warnings: list[str] = []
        queries: list[Query] = []
        found: list[Evidence] = []
        t = time.perf_counter()
        try:

            def research() -> tuple[list[Query], list[Evidence], list[Evidence]]:
                if evidence is None:
                    results = self.components.researcher.research(text, context)
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
        except Exception as e:  # noqa: BLE001 - any stage failure degrades, never loses the text
            return self._degraded(text, context, f"research failed: {e}", timings, t, "research")
        timings["research"] = (time.perf_counter() - t) * 1000
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
        t = time.perf_counter()
        try:
            report = self.stages.run(
                lambda: self.report(text, revised, queries, found, context),
                lim.report_timeout_s,
                "report",
            )
        except Exception as e:  # noqa: BLE001
            warnings.append(f"attribution report failed: {e}")
            report = None
        timings["report"] = (time.perf_counter() - t) * 1000
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
        )

    def edit_batch(
        self,
        texts: Sequence[str],
        contexts: Sequence[str | None] | None = None,
        evidence: Sequence[Sequence[str] | None] | None = None,
        progress: bool = False,
    ) -> list[EditResult | InputError]:
        """``edit`` over many passages, in order; a row with bad input gives its ``InputError``
        in its place instead of stopping the batch."""
        contexts = contexts if contexts is not None else [None] * len(texts)
        evidence = evidence if evidence is not None else [None] * len(texts)
        if not (len(texts) == len(contexts) == len(evidence)):
            raise InputError("texts, contexts and evidence must have the same length")
        out: list[EditResult | InputError] = []
        for text, ctx, ev in tqdm(
            list(zip(texts, contexts, evidence, strict=True)), desc="edit", disable=not progress
        ):
            try:
                out.append(self.edit(text, ctx, ev))
            except InputError as e:
                out.append(e)
        return out

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
