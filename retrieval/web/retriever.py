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
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from retrieval.config import ChunkingConfig, SearchConfig
from retrieval.types import Hit, Snippet
from retrieval.web.extract import PageText, extract_main_text, page_id, page_snippets
from retrieval.web.fetch import PageFetcher
from retrieval.web.providers import WebResult, WebSearch

MAX_PAGES = 512
"""Pages whose windows a ``WebRetriever`` keeps in memory."""


class WebRetriever:
    """Search + fetch + extract behind ``search_batch`` and ``document_snippets``."""

    def __init__(
        self,
        provider: WebSearch,
        fetcher: PageFetcher | None,
        chunking: ChunkingConfig | None = None,
        results: int = 5,
        search_concurrency: int = 4,
    ) -> None:
        self.provider = provider
        self.fetcher = fetcher
        self.chunking = chunking or ChunkingConfig()
        self.results = results
        self.search_concurrency = max(1, search_concurrency)
        """queries searched at once (1 where a budget must be spent in query order)"""
        self._pages: OrderedDict[str, list[Snippet]] = OrderedDict()
        """the windows of pages seen, most recent last (at most ``MAX_PAGES``: a long-running
        service does not grow without end)"""
        self._lock = threading.Lock()
        self._local = threading.local()  # failures and timings of the calling thread's research

    @property
    def failures(self) -> list[str]:
        """Why a page fell back to its snippet (``URL: reason``), budgets spent and cache
        misses, for the result's warnings: this thread's, since its last ``drain_failures``
        (a service's concurrent edits each see their own)."""
        if not hasattr(self._local, "failures"):
            self._local.failures = []
        return self._local.failures

    @property
    def timings_ms(self) -> dict[str, float]:
        """Milliseconds searching, fetching and extracting: this thread's, since its last
        ``drain_timings``."""
        if not hasattr(self._local, "timings"):
            self._local.timings = {}
        return self._local.timings

    def search_batch(
        self, queries: Sequence[str], k: int = 10, search: SearchConfig | None = None
    ) -> list[list[Hit]]:
        """Every query searched (``search_concurrency`` at once), then every result page not
        seen yet fetched in one batch (the fetcher's concurrency), extracted and windowed."""
        t = time.perf_counter()
        workers = min(self.search_concurrency, len(queries))
        if workers > 1:
            with ThreadPoolExecutor(workers, thread_name_prefix="purr-search") as pool:
                found = list(pool.map(self._search_one, queries))
        else:
            found = [self._search_one(q) for q in queries]
        self._add_time("web_search", t)
        self.failures.extend(why for _, why in found if why)  # in query order
        unique = list({r.url: r for results, _ in found for r in results}.values())
        self._pages_of(unique)
        return [self._hits(results, k) for results, _ in found]

    def search(self, query: str, k: int = 10) -> list[Hit]:
        return self.search_batch([query], k)[0]

    def _search_one(self, query: str) -> tuple[list[WebResult], str | None]:
        """The results of one query, and what to warn about them (None: nothing)."""
        from retrieval.web.cache import BudgetSpent, CacheMiss

        try:
            results = self.provider.search(query, n=self.results)
        except (BudgetSpent, CacheMiss) as e:  # research goes on with what it has found
            return [], str(e)
        notes = getattr(results, "notes", ())
        why = f"{self.provider.name}: '{query}': {'; '.join(notes)}" if notes else None
        return results, why

    def _hits(self, results: Sequence[WebResult], k: int) -> list[Hit]:
        hits: list[Hit] = []
        for result in results:
            for n, s in enumerate(self._pages.get(page_id(result.url), [])):
                score = 1.0 / (1 + result.rank) - n * 1e-3
                hits.append(Hit(s, score, len(hits), f"web:{self.provider.name}"))
                if len(hits) >= k:
                    return hits
        return hits

    def _add_time(self, stage: str, since: float) -> None:
        ms = (time.perf_counter() - since) * 1000
        self.timings_ms[stage] = self.timings_ms.get(stage, 0.0) + ms

    def forget_pages(self) -> None:
        """Drop the pages kept in memory (the next search fetches them again, or asks the
        cache)."""
        with self._lock:
            self._pages.clear()

    def drain_timings(self) -> dict[str, float]:
        """The milliseconds by web stage (``web_search``, ``web_fetch``, ``web_extract``)
        since the last call."""
        out, self._local.timings = self.timings_ms, {}
        return out

    def _pages_of(self, results: Sequence[WebResult]) -> list[list[Snippet]]:
        with self._lock:
            for r in results:  # pages asked for again are the most recent
                if page_id(r.url) in self._pages:
                    self._pages.move_to_end(page_id(r.url))
        todo = [r for r in results if page_id(r.url) not in self._pages]
        t = time.perf_counter()
        fetched = self.fetcher.fetch_many([r.url for r in todo]) if self.fetcher and todo else []
        if fetched:
            self._add_time("web_fetch", t)
        t = time.perf_counter()
        by_url = {r.url: p for r, p in zip(todo, fetched, strict=True)} if fetched else {}
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
                self.failures.append(f"{r.url}: {reason}; the provider's snippet is used")
            with self._lock:
                self._pages[page_id(r.url)] = snippets
                while len(self._pages) > MAX_PAGES:
                    self._pages.popitem(last=False)
        if todo:
            self._add_time("web_extract", t)
        return [self._pages.get(page_id(r.url), []) for r in results]

    def document_snippets(self, hit: Hit) -> list[Snippet]:
        """Every window of the page a hit came from, in page order."""
        return list(self._pages.get(hit.snippet.doc_id, [hit.snippet]))

    def drain_failures(self) -> list[str]:
        """The failures recorded since the last call (for a result's warnings)."""
        out, self._local.failures = self.failures, []
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

    def drain_timings(self) -> dict[str, float]:
        return self.web.drain_timings()

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

    def named(self, text: str, limit: int = 3) -> list[Hit]:
        """The local index's pages ``text`` names (``Index.named``); none for the web."""
        named = getattr(self.index, "named", None)
        return named(text, limit) if named is not None else []

    def document_snippets(self, hit: Hit) -> list[Snippet]:
        if hit.retriever.startswith("web"):
            return self.web.document_snippets(hit)
        return self.index.document_snippets(hit)
