"""The web as a retriever: the same two calls research makes of a local index.

``search_batch(queries, k, search)`` searches the provider, fetches the result pages, extracts
their main text and cuts it into windows; each page's windows are first-stage hits in the
provider's order (a page's first window first), and ``document_snippets(hit)`` gives all the
windows of a hit's page, so the cross-encoder ranks them as it ranks a local document's. A page
that cannot be fetched or has no main text is represented by the provider's snippet, marked
``web-snippet`` in its source, with the reason in ``failures``.

``CombinedRetriever`` searches a local index and the web and fuses the two ranked lists by
reciprocal rank (``research.source=both``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from retrieval.config import ChunkingConfig, SearchConfig
from retrieval.types import Hit, Snippet
from retrieval.web.extract import PageText, extract_main_text, page_id, page_snippets
from retrieval.web.fetch import PageFetcher
from retrieval.web.providers import WebResult, WebSearch


class WebRetriever:
    """Search + fetch + extract behind ``search_batch`` and ``document_snippets``."""

    def __init__(
        self,
        provider: WebSearch,
        fetcher: PageFetcher | None,
        chunking: ChunkingConfig | None = None,
        results: int = 5,
    ) -> None:
        self.provider = provider
        self.fetcher = fetcher
        self.chunking = chunking or ChunkingConfig()
        self.results = results
        self._pages: dict[str, list[Snippet]] = {}
        self._lock = threading.Lock()
        self.failures: list[str] = []
        """why a page fell back to its snippet (``URL: reason``), for the result's warnings"""

    def search_batch(
        self, queries: Sequence[str], k: int = 10, search: SearchConfig | None = None
    ) -> list[list[Hit]]:
        return [self.search(q, k) for q in queries]

    def search(self, query: str, k: int = 10) -> list[Hit]:
        from retrieval.web.cache import BudgetSpent, CacheMiss

        try:
            results = self.provider.search(query, n=self.results)
        except (BudgetSpent, CacheMiss) as e:  # research goes on with what it has found
            with self._lock:
                self.failures.append(str(e))
            return []
        pages = self._pages_of(results)
        hits: list[Hit] = []
        for result, snippets in zip(results, pages, strict=True):
            for n, s in enumerate(snippets):
                score = 1.0 / (1 + result.rank) - n * 1e-3
                hits.append(Hit(s, score, len(hits), f"web:{self.provider.name}"))
                if len(hits) >= k:
                    return hits
        return hits

    def _pages_of(self, results: Sequence[WebResult]) -> list[list[Snippet]]:
        todo = [r for r in results if page_id(r.url) not in self._pages]
        fetched = self.fetcher.fetch_many([r.url for r in todo]) if self.fetcher and todo else []
        by_url = {r.url: p for r, p in zip(todo, fetched, strict=True)}
        for r in todo:
            page = by_url.get(r.url)
            snippets: list[Snippet] = []
            reason = "page fetching is off (web.fetch=false)"
            if page is not None and page.body is not None:
                if page.content_type == "text/plain":
                    title, text = r.title, page.body
                else:
                    title, text = extract_main_text(page.body, page.final_url)
                snippets = page_snippets(
                    PageText(page.final_url, title or r.title, text, page.fetched_at),
                    self.chunking,
                    source=f"web:{self.provider.name}",
                )
                reason = "no main text found"
            elif page is not None:
                reason = page.error or "not fetched"
            if not snippets:
                snippets = [_snippet_hit(r)] if r.snippet.strip() else []
                with self._lock:
                    self.failures.append(f"{r.url}: {reason}; the provider's snippet is used")
            with self._lock:
                self._pages[page_id(r.url)] = snippets
        return [self._pages.get(page_id(r.url), []) for r in results]

    def document_snippets(self, hit: Hit) -> list[Snippet]:
        """Every window of the page a hit came from, in page order."""
        return list(self._pages.get(hit.snippet.doc_id, [hit.snippet]))

    def drain_failures(self) -> list[str]:
        """The failures recorded since the last call (for a result's warnings)."""
        with self._lock:
            out, self.failures = self.failures, []
        return out


def _snippet_hit(r: WebResult) -> Snippet:
    doc = page_id(r.url)
    return Snippet(f"{doc}:s", doc, r.title, r.snippet, 0, len(r.snippet), r.url, "web-snippet")


class CombinedRetriever:
    """A local index and the web, fused by reciprocal rank."""

    def __init__(self, index: Any, web: WebRetriever, rrf_k: int = 60) -> None:
        self.index = index
        self.web = web
        self.rrf_k = rrf_k

    def drain_failures(self) -> list[str]:
        return self.web.drain_failures()

    def search_batch(
        self, queries: Sequence[str], k: int = 10, search: SearchConfig | None = None
    ) -> list[list[Hit]]:
        local = self.index.search_batch(list(queries), k, search)
        web = self.web.search_batch(queries, k, search)
        out = []
        for a, b in zip(local, web, strict=True):
            scored: dict[str, tuple[float, Hit]] = {}
            for hits in (a, b):
                for rank, h in enumerate(hits):
                    s = 1.0 / (self.rrf_k + rank + 1)
                    prev = scored.get(h.snippet.id)
                    scored[h.snippet.id] = (s + (prev[0] if prev else 0.0), h)
            ranked = sorted(scored.values(), key=lambda t: -t[0])[:k]
            out.append(
                [
                    Hit(h.snippet, s, n, h.retriever, h.relevance, h.scores, h.row)
                    for n, (s, h) in enumerate(ranked)
                ]
            )
        return out

    def document_snippets(self, hit: Hit) -> list[Snippet]:
        if hit.retriever.startswith("web"):
            return self.web.document_snippets(hit)
        return self.index.document_snippets(hit)
