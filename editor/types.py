"""Frozen records of the editing pipeline."""

from __future__ import annotations

from dataclasses import dataclass

from editor.verdicts import LABELS, Reported
from retrieval.types import Hit


@dataclass(frozen=True)
class Query:
    """A verification question about the passage.

    ``sentence`` is the (decontextualised) sentence it checks, ``focus`` the entity or number
    it asks about (entity generator), ``generator`` which generator produced it.
    """

    text: str
    generator: str
    sentence: str | None = None
    focus: str | None = None


@dataclass(frozen=True)
class Evidence:
    """A ranked snippet kept as evidence for a query (the result contract's evidence item)."""

    id: str
    text: str
    title: str
    source: str
    url: str | None
    query: str
    relevance: float
    fetched_at: str | None = None
    """when its web page was fetched (ISO 8601 UTC); None for a local corpus or given text"""


def evidence_text(e: Evidence) -> str:
    """The evidence as a premise: its title first when the snippet does not start with it.

    >>> evidence_text(Evidence("d-0", "It opened in 1889.", "Eiffel Tower", "wiki", None, "", 1.0))
    'Eiffel Tower. It opened in 1889.'
    """
    if e.title and not e.text.startswith(e.title):
        return f"{e.title}. {e.text}"
    return e.text


@dataclass(frozen=True)
class QueryEvidence:
    """One query and the evidence kept for it (top J snippets, best first)."""

    query: Query
    evidence: tuple[Evidence, ...]
    hits: tuple[Hit, ...] = ()


@dataclass(frozen=True)
class EntailmentScores:
    """What an attribution (NLI) model says about a premise (evidence) and a hypothesis (claim).

    For one model window the three numbers are a distribution (they sum to 1). Two-way models
    (entailed vs not, e.g. TRUE) have no contradiction class: ``contradicted`` is 0.0 and
    ``not_supported`` is 1 - ``supported``. When a long premise was scored in ``chunks`` > 1
    windows, each number is aggregated on its own: ``supported`` and ``contradicted`` are the
    maxima over windows (one window that entails or contradicts is enough), ``not_supported``
    the minimum, so the three need not sum to 1 (for two-way models they still do).
    """

    supported: float
    contradicted: float
    not_supported: float
    chunks: int = 1

    def __post_init__(self) -> None:
        for name in LABELS:
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:  # also False for NaN
                raise ValueError(f"EntailmentScores.{name} must be a probability, got {value!r}")
        if self.chunks < 1:
            raise ValueError(f"EntailmentScores.chunks must be >= 1, got {self.chunks}")


@dataclass(frozen=True)
class PartAttribution:
    """One atomic part of a decomposed sentence (``editor.text.parts``) in an auto-AIS record:
    its standalone ``text``, the ``start``/``end`` span in the sentence of the words it asserts,
    its ``kind``, and its own attribution, best (or refuting) evidence and verdict."""

    text: str
    start: int
    end: int
    kind: str
    attribution: float
    evidence_index: int | None
    verdict: Reported


@dataclass(frozen=True)
class SentenceAttribution:
    """One sentence of a passage in an auto-AIS report.

    ``applicable`` is False for sentences that state nothing checkable (questions, greetings,
    opinions about the conversation); those carry ``attribution=None``, ``evidence_index=None``
    and ``attributable=None``. Otherwise ``attribution`` is max over the evidence of
    P(evidence entails ``decontextualized``), ``evidence_index`` the position of that evidence
    in the list scored (None when the list was empty, attribution 0.0) and ``attributable``
    whether ``attribution`` reached the threshold. ``verdict``: ``supported`` (attributable),
    ``contradicted`` (an evidence contradicts it by ``editor.policy.refutes``:
    the verifier's slot check names a date, number, name or role the evidence states otherwise,
    or P(contradicted) >= 0.7 and above its P(supported); ``evidence_index`` then points at that
    evidence) or ``unverified`` (neither);
    None for sentences that are not applicable. Decomposed (``parts`` not empty: a sentence of
    several atomic facts), the sentence's attribution is the smallest of its parts' (it is
    supported only when every part is), its evidence that of the weakest part (or of a refuted
    one), and the parts say which fails.
    """

    text: str
    decontextualized: str
    applicable: bool
    attribution: float | None
    evidence_index: int | None
    attributable: bool | None = None
    verdict: Reported | None = None
    parts: tuple[PartAttribution, ...] = ()


@dataclass(frozen=True)
class PassageAttribution:
    """auto-AIS of a passage: Attr(y, A) = mean over applicable sentences of their attribution.

    ``attribution`` is None when no sentence is applicable (an empty passage, or only
    questions and greetings): there is nothing to attribute, which is neither 0 nor 1.
    """

    sentences: tuple[SentenceAttribution, ...]
    attribution: float | None
    threshold: float
    """the judge's attribution point (``editor.policy.ATTRIBUTED_MIN`` by default)"""

    @property
    def applicable(self) -> tuple[SentenceAttribution, ...]:
        """The sentences that were scored."""
        return tuple(s for s in self.sentences if s.applicable)

    @property
    def attributable_share(self) -> float | None:
        """Share of applicable sentences whose attribution reached ``threshold`` (binary AIS)."""
        scored = self.applicable
        return sum(bool(s.attributable) for s in scored) / len(scored) if scored else None
