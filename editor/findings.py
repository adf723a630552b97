"""The judge's records: the words it names in a sentence (``Flag``), its say on a sentence
(``Finding``), on an edit (``Decision``) and a revision it writes itself (``Proposal``), in the
words of ``editor.verdicts``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from editor.types import Evidence, evidence_text
from editor.verdicts import CONTRADICTED, SUPPORTED, Label, Verdict


@dataclass(frozen=True)
class Flag:
    """Words of the judged text (``[start, end)`` of ``Step.before``) the evidence contradicts
    (``contradicted``) or does not state (``not_supported``); ``fix``: the evidence's words for
    that slot, where it states them."""

    start: int
    end: int
    kind: Label
    fix: str | None = None

    @property
    def contradicts(self) -> bool:
        """Whether the evidence states these words otherwise (else it only does not state
        them)."""
        return self.kind == CONTRADICTED


Applicability = Literal["safe", "unsafe", "display"]


@dataclass(frozen=True)
class Proposal:
    """A revision of the judged sentence the judge proposes itself (the span judge copies the
    evidence's words in), with its own decision on it."""

    text: str
    reason: str
    decision: Decision


@dataclass(frozen=True)
class Finding:
    """The judge's say on one sentence of a text against one evidence.

    ``verdict``: supported | contradicted | not_stated | not_checkable (no sentence of the text
    is about the query); ``opens``: whether the judge asks for an edit (a contradiction it can
    name; one it cannot fix is reported, not edited); ``span``: the judged sentence in the text;
    ``supported``/``contradicted``: the probabilities behind it; ``rule``: what found a
    contradiction (``Step.rule``); ``flags``: the words named, with the evidence's words for
    them; ``proposal``: the judge's own revision, where it writes one; ``evidence``: what it
    read."""

    verdict: Verdict
    reason: str
    span: tuple[int, int] | None = None
    supported: float | None = None
    contradicted: float | None = None
    rule: str | None = None
    flags: tuple[Flag, ...] = ()
    opens: bool = False
    proposal: Proposal | None = None
    evidence: Evidence | None = None
    parts: tuple[Finding, ...] = ()
    """the findings a combined judge read this one from (rules, span), for its ``choose``"""
    unsure: str | None = None
    """why an edit this finding asks for may only be suggested, however well it is verified"""

    @property
    def agrees(self) -> bool | None:
        """``Step.agrees``: True supported, False where an edit is asked, else None."""
        if self.verdict == SUPPORTED:
            return True
        return False if self.opens else None

    @property
    def evidence_text(self) -> str:
        return evidence_text(self.evidence) if self.evidence is not None else ""

    def named(self) -> tuple[Flag, ...]:
        """The flags, or for an asked edit that names no words its judged sentence.

        >>> Finding("contradicted", "NLI", (4, 20), opens=True).named()
        (Flag(start=4, end=20, kind='contradicted', fix=None),)
        >>> Finding("supported", "NLI", (4, 20)).named()
        ()
        """
        if self.flags or not self.opens or self.span is None:
            return self.flags
        return (Flag(self.span[0], self.span[1], CONTRADICTED),)


@dataclass(frozen=True)
class Decision:
    """The judge's say on an edit: ``applicability`` ``safe`` (applied), ``unsafe`` (the judge
    is not sure: suggested, applied only with ``judge.apply_unsure``) or ``display`` (not a
    fix: the words stay named, nothing is suggested); why; and the judges that proved an
    accepted revision (``proof``: ``nli``, ``slot``, ``statement`` joined by ``+``, or ``reader``)."""

    applicability: Applicability
    reason: str
    proof: str | None = None

    @property
    def accepted(self) -> bool:
        return self.applicability == "safe"
