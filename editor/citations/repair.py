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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from editor.citations.check import (
    CheckResult,
    CitationChecker,
    SentenceCheck,
    Source,
    premise_of,
)
from editor.citations.document import CitedDocument, CitedSentence, parse_markers
from editor.citations.markers import (
    format_marker,
    marker_before_period,
    marker_style,
    protect,
    restore,
)
from editor.result import AddedSource, CitationChange, CitationReport, Step
from editor.revision.base import Revises
from editor.text.words import content_words, detokenize
from editor.types import Evidence, evidence_text


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


@dataclass
class _Plan:
    action: str = ""
    ids: tuple[str, ...] = ()
    reason: str = ""
    against: tuple[Source, ...] = ()
    spans: tuple[str, ...] = ()
    values: tuple[tuple[str, str], ...] = ()
    """the contradictions' named slots: (what the claim states, what the source states)"""
    refused: str | None = None
    """a revision the editor wrote that was not a local correction"""


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


_END = re.compile(r"([.!?…]+[\"')\]]*)?(\s*)$")


def _candidates(claim: str, sources: Sequence[Source], skip: set[str], k: int) -> list[Source]:
    """Up to ``k`` sources, not in ``skip``, sharing the most content words with the claim."""
    words = content_words(claim)
    scored = [
        (len(words & content_words(f"{s.title or ''} {s.text}")), -n, s)
        for n, s in enumerate(sources)
        if s.id not in skip
    ]
    return [s for overlap, _, s in sorted(scored, key=lambda t: t[:2], reverse=True)[:k] if overlap]


def _add_marker(segment: str, marker: str, before_period: bool) -> str:
    """``segment`` with ``marker`` at its end, before or after the closing punctuation."""
    m = _END.search(segment)
    assert m is not None
    core_end = m.start()
    punct, space = m.group(1) or "", m.group(2)
    core = segment[:core_end]
    if before_period:
        return f"{core} {marker}{punct}{space}"
    return f"{core}{punct} {marker}{space}"


def _set_markers(
    segment: str,
    keep_ids: Sequence[str],
    new_ids: Sequence[str],
    style: str,
    before: bool,
    known: Sequence[str],
) -> str:
    """``segment`` citing ``keep_ids`` (markers naming only those stay as they are) plus
    ``new_ids``: the first marker that names none of ``keep_ids`` is rewritten in place to name
    the new ids (the text's own placement kept), other markers are removed with the space before
    them, and new ids with no marker to take over are added at the end.

    >>> _set_markers("It is tall.[^2] Yes.", [], ["3"], "caret", False, ["2", "3"])
    'It is tall.[^3] Yes.'
    """
    out = segment
    if new_ids:
        takeover = next(
            (m for m in parse_markers(out, known) if not any(i in keep_ids for i in m.ids)), None
        )
        if takeover is not None:
            out = out[: takeover.start] + format_marker(list(new_ids), style) + out[takeover.end :]
            keep_ids, new_ids = [*keep_ids, *new_ids], ()
    for m in reversed(parse_markers(out, known)):
        ids = [i for i in m.ids if i in keep_ids]
        if len(ids) == len(m.ids):
            continue
        start = m.start
        while start > 0 and out[start - 1] in " \t":
            start -= 1
        repl = (" " if start < m.start else "") + format_marker(ids, style) if ids else ""
        out = out[:start] + repl + out[m.end :]
    if new_ids:
        out = _add_marker(out, format_marker(list(new_ids), style), before)
    return out


