"""Frozen records of the editing pipeline."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class QueryEvidence:
    """One query and the evidence kept for it (top J snippets, best first)."""

    query: Query
    evidence: tuple[Evidence, ...]
    hits: tuple[Hit, ...] = ()
