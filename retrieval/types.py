"""Frozen records passed between retrieval stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Document:
    """One source document. ``headings`` are character offsets where a new section starts."""

    id: str
    title: str
    text: str
    url: str | None = None
    source: str = ""
    headings: tuple[int, ...] = ()


@dataclass(frozen=True)
class Snippet:
    """A window of consecutive sentences of one document, with its character span."""

    id: str
    doc_id: str
    title: str
    text: str
    start: int
    end: int
    url: str | None = None
    source: str = ""
    fetched_at: str | None = None
    """when a web page was fetched (ISO 8601 UTC); None for a local corpus"""


@dataclass(frozen=True)
class Hit:
    """A snippet found by a search, with the score of the stage that produced it.

    ``score`` is what the ranking used; ``relevance`` is the calibrated 0-1 cross-encoder
    relevance when the hit was reranked, else None; ``scores`` the per-retriever scores.
    """

    snippet: Snippet
    score: float
    rank: int
    retriever: str
    relevance: float | None = None
    scores: dict[str, float] = field(default_factory=dict, compare=False)
    row: int = -1  # passage row in the index it came from


class Retriever(Protocol):
    """What research asks of a corpus: a local ``Index``, the web (``retrieval.web``) or both."""

    def search_batch(
        self, queries: list[str], k: int = 10, search: Any = None
    ) -> list[list[Hit]]: ...

    def document_snippets(self, hit: Hit) -> list[Snippet]: ...
