"""The result contract of ``Pipeline.edit`` (docs: how-to/http.md), serialised identically by the
CLI and the HTTP API."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from editor.findings import Finding, Flag
from editor.types import Evidence
from editor.verdicts import Verdict

Status = Literal["edited", "unchanged", "degraded"]


def once(reason: str) -> str:
    """``reason`` with each of its clauses (``"; "``-separated) stated once, in order; a clause
    that only names its source before a fact already stated (``reader: ...``) is left out too.

    >>> once("the evidence answers Q with 'two'; edit of 3 characters; reader: the evidence answers Q with 'two'")
    "the evidence answers Q with 'two'; edit of 3 characters"
    >>> once("substitute: no change; causal: no change")
    'substitute: no change; causal: no change'
    """
    clauses: list[str] = []
    for clause in reason.split("; "):
        source, sep, fact = clause.partition(": ")
        if clause in clauses or (sep and " " not in source and fact in clauses):
            continue
        clauses.append(clause)
    return "; ".join(clauses)


@dataclass(frozen=True)
class FindingReport:
    """What the judge flagged in the caller's text, fixed or not, as a linter reports a
    diagnostic: ``[start, end)`` of ``original`` (None where an earlier edit moved it), the
    words, ``contradicted`` or ``not_supported``, the evidence that flags them, its words for
    the slot (``fix``), whether the revision fixed it and why (the step's reason).

    ``applicability``: ``safe`` (the fix was applied), ``unsafe`` (the judge is not sure: the
    fix is suggested, ``suggestion`` the words it would write, applied only on request:
    ``--apply-unsure``) or ``display`` (the words are named, no fix is offered)."""

    start: int | None
    end: int | None
    text: str
    kind: str
    evidence_id: str
    fix: str | None
    fixed: bool
    reason: str
    applicability: str = "display"
    suggestion: str | None = None


@dataclass(frozen=True)
class Step:
    """One revision step: the agreement decision for a (query, evidence) pair and the edit.

    Where the gate opened: ``rule`` names what found the disagreement (``slot``, ``role``,
    ``negation``, ``nli``, ``question``, ``llm``, ``gate-off``), ``editor`` the editor whose
    revision the step carries, and ``verified_by`` the judges other than ``rule`` that proved
    an accepted revision (``nli``, ``slot``, ``statement``, joined by ``+``).
    """

    query: str
    evidence_id: str
    agrees: bool | None
    reason: str
    before: str
    after: str
    accepted: bool
    rule: str | None = None
    editor: str | None = None
    verified_by: str | None = None
    flags: tuple[Flag, ...] = ()
    """what the judge flagged in ``before`` (see ``Flag``)"""
    verdict: Verdict | None = None
    """the judge's verdict on the sentence it assessed: supported, contradicted, not_stated or
    not_checkable"""
    suggested: str | None = None
    """the text the edit the judge is unsure of would give (not applied; see ``apply_unsure``)"""
    span: tuple[int, int] | None = None
    """``[start, end)`` of ``before``: the sentence the judge assessed (None: none was)"""
    finding: Finding | None = field(default=None, compare=False, repr=False)
    """the judge's ``Finding`` the step was decided on, whole: its probabilities, the evidence
    it read and the findings it was weighed from. In process only: the JSON carries what the
    contract names (``agrees``, ``rule``, ``flags``, ``verdict``), all read from it by
    ``of``; a step read back from JSON has none."""

    @classmethod
    def of(
        cls,
        finding: Finding,
        query: str,
        evidence_id: str,
        reason: str,
        before: str,
        after: str | None = None,
        accepted: bool = False,
        **decided: Any,
    ) -> Step:
        """The step of ``finding`` on ``before``: its verdict, rule and named words, whether it
        agrees, with ``reason``; ``after``: the text the step leaves (default: ``before``);
        ``decided``: ``editor``, ``verified_by``, ``suggested``, ``span`` (default: the
        finding's) and ``rule`` where the step names none.

        >>> f = Finding("contradicted", "the evidence contradicts '7'", (0, 7), opens=True)
        >>> s = Step.of(f, "q", "e1", f.reason, "B is 7.", "B is 8.", True, editor="answer")
        >>> s.agrees, s.verdict, s.flags[0].kind, s.span, s.finding is f
        (False, 'contradicted', 'contradicted', (0, 7), True)
        """
        return cls(
            query,
            evidence_id,
            finding.agrees,
            once(reason),
            before,
            before if after is None else after,
            accepted,
            **{"rule": finding.rule, "span": finding.span, **decided},
            flags=finding.named(),
            verdict=finding.verdict,
            finding=finding,
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Step:
        span = data.get("span")
        return cls(
            **{
                **data,
                "flags": tuple(Flag(**f) for f in data.get("flags") or ()),
                "span": None if span is None else tuple(span),
            }
        )


@dataclass(frozen=True)
class Hop:
    """One hop of multi-hop research (``editor.research.hops``): its number, the query it
    searched and the bridge entity (hop 1: the one it found, None when none was and the hops
    stopped there; hop 2: the one it asked about)."""

    number: int
    query: str
    found: str | None


@dataclass(frozen=True)
class PartReport:
    """An atomic part of a decomposed sentence (``attribution.decompose``): its standalone
    text, the span in the sentence of the words it asserts, its score, evidence and verdict."""

    text: str
    start: int
    end: int
    kind: str
    attribution: float
    evidence_id: str | None
    verdict: str


@dataclass(frozen=True)
class SentenceReport:
    """A sentence of the revised text in the attribution report; ``parts`` when it was
    decomposed into several (the sentence is supported only when every part is).

    ``attribution`` is auto-AIS (the attribution model's P(supported), a metric); ``verdict``
    is the judge's where it assessed the sentence in this form (``judged``), else the
    attribution model's reading of the score."""

    text: str
    decontextualized: str
    attribution: float | None
    evidence_id: str | None
    applicable: bool
    verdict: str | None = None
    parts: tuple[PartReport, ...] = ()
    judged: bool = False


@dataclass(frozen=True)
class AttributionReport:
    """At most M evidence ids, per-sentence AIS records and the passage scores."""

    evidence_ids: tuple[str, ...]
    sentences: tuple[SentenceReport, ...]
    attribution_before: float | None
    attribution_after: float | None
    preservation: float
    f1_ap: float | None


@dataclass(frozen=True)
class CitationChange:
    """What citation repair did to one sentence's citations, or why it left them:
    ``added``, ``replaced``, ``removed``, ``revised`` (the claim, against its sources),
    ``not_revised``, ``unconfirmed`` or ``uncited``. ``before``/``after``: the source ids cited."""

    sentence: int
    action: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    text_before: str
    text_after: str
    reason: str


@dataclass(frozen=True)
class AddedSource:
    """A source citation repair found by research and appended after the given ones."""

    id: str
    text: str
    title: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class CitationReport:
    """Citation repair of a cited text (``Pipeline.edit`` with ``sources``): each change and
    ALCE's citation precision and recall before and after."""

    changes: tuple[CitationChange, ...]
    citation_precision_before: float | None
    citation_recall_before: float | None
    citation_precision_after: float | None
    citation_recall_after: float | None
    unknown_markers: tuple[str, ...] = ()
    added_sources: tuple[AddedSource, ...] = ()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CitationReport:
        return cls(
            tuple(
                CitationChange(**{**c, "before": tuple(c["before"]), "after": tuple(c["after"])})
                for c in data.get("changes") or ()
            ),
            data.get("citation_precision_before"),
            data.get("citation_recall_before"),
            data.get("citation_precision_after"),
            data.get("citation_recall_after"),
            tuple(data.get("unknown_markers") or ()),
            tuple(AddedSource(**a) for a in data.get("added_sources") or ()),
        )


@dataclass(frozen=True)
class EditResult:
    """What ``Pipeline.edit`` returns. ``degraded``: a stage failed and ``revised == original``."""

    original: str
    revised: str
    context: str | None
    queries: tuple[str, ...]
    evidence: tuple[Evidence, ...]
    steps: tuple[Step, ...]
    report: AttributionReport | None
    status: Status
    warnings: tuple[str, ...] = ()
    timings_ms: dict[str, float] = field(default_factory=dict)
    citations: CitationReport | None = None
    """with ``sources``: what repair did to each citation (None otherwise)"""
    hops: tuple[Hop, ...] = ()
    """multi-hop research: each hop's query and what it found (none: one hop)"""
    findings: tuple[FindingReport, ...] = ()
    """every span the evidence flags, fixed or not (``editor.report.findings``)"""

    @classmethod
    def untouched(
        cls, text: str, context: str | None, reason: str, status: Status = "degraded"
    ) -> EditResult:
        """The caller's text returned as it came, with the reason (nothing researched).

        >>> EditResult.untouched("Hi.", None, "deadline passed").revised
        'Hi.'
        """
        return cls(text, text, context, (), (), (), None, status, (reason,), {})

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the contract (lists, not tuples; rounded timings)."""
        steps = tuple(replace(s, finding=None) for s in self.steps)  # not copied, then dropped
        data = asdict(replace(self, steps=steps))
        for step in data["steps"]:
            del step["finding"]  # in process only (``Step.finding``)
        data["timings_ms"] = {k: round(v, 1) for k, v in self.timings_ms.items()}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EditResult:
        """The result back from ``to_json``'s object (other keys of ``data`` are ignored).

        >>> r = EditResult.untouched("Hi.", None, "no evidence", "unchanged")
        >>> EditResult.from_json({**r.to_json(), "id": "row-1"}) == r
        True
        """
        report = data.get("report")
        return cls(
            data["original"],
            data["revised"],
            data.get("context"),
            tuple(data.get("queries") or ()),
            tuple(Evidence(**e) for e in data.get("evidence") or ()),
            tuple(Step.from_json(s) for s in data.get("steps") or ()),
            None
            if report is None
            else AttributionReport(
                tuple(report["evidence_ids"]),
                tuple(
                    SentenceReport(
                        **{**s, "parts": tuple(PartReport(**p) for p in s.get("parts") or ())}
                    )
                    for s in report["sentences"]
                ),
                report["attribution_before"],
                report["attribution_after"],
                report["preservation"],
                report["f1_ap"],
            ),
            data["status"],
            tuple(data.get("warnings") or ()),
            dict(data.get("timings_ms") or {}),
            None if data.get("citations") is None else CitationReport.from_json(data["citations"]),
            tuple(Hop(**h) for h in data.get("hops") or ()),
            tuple(FindingReport(**f) for f in data.get("findings") or ()),
        )
