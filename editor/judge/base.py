"""The judge's contract: the ``Finding`` on a sentence, the ``Decision`` on an edit, the
``Judge`` Protocol and its registry (``judge.type``).

Every decision about truth goes through a judge: whether a sentence is wrong against a piece of
evidence (``assess_batch``: the verdict, the words it names, the replacement it proposes, the
proof), and whether an edit of it stands (``accept``: applied, suggested or rejected). The
revision loop, the report's sentence verdicts and ``EditResult.findings`` read what the judge
returned, passed explicitly from step to step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

# the judge's records (editor.findings), in its vocabulary's words, below the result that carries them
from editor.findings import Applicability as Applicability
from editor.findings import Decision, Finding
from editor.findings import Flag as Flag
from editor.findings import Proposal as Proposal
from editor.registry import Registry
from editor.text.words import splice
from editor.types import Evidence
from editor.verdicts import Verdict as Verdict


@dataclass(frozen=True)
class Candidate:
    """A revision of a finding's sentence that a proposer wrote (``editor.revision.proposers``:
    the judge's own signal, the answer, substitute, the LLM or FiD editors): the text that
    replaces the sentence, why, and who proposed it. Only the judge's ``choose`` decides it."""

    text: str
    reason: str
    source: str


@dataclass(frozen=True)
class Rewrite:
    """A candidate put in a text: ``before`` with the judged sentence's words replaced gives
    ``after``, whose new words are ``after[span_after]`` (``of`` builds it).

    >>> r = Rewrite.of("Built in 1887. Tall.", (0, 14), "Built in 1889.")
    >>> r.after, r.new
    ('Built in 1889. Tall.', 'Built in 1889.')
    """

    before: str
    after: str
    span_after: tuple[int, int]

    @classmethod
    def of(cls, before: str, span: tuple[int, int], text: str) -> Rewrite:
        """``text`` put in place of ``before[span]`` (``splice``)."""
        after, span_after = splice(before, span, text)
        return cls(before, after, span_after)

    @property
    def new(self) -> str:
        """The words put in."""
        return self.after[self.span_after[0] : self.span_after[1]]


@dataclass(frozen=True)
class Choice:
    """The judge's ``choose``: the candidate it picked (``index``; None: none), its decision
    (``safe``: applied; ``unsafe``: suggested; ``display``: rejected), the decision on every
    candidate it read, in order (passed back as ``known`` when more candidates come), the
    finding as the candidates leave it (None: the one chosen for stands), whether later
    proposers are still asked (``more``; None: until a candidate is applied) and what the judge
    weighed, where it keeps it (``weighed``: the combined judges' ``Assessed``, which ``purr
    train judge`` reads)."""

    index: int | None
    decision: Decision
    decisions: tuple[Decision, ...] = ()
    finding: Finding | None = None
    more: bool | None = None
    weighed: Any = None


class Judge(Protocol):
    """Decides what is wrong, names the words, and chooses among proposed edits (see the
    module doc)."""

    name: str

    def assess_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Finding]:
        """One finding per (text, query, evidence): the sentence of the text the query is
        about, judged against the evidence."""
        ...

    def accept(self, edit: Rewrite, finding: Finding, context: str | None = None) -> Decision:
        """The decision on ``edit``, which replaces ``edit.before[finding.span]``."""
        ...

    def choose(
        self,
        before: str,
        finding: Finding,
        candidates: Sequence[Candidate],
        context: str | None = None,
        known: Sequence[Decision] = (),
    ) -> Choice:
        """Which of ``candidates`` (revisions of ``before[finding.span]``, in the proposers'
        order) is applied, suggested or none; ``known``: decisions already made on the first
        candidates. Called again as each proposer adds candidates, and once with none where no
        proposer wrote any. By default (a judge that subclasses ``Judge``) the choice is read
        from its own ``accept``: the first candidate it is sure of (applied), else the first it
        is unsure of (suggested), else the first (rejected, with why).

        >>> class Even(Judge):
        ...     def accept(self, edit, finding, context=None):
        ...         return Decision("safe" if len(edit.after) % 2 == 0 else "display", "")
        >>> f = Finding("contradicted", "", (0, 5), opens=True)
        >>> cands = [Candidate("Turin", "", "a"), Candidate("Rome", "", "b")]
        >>> Even().choose("Paris", f, cands).index
        1
        """
        span = finding.span or (0, len(before))
        decisions = list(known)
        for c in candidates[len(decisions) :]:
            if any(d.accepted for d in decisions):
                break
            edit = Rewrite.of(before, span, c.text)
            decisions.append(self.accept(edit, replace(finding, span=span), context))
        if not decisions:
            return Choice(None, Decision("display", "rejected: no candidate"))
        order = [
            i for a in ("safe", "unsafe") for i, d in enumerate(decisions) if d.applicability == a
        ]
        i = order[0] if order else 0
        return Choice(i, decisions[i], tuple(decisions))