class CitationRepairer:
    """Repairs a cited text with the checker's verifier and the revision stage (see the module
    doc). ``reviser`` None: citations are fixed, claims are not revised."""

    def __init__(
        self,
        checker: CitationChecker,
        reviser: Revises | None = None,
        max_candidates: int = 5,
        remove_below: float = 0.02,
        researcher: Callable[[str, str | None], Sequence[Evidence]] | None = None,
        research_top: int = 3,
    ) -> None:
        self.checker = checker
        self.reviser = reviser
        self.max_candidates = max_candidates
        self.remove_below = remove_below
        self.researcher = researcher
        self.research_top = research_top

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
        plans = self._plan(doc, before.sentences, todo, standalone, sources, by_id)
        found: list[Source] = []
        if self.researcher is not None:
            found = self._research(doc, plans, standalone, list(by_id), context)
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
                        segments[i] = _set_markers(
                            new, keep, add, style, before_period, list(by_id)
                        )
            elif plan.action in ("added", "replaced", "removed"):
                keep = [c for c in s.citations if c in plan.ids]
                add = [c for c in plan.ids if c not in keep]
                segments[i] = _set_markers(s.text, keep, add, style, before_period, list(by_id))
        revised = _join(text, doc, segments)
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
            revised = _join(text, doc, segments)
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

    # -- planning --------------------------------------------------------------------------

    def _plan(
        self,
        doc: CitedDocument,
        checks: Sequence[SentenceCheck],
        todo: Sequence[int],
        standalone: Sequence[str],
        sources: Sequence[Source],
        by_id: Mapping[str, Source],
    ) -> dict[int, _Plan]:
        asks: list[tuple[int, Source]] = []
        for i in todo:
            cited = {c for c in checks[i].citations if c in by_id}
            for src in _candidates(doc.sentences[i].claim, sources, cited, self.max_candidates):
                asks.append((i, src))
        judged = self.checker.judge([(premise_of(src), standalone[i]) for i, src in asks])
        found: dict[int, list[tuple[str, float, Any, Source]]] = {i: [] for i in todo}
        for (i, src), (label, p, slot) in zip(asks, judged, strict=True):
            found[i].append((label, p, slot, src))
        plans: dict[int, _Plan] = {}
        for i in todo:
            c = checks[i]
            supporting = sorted((f for f in found[i] if f[0] == "supports"), key=lambda f: -f[1])
            contra = [v for v in c.verdicts if v.label == "contradicts"]
            if supporting:
                best = supporting[0][3]
                keep = tuple(v.source_id for v in c.verdicts if v.label == "supports")
                if c.citations:
                    plans[i] = _Plan(
                        "replaced",
                        (*keep, best.id),
                        f"source {best.id} supports it (P(supported) {supporting[0][1]:.2f}); "
                        f"{_names(c.citations)} do{'es' if len(c.citations) == 1 else ''} not",
                    )
                else:
                    plans[i] = _Plan(
                        "added",
                        (best.id,),
                        f"source {best.id} supports it (P(supported) {supporting[0][1]:.2f})",
                    )
            elif contra:
                plans[i] = _Plan(
                    "revise",
                    c.citations,
                    f"{_names([v.source_id for v in contra])} contradict"
                    f"{'s' if len(contra) == 1 else ''} it: {contra[0].reason}",
                    tuple(by_id[v.source_id] for v in contra),
                    tuple(v.span for v in contra),
                    tuple(v.values for v in contra if v.values),
                )
            elif not c.citations:
                against = [f for f in found[i] if f[0] == "contradicts"]
                if against:
                    src = against[0][3]
                    span = getattr(against[0][2], "evidence_sentence", None) or src.text
                    plans[i] = _Plan(
                        "revise", (src.id,), f"source {src.id} contradicts it", (src,), (span,)
                    )
                else:
                    plans[i] = _Plan("uncited", (), "no given source supports it")
            elif (
                c.verdicts
                and max(v.p_supported for v in c.verdicts) < self.remove_below
                and (len(c.verdicts) == len(c.citations))
            ):
                plans[i] = _Plan(
                    "removed",
                    (),
                    f"{_names(c.citations)} do{'es' if len(c.citations) == 1 else ''} not mention "
                    "it and no given source supports it",
                )
            else:
                plans[i] = _Plan(
                    "unconfirmed",
                    c.citations,
                    "its citations do not confirm it and no given source does; left as it is",
                )
        return plans

    def _research(
        self,
        doc: CitedDocument,
        plans: dict[int, _Plan],
        standalone: Sequence[str],
        known: Sequence[str],
        context: str | None,
    ) -> list[Source]:
        """Claims the given sources cannot settle, researched: a snippet that supports one
        becomes a new source it cites; one that contradicts it, a source to revise against.
        New sources take the ids after the given ones."""
        assert self.researcher is not None
        numeric = [int(k) for k in known if k.isdigit()]
        next_id = max(numeric, default=len(known)) + 1
        new: list[Source] = []
        for i, plan in plans.items():
            if plan.action not in ("uncited", "unconfirmed"):
                continue
            claim = doc.sentences[i].claim
            try:
                evidence = list(self.researcher(claim, context))[: self.research_top]
            except Exception as e:  # noqa: BLE001 - research is extra: its failure is reported
                plans[i] = _Plan(plan.action, plan.ids, f"{plan.reason}; research failed: {e}")
                continue
            if not evidence:
                continue
            judged = self.checker.judge([(evidence_text(e), standalone[i]) for e in evidence])
            ranked = sorted(zip(evidence, judged, strict=True), key=lambda ej: -ej[1][1])
            hit = next((ej for ej in ranked if ej[1][0] == "supports"), None)
            against = next((ej for ej in ranked if ej[1][0] == "contradicts"), None)
            pick = hit or against
            if pick is None:
                continue
            e, (label, p, slot) = pick
            src = Source(str(next_id), e.text, e.title or None, e.url)
            where = f"{e.title or e.source}" if (e.title or e.source) else "the index"
            if label == "supports":
                action = "replaced" if doc.sentences[i].citations else "added"
                plans[i] = _Plan(
                    action,
                    (src.id,),
                    f"no given source supports it; research found it in {where} "
                    f"(P(supported) {p:.2f}), added as source {src.id}",
                )
            else:
                span = getattr(slot, "evidence_sentence", None) or e.text
                plans[i] = _Plan(
                    "revise",
                    (src.id,),
                    f"no given source settles it; {where} (source {src.id}, found by research) "
                    "contradicts it",
                    (src,),
                    (span,),
                )
            new.append(src)
            next_id += 1
        return new

    def _revise(
        self, s: CitedSentence, plan: _Plan, context: str | None, known: Sequence[str]
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


def _names(ids: Sequence[str]) -> str:
    ids = list(ids)
    return f"source {ids[0]}" if len(ids) == 1 else "sources " + ", ".join(ids)


def _join(text: str, doc: CitedDocument, segments: Sequence[str]) -> str:
    """The text with each sentence's span replaced by its segment; what lies between sentences
    is kept as it was."""
    out, pos = [], 0
    for s, seg in zip(doc.sentences, segments, strict=True):
        out.append(text[pos : s.start])
        out.append(seg)
        pos = s.end
    out.append(text[pos:])
    return "".join(out)
