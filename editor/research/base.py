"""The research stage's records: what a research run returns."""

from __future__ import annotations

from dataclasses import dataclass

from editor.types import QueryEvidence


@dataclass(frozen=True)
class ResearchTimings:
    """Milliseconds spent in each part of one research call."""

    querygen_ms: float
    retrieval_ms: float
    rerank_ms: float


@dataclass(frozen=True)
class ResearchRun:
    """One research call: the queries of each text with their evidence, and where time went."""

    results: list[list[QueryEvidence]]
    timings: ResearchTimings