def unjudged(span: tuple[int, int] | None, evidence: Evidence) -> Finding:
    """The finding where no judge reads the text (``revision.gate`` off): ``span``, the
    sentence the evidence's query is about, opened for editing as not stated, unchecked."""
    return Finding(
        "not_stated",
        "gate off: edit without checking",
        span,
        rule="gate-off",
        opens=True,
        evidence=evidence,
    )


def assess(
    judge: Judge, sentence: str, evidence: Sequence[Evidence], context: str | None = None
) -> Finding:
    """The finding on ``sentence`` against all of ``evidence``: a contradiction one evidence
    names stands whatever the others say (the first such, in evidence order), else the best
    support, else not stated.

    Needs the judge's models; the rule of combination is plain:

    >>> pick = _combine
    >>> pick([Finding("supported", "a"), Finding("contradicted", "b", opens=True)]).reason
    'b'
    >>> pick([Finding("not_stated", "a"), Finding("supported", "b", supported=0.9)]).reason
    'b'
    """
    if not evidence:
        return Finding("not_checkable", "no evidence to judge against")
    return _combine(judge.assess_batch([(sentence, sentence, e) for e in evidence], context))


def of_parts(found: Sequence[Finding]) -> tuple[int, Finding]:
    """One finding for a claim judged in parts (one finding per part): the first contradicted
    part's, else the weakest part that is not supported, else the weakest part; with the
    weakest part's P(supported). Returns the deciding part's index too.

    >>> a, b = Finding("supported", "a", supported=0.9), Finding("not_stated", "b", supported=0.3)
    >>> i, f = of_parts([a, b]); i, f.verdict, f.supported
    (1, 'not_stated', 0.3)
    >>> of_parts([b, Finding("contradicted", "c", supported=0.4)])[0]
    1
    """
    if not found:
        raise ValueError("of_parts needs the finding of at least one part")
    p = [f.supported if f.supported is not None else float(f.verdict == "supported") for f in found]
    weakest = min(range(len(found)), key=lambda i: p[i])
    failing = sorted(
        (i for i, f in enumerate(found) if f.verdict != "supported"), key=lambda i: p[i]
    )
    against = [i for i, f in enumerate(found) if f.verdict == "contradicted"]
    pick = (against or failing or [weakest])[0]
    return pick, replace(found[pick], supported=p[weakest])


def outranked(found: Sequence[Finding]) -> list[Finding]:
    """``found`` (one text's findings, one per evidence) with each contradiction (or asked edit)
    set aside
    where a more relevant evidence supports the same sentence: the sentence is wrong where a
    relevant evidence contradicts it, not where a page that only shares its words does. The
    set-aside finding asks for no edit and says why first; its verdict becomes not stated.

    >>> ev = lambda i, r: Evidence(i, "", i, "index", None, "q", r)
    >>> mars = Finding("supported", "a", (0, 9), evidence=ev("Mars", 0.73))
    >>> mercury = Finding("contradicted", "b", (0, 9), opens=True, evidence=ev("Mercury", 0.36))
    >>> settled = outranked([mars, mercury])
    >>> settled[1].opens, settled[1].verdict, settled[1].reason
    (False, 'not_stated', 'set aside: more relevant evidence (Mars, 0.73) supports it; b')
    >>> outranked([mercury, replace(mars, evidence=ev("Mars", 0.2))])[0].opens
    True
    """
    out = []
    for f in found:
        rel = f.evidence.relevance if f.evidence is not None else None
        if (f.opens or f.verdict == "contradicted") and f.span is not None and rel is not None:
            better = [
                g.evidence
                for g in found
                if g.verdict == "supported"
                and g.span == f.span
                and g.evidence is not None
                and g.evidence.relevance > rel
            ]
            if better:
                e = max(better, key=lambda x: x.relevance)
                why = (
                    f"set aside: more relevant evidence ({e.title}, {e.relevance:.2f}) supports it"
                )
                f = replace(
                    f, verdict="not_stated", opens=False, proposal=None, reason=f"{why}; {f.reason}"
                )
        out.append(f)
    return out


def _combine(found: Sequence[Finding]) -> Finding:
    for verdict in ("contradicted", "supported"):
        hits = [f for f in found if f.verdict == verdict]
        if hits:
            opened = [f for f in hits if f.opens]
            return (
                (opened or hits)[0]
                if verdict == "contradicted"
                else max(hits, key=lambda f: f.supported or 0.0)
            )
    return found[0]


JudgeFactory = Callable[..., Judge]

_JUDGES: Registry[JudgeFactory] = Registry("judge", "judge.type")

register = _JUDGES.register
"""Make ``factory(cfg, attribution=..., llm=..., parser=...)`` buildable as
``judge.type=name`` (``cfg``: the whole ``PipelineConfig``; ``attribution``/``llm`` are loaders)."""

available = _JUDGES.available


def build(
    cfg: Any,
    attribution: Callable[[], Any],
    llm: Callable[[], Any],
    parser: Any,
) -> Judge:
    """The judge of ``cfg.judge.type``; its models load on first use."""
    factory = _JUDGES.get(cfg.judge.type)
    return factory(cfg, attribution=attribution, llm=llm, parser=parser)
