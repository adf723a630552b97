"""Repair a cited text against its own sources: the smallest change that makes each citation
true, and a report of what happened to every one.

For each sentence the checker did not find supported by its citations:

1. when a given source supports the claim as written, the citation is fixed: added to an uncited
   claim, or put in place of the citations that do not support it (the claim is right, the
   pointer was wrong);
2. otherwise, when a cited source contradicts it (or, for an uncited claim, a given source on the
   same subject does), the claim is revised against that source's span by the revision stage,
   and the revision is kept only when the check afterwards finds it supported by its citations;
3. otherwise, with a ``researcher`` (the index or the web), a claim no given source settles is
   researched: a snippet that supports it is appended as a new source (the ids after the given
   ones) and cited; one that contradicts it is a source to revise against, as in 2;
4. otherwise a citation whose source does not mention the claim at all (P(supported) under
   ``remove_below``) is removed, and anything else is left as it is and reported unconfirmed.

A supported sentence, a sentence that needs no citation, and everything between sentences come
back byte for byte. New markers are written in the text's own style ([1], [1, 3] or [^1]) and
placed where the text puts them (before or after the closing punctuation).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from editor.citations.check import CitationChecker
from editor.citations.document import CitedDocument, CitedSentence, parse_markers
from editor.citations.markers import (
    marker_before_period,
    marker_style,
    protect,
    restore,
    set_markers,
)
from editor.citations.plan import RepairPlan, RepairPlanner, Researcher
from editor.citations.results import CheckResult
from editor.citations.sources import Source
from editor.result import AddedSource, CitationChange, CitationReport, Step
from editor.revision.base import Revises
from editor.text.words import detokenize


@dataclass(frozen=True)
class RepairResult:
    """The repaired text, each change, and the check before and after."""

    original: str
    revised: str
    changes: tuple[CitationChange, ...]
    before: CheckResult
    after: CheckResult
    steps: tuple[Step, ...] = ()
    added_sources: tuple[Source, ...] = ()
    """sources research found and the text now cites (ids after the given ones)"""

    def report(self) -> CitationReport:
        """The ``citations`` record of the edit result."""
        return CitationReport(
            self.changes,
            self.before.citation_precision,
            self.before.citation_recall,
            self.after.citation_precision,
            self.after.citation_recall,
            self.after.unknown_markers,
            tuple(AddedSource(a.id, a.text, a.title, a.url) for a in self.added_sources),
        )


_TOKEN = re.compile(r"\w+|[^\w\s]")


def local_edit(before: str, after: str, values: Sequence[tuple[str, str]] = ()) -> bool:
    """Whether a revision is one local substitution: one changed stretch of at most 6 words
    replaced by at most 8 (no reordering, no bare deletion) that, when the contradiction named
    what the source states, writes some of it.

    >>> local_edit("It opened in 1887.", "It opened in 1889.", [("1887", "1889")])
    True
    >>> local_edit("In 1983 he sang it.", "He sang it in 1983.")
    False
    >>> local_edit("He died at the age of 78.", "He died at 4:14 PM.", [("the age of 78", "78")])
    False
    """
    a = [t.lower() for t in _TOKEN.findall(before)]
    b = [t.lower() for t in _TOKEN.findall(after)]
    ops = [
        op
        for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        if op[0] != "equal"
    ]
    if len(ops) != 1:
        return not ops
    _, i1, i2, j1, j2 = ops[0]
    if i2 - i1 > 6 or j2 - j1 > 8 or j1 == j2:
        return False
    wanted = {t.lower() for _, source in values for t in _TOKEN.findall(source)}
    return not wanted or bool(wanted & set(b[j1:j2]))


class CitationRepairer:
    """Repairs a cited text with the checker's verifier and the revision stage (see the module
    doc). ``reviser`` None: citations are fixed, claims are not revised."""

    def __init__(
        self,
        checker: CitationChecker,
        reviser: Revises | None = None,
        max_candidates: int = 5,
        remove_below: float = 0.02,
        researcher: Researcher | None = None,
        research_top: int = 3,
    ) -> None:
        self.checker = checker
        self.reviser = reviser
        self.planner = RepairPlanner(
            checker, max_candidates, remove_below, researcher, research_top
        )

    def repair(
        self, text: str, sources: Sequence[Source], context: str | None = None
    ) -> RepairResult:
        by_id: Mapping[str, Source] = {s.id: s for s in sources}
        before = self.checker.check(text, sources, context)
        doc = CitedDocument.parse(text, by_id)
        todo = [
            i
            for i, c in enumerate(before.sentences)
            if c.outcome in ("citation_not_supporting", "needs_citation")
        ]
        if not todo:
            return RepairResult(text, text, (), before, before)
        standalone = [c.standalone for c in before.sentences]  # as the check judged them
        plans = self.planner.plan(doc, before.sentences, todo, standalone, sources, by_id)
        found: list[Source] = []
        if self.planner.researcher is not None:
            found = self.planner.research(doc, plans, standalone, list(by_id), context)
            if found:
                sources = [*sources, *found]
                by_id = {s.id: s for s in sources}
        style = marker_style(doc.markers)
        before_period = marker_before_period(text, doc.markers)
        segments = [s.text for s in doc.sentences]
        steps: list[Step] = []
        revised_at: dict[int, str] = {}
        for i, plan in plans.items():
            s = doc.sentences[i]
            if plan.action == "revise":
                new, st = self._revise(s, plan, context, list(by_id))
                steps.extend(st)
                if new != s.text:
                    revised_at[i] = new
                    segments[i] = new
                    if set(plan.ids) != set(s.citations):  # cite what it was revised against
                        keep = [c for c in s.citations if c in plan.ids]
                        add = [c for c in plan.ids if c not in keep]
                        segments[i] = set_markers(new, keep, add, style, before_period, list(by_id))
            elif plan.action in ("added", "replaced", "removed"):
                keep = [c for c in s.citations if c in plan.ids]
                add = [c for c in plan.ids if c not in keep]
                segments[i] = set_markers(s.text, keep, add, style, before_period, list(by_id))
        revised = doc.with_sentences(segments)
        after = self.checker.check(revised, sources, context) if revised != text else before
        # a revision is kept only when its citations now support it
        undo = [
            i
            for i in revised_at
            if len(after.sentences) != len(doc.sentences) or not after.sentences[i].supported
        ]
        if undo:
            for i in undo:
                segments[i] = doc.sentences[i].text
            revised = doc.with_sentences(segments)
            after = self.checker.check(revised, sources, context) if revised != text else before
        changes = []
        for i, plan in plans.items():
            s = doc.sentences[i]
            action, reason = plan.action, plan.reason
            if action == "revise":
                if i in revised_at and i not in undo:
                    action = "revised"
                else:
                    action = "not_revised"
                    if i in undo:
                        reason = "the revision was not kept: its sources do not support it"
                    elif plan.refused is not None:
                        reason = (
                            f"{plan.reason}; the revision ({plan.refused!r}) was not a local "
                            "correction of what the source states otherwise, so it was not kept"
                        )
                    else:
                        reason = f"{plan.reason}; no revision was found"
            after_ids = tuple(
                dict.fromkeys(x for m in parse_markers(segments[i], by_id) for x in m.ids)
            )
            changes.append(
                CitationChange(i, action, s.citations, after_ids, s.text, segments[i], reason)
            )
        used = {x for c in changes for x in c.after}
        added = tuple(s for s in found if s.id in used)
        return RepairResult(text, revised, tuple(changes), before, after, tuple(steps), added)

    def _revise(
        self, s: CitedSentence, plan: RepairPlan, context: str | None, known: Sequence[str]
    ) -> tuple[str, list[Step]]:
        """The sentence revised against the contradicting sources, markers put back."""
        if self.reviser is None:
            return s.text, []
        p = protect(s.text, known)
        core = p.clean.rstrip()
        tail = p.clean[len(core) :]
        evidence = [
            src.evidence("cited", detokenize(span), core)
            for src, span in zip(plan.against, plan.spans, strict=True)
        ]
        new_core, steps = self.reviser.revise(core, evidence, context)
        if new_core != core and not local_edit(core, new_core, plan.values):
            plan.refused = new_core
            return s.text, steps  # do no harm: a reordering or a rewrite is not a correction
        if new_core == core:
            return s.text, steps
        return restore(p, new_core + tail), steps
