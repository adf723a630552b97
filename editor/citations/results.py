"""What ``purr check`` returns: each cited source's verdict on a sentence, each sentence's check,
the whole text's result, and ALCE's citation precision and recall."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from editor.citations.document import CitedDocument
from editor.citations.mafe import Mafe
from editor.verdicts import (
    CONTRADICTED,
    CONTRADICTS,
    NOT_SUPPORTED,
    OUTCOMES,
    SUPPORTED,
    SUPPORTS,
    CitedLabel,
)

if TYPE_CHECKING:
    from editor.citations.sources import Source


@dataclass(frozen=True)
class SourceLabel:
    """The verifier on one (cited source, sentence) pair."""

    source_id: str
    label: CitedLabel
    p_supported: float
    span: str
    reason: str
    values: tuple[str, str] | None = None
    """for a contradiction that names a slot: (what the claim states, what the source states)"""

    def to_json(self) -> dict[str, Any]:
        return {
            "source_id": self.source_id,
            "label": self.label,
            "p_supported": round(self.p_supported, 4),
            "span": self.span,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class SentenceCheck:
    """One sentence: its citations, their verdicts, whether they support it, its outcome."""

    text: str
    claim: str
    citations: tuple[str, ...]
    outcome: str
    supported: bool
    verdicts: tuple[SourceLabel, ...]
    precise: tuple[bool, ...]
    """per citation: not irrelevant in ALCE's sense"""
    standalone: str = ""
    """the claim made stand-alone, as the verifier judged it"""

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "citations": list(self.citations),
            "outcome": self.outcome,
            SUPPORTED: self.supported,
            "verdicts": [v.to_json() for v in self.verdicts],
        }


@dataclass(frozen=True)
class CheckResult:
    """``Pipeline.check``: every sentence's check and the text's citation scores."""

    text: str
    sentences: tuple[SentenceCheck, ...]
    citation_precision: float | None
    citation_recall: float | None
    unknown_markers: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    status: str = "checked"
    """``checked``, or ``degraded`` when the verifier failed (the reason in ``warnings``)"""
    mafe: Mafe | None = None
    """QA-based factuality against the sources (``Pipeline.check(..., qa=True)``)"""

    def to_json(self) -> dict[str, Any]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 4)

        return {
            "text": self.text,
            "sentences": [s.to_json() for s in self.sentences],
            "citation_precision": r(self.citation_precision),
            "citation_recall": r(self.citation_recall),
            "unknown_markers": list(self.unknown_markers),
            "outcomes": {o: sum(s.outcome == o for s in self.sentences) for o in OUTCOMES},
            "status": self.status,
            "warnings": list(self.warnings),
            "mafe": None if self.mafe is None else self.mafe.to_json(),
            "findings": self.findings(),
        }

    def findings(self) -> list[dict[str, Any]]:
        """What the sources flag, with character offsets of ``text``: for a sentence its
        citations do not support, each source that does not support it (the claim's words
        where the verdict names the slot and the source's value, else the whole sentence); a
        claim with no citation as ``not_supported`` by no source.

        >>> v = SourceLabel("1", "contradicts", 0.1, "", "it says 1889", ("1887", "1889"))
        >>> s = SentenceCheck("Built in 1887 [1].", "Built in 1887.", ("1",),
        ...                   "citation_not_supporting", False, (v,), (False,))
        >>> f, = CheckResult("Hi. Built in 1887 [1].", (s,), 0.0, 0.0, ()).findings()
        >>> f["start"], f["end"], f["text"], f["fix"]
        (13, 17, '1887', '1889')
        """
        out: list[dict[str, Any]] = []
        cursor = 0
        for s in self.sentences:
            at = self.text.find(s.text, cursor)
            start = at if at >= 0 else None
            if at >= 0:
                cursor = at + len(s.text)
            whole = (start, None if start is None else start + len(s.text), s.text)
            if s.outcome == "needs_citation":
                out.append(_finding(*whole, NOT_SUPPORTED, None, None, "no citation"))
            if s.outcome != "citation_not_supporting":
                continue
            for v in s.verdicts:
                if v.label == SUPPORTS:
                    continue
                kind = CONTRADICTED if v.label == CONTRADICTS else NOT_SUPPORTED
                where, fix = whole, None
                if v.values and v.values[0] and v.values[0] in s.text and start is not None:
                    a = start + s.text.index(v.values[0])
                    where, fix = (a, a + len(v.values[0]), v.values[0]), v.values[1] or None
                out.append(_finding(*where, kind, v.source_id, fix, v.reason))
        return out

    @classmethod
    def degraded(cls, text: str, sources: Sequence[Source], reason: str) -> CheckResult:
        """The text's sentences and citations, unchecked, with the reason."""
        doc = CitedDocument.parse(text, [s.id for s in sources])
        sentences = tuple(
            SentenceCheck(s.text, s.claim, s.citations, "unchecked", False, (), ())
            for s in doc.sentences
        )
        unknown = tuple(doc.unknown_markers(s.id for s in sources))
        return cls(text, sentences, None, None, unknown, (reason,), "degraded")


def citation_scores(
    checks: Sequence[tuple[bool, bool, Sequence[bool]]],
) -> tuple[float | None, float | None]:
    """ALCE's citation (precision, recall) from, per sentence, (needs support, supported by its
    citations together, each citation's precision). Recall: the share of sentences that need
    support whose citations support them; precision: the share of all citations that are not
    irrelevant (a citation of an unsupported sentence is not precise). None where undefined.

    >>> citation_scores([(True, True, [True, False]), (True, False, []), (False, False, [])])
    (0.5, 0.5)
    """
    need = [c for c in checks if c[0]]
    recall = sum(c[1] for c in need) / len(need) if need else None
    cites = [p for c in checks for p in c[2]]
    precision = sum(cites) / len(cites) if cites else None
    return precision, recall


def _finding(start, end, text, kind, source_id, fix, reason) -> dict[str, Any]:
    keys = ("start", "end", "text", "kind", "source_id", "fix", "reason")
    return dict(zip(keys, (start, end, text, kind, source_id, fix, reason), strict=True))
