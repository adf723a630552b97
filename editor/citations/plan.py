"""What citation repair does with each sentence its citations do not support: cite a given
source that supports it, revise it against one that contradicts it, research it, remove a
citation to a source that does not mention it, or leave it as it is (see
``editor.citations.repair``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from editor.citations.check import CitationChecker, PairLabel
from editor.citations.document import CitedDocument
from editor.citations.results import SentenceCheck
from editor.citations.sources import Source
from editor.policy import removes_citation
from editor.text.words import content_words
from editor.types import Evidence
from editor.verdicts import CONTRADICTS, SUPPORTS


@dataclass
class RepairPlan:
    """What repair does with one sentence: the action, the source ids it will cite, why, and
    for a revision the sources (and their spans) to revise against."""

    action: str = ""
    ids: tuple[str, ...] = ()
    reason: str = ""
    against: tuple[Source, ...] = ()
    spans: tuple[str, ...] = ()
    values: tuple[tuple[str, str], ...] = ()
    """the contradictions' named slots: (what the claim states, what the source states)"""
    refused: str | None = None
    """a revision the editor wrote that was not a local correction"""


Researcher = Callable[[str, str | None], Sequence[Evidence]]
"""Evidence for a claim (and the dialogue context): what repair researches a claim with."""


@dataclass(eq=False)
class RepairPlanner:
    """Plans the repair of each sentence with the checker's verifier: ``max_candidates`` given
    sources tried per claim, ``remove_below`` the P(supported) under which a citation is removed,
    and with a ``researcher``, its ``research_top`` snippets judged for a claim no given source
    settles."""

    checker: CitationChecker
    max_candidates: int = 5
    remove_below: float = 0.02
    researcher: Researcher | None = None
    research_top: int = 3

    def plan(
        self,
        doc: CitedDocument,
        checks: Sequence[SentenceCheck],
        todo: Sequence[int],
        standalone: Sequence[str],
        sources: Sequence[Source],
        by_id: Mapping[str, Source],
    ) -> dict[int, RepairPlan]:
        """A plan for each sentence in ``todo``, from the given sources alone."""
        asks: list[tuple[int, Source]] = []
        for i in todo:
            cited = {c for c in checks[i].citations if c in by_id}
            for src in _candidates(doc.sentences[i].claim, sources, cited, self.max_candidates):
                asks.append((i, src))
        judged = self.checker.labels([(src.evidence("given"), standalone[i]) for i, src in asks])
        found: dict[int, list[tuple[str, float, PairLabel, Source]]] = {i: [] for i in todo}
        for (i, src), v in zip(asks, judged, strict=True):
            found[i].append((v.label, v.p, v, src))
        plans: dict[int, RepairPlan] = {}
        for i in todo:
            c = checks[i]
            supporting = sorted((f for f in found[i] if f[0] == SUPPORTS), key=lambda f: -f[1])
            contra = [v for v in c.verdicts if v.label == CONTRADICTS]
            if supporting:
                best = supporting[0][3]
                keep = tuple(v.source_id for v in c.verdicts if v.label == SUPPORTS)
                if c.citations:
                    plans[i] = RepairPlan(
                        "replaced",
                        (*keep, best.id),
                        f"source {best.id} supports it (P(supported) {supporting[0][1]:.2f}); "
                        f"{_names(c.citations)} do{'es' if len(c.citations) == 1 else ''} not",
                    )
                elif _name_break(doc, i):
                    plans[i] = RepairPlan(
                        "uncited",
                        (),
                        f"source {best.id} supports it, but it ends at '{doc.sentences[i].text[-1]}' "
                        "mid-line before a cited sentence (a name such as 'Impulse! Records'?): "
                        "no marker added inside it",
                    )
                else:
                    plans[i] = RepairPlan(
                        "added",
                        (best.id,),
                        f"source {best.id} supports it (P(supported) {supporting[0][1]:.2f})",
                    )
            elif contra:
                plans[i] = RepairPlan(
                    "revise",
                    c.citations,
                    f"{_names([v.source_id for v in contra])} contradict"
                    f"{'s' if len(contra) == 1 else ''} it: {contra[0].reason}",
                    tuple(by_id[v.source_id] for v in contra),
                    tuple(v.span for v in contra),
                    tuple(v.values for v in contra if v.values),
                )
            elif not c.citations:
                against = [f for f in found[i] if f[0] == CONTRADICTS]
                if against:
                    src = against[0][3]
                    span = against[0][2].evidence_sentence or src.text
                    plans[i] = RepairPlan(
                        "revise", (src.id,), f"source {src.id} contradicts it", (src,), (span,)
                    )
                else:
                    plans[i] = RepairPlan("uncited", (), "no given source supports it")
            elif (
                c.verdicts
                and removes_citation(max(v.p_supported for v in c.verdicts), self.remove_below)
                and (len(c.verdicts) == len(c.citations))
            ):
                plans[i] = RepairPlan(
                    "removed",
                    (),
                    f"{_names(c.citations)} do{'es' if len(c.citations) == 1 else ''} not mention "
                    "it and no given source supports it",
                )
            else:
                plans[i] = RepairPlan(
                    "unconfirmed",
                    c.citations,
                    "its citations do not confirm it and no given source does; left as it is",
                )
        return plans

    def research(
        self,
        doc: CitedDocument,
        plans: dict[int, RepairPlan],
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
            if plan.action not in ("uncited", "unconfirmed") or _name_break(doc, i):
                continue
            claim = doc.sentences[i].claim
            try:
                evidence = list(self.researcher(claim, context))[: self.research_top]
            except Exception as err:  # noqa: BLE001 - research is extra: its failure is reported
                reason = f"{plan.reason}; research failed: {err}"
                plans[i] = RepairPlan(plan.action, plan.ids, reason)
                continue
            if not evidence:
                continue
            judged = self.checker.labels([(e, standalone[i]) for e in evidence])
            ranked = sorted(zip(evidence, judged, strict=True), key=lambda ej: -ej[1].p)
            hit = next((ej for ej in ranked if ej[1].label == SUPPORTS), None)
            against = next((ej for ej in ranked if ej[1].label == CONTRADICTS), None)
            pick = hit or against
            if pick is None:
                continue
            e, v = pick
            label, p = v.label, v.p
            src = Source(str(next_id), e.text, e.title or None, e.url)
            where = f"{e.title or e.source}" if (e.title or e.source) else "the index"
            if label == SUPPORTS:
                action = "replaced" if doc.sentences[i].citations else "added"
                plans[i] = RepairPlan(
                    action,
                    (src.id,),
                    f"no given source supports it; research found it in {where} "
                    f"(P(supported) {p:.2f}), added as source {src.id}",
                )
            else:
                span = v.evidence_sentence or e.text
                plans[i] = RepairPlan(
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


def _name_break(doc: CitedDocument, i: int) -> bool:
    """Whether sentence ``i`` ends at '!' or '?' with a cited sentence after it on the same
    line: the split may be inside a name ("Impulse! Records", "Yahoo! Inc."), where a marker
    of its own would land mid-name; the next sentence's marker covers it."""
    s = doc.sentences[i]
    if not s.text.rstrip().endswith(("!", "?")) or i + 1 >= len(doc.sentences):
        return False
    nxt = doc.sentences[i + 1]
    return bool(nxt.citations) and "\n" not in doc.text[s.end : nxt.start]


def _candidates(claim: str, sources: Sequence[Source], skip: set[str], k: int) -> list[Source]:
    """Up to ``k`` sources, not in ``skip``, sharing the most content words with the claim."""
    words = content_words(claim)
    scored = [
        (len(words & content_words(f"{s.title or ''} {s.text}")), -n, s)
        for n, s in enumerate(sources)
        if s.id not in skip
    ]
    return [s for overlap, _, s in sorted(scored, key=lambda t: t[:2], reverse=True)[:k] if overlap]


def _names(ids: Sequence[str]) -> str:
    ids = list(ids)
    return f"source {ids[0]}" if len(ids) == 1 else "sources " + ", ".join(ids)
