"""The research stage: questions about the passage, K documents per question, snippets ranked
by the cross-encoder, the top J kept per question (RARR section 3.1).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from itertools import zip_longest
from typing import Any

from editor.config import ResearchConfig
from editor.research.base import ResearchRun, ResearchTimings
from editor.research.cache import TenantCache
from editor.research.hops import MultiHop, hop_query
from editor.research.querygen.base import QueryGenerator
from editor.text.words import is_question
from editor.types import Evidence, Query, QueryEvidence
from retrieval.config import SearchConfig
from retrieval.rerank import Reranker
from retrieval.types import Hit, Retriever


class Researcher:
    """Composes a query generator, a retriever (an index, the web, or both) and an optional
    reranker, and with ``hops`` researches a question that names its subject by a description
    in hops (``editor.research.hops``). It keeps no state between calls, so worker threads can
    share one."""

    def __init__(
        self,
        index: Retriever,
        querygen: QueryGenerator,
        reranker: Reranker | None,
        cfg: ResearchConfig | None = None,
        search: SearchConfig | None = None,
        hops: MultiHop | None = None,
    ):
        self.index = index
        self.hops = hops
        self.querygen = querygen
        self.reranker = reranker
        self.cfg = cfg or ResearchConfig()
        self.search = search or SearchConfig()

    def research(
        self, text: str, context: str | None = None, cache: TenantCache | None = None
    ) -> list[QueryEvidence]:
        """Queries for ``text`` (and the dialogue ``context``) with their evidence; a query
        ``cache`` holds is not researched again (``editor.research.cache``)."""
        return self.run([text], [context], cache).results[0]

    def run(
        self,
        texts: list[str],
        contexts: Sequence[str | None] | None = None,
        cache: TenantCache | None = None,
    ) -> ResearchRun:
        """``research`` of each text (with its context), with the milliseconds spent generating queries, searching and
        reranking, summed over the texts."""
        ctx = list(contexts) if contexts is not None else [None] * len(texts)
        if len(ctx) != len(texts):
            raise ValueError(
                f"got {len(texts)} texts but {len(ctx)} contexts; pass one context (or None) per text"
            )
        t0 = time.perf_counter()
        queries = [
            _with_question(qs, c)
            for qs, c in zip(self.querygen.generate_batch(list(texts), ctx), ctx, strict=True)
        ]
        t1 = time.perf_counter()
        found = [self._research_queries(qs, cache) for qs in queries]
        if self.hops is not None:
            for i, c in enumerate(ctx):
                if is_question(c):
                    assert c is not None
                    hops, ms = self._hops(" ".join(c.split()), cache)
                    found[i] = (hops + found[i][0], found[i][1] + ms)
        t2 = time.perf_counter()
        rerank_ms = sum(ms for _, ms in found)
        timings = ResearchTimings((t1 - t0) * 1000, (t2 - t1) * 1000 - rerank_ms, rerank_ms)
        return ResearchRun([results for results, _ in found], timings)

    @contextmanager
    def web_notes(self, notes: dict[str, Any]) -> Iterator[None]:
        """Collect into ``notes`` what the web retriever records on this thread during the
        block (``failures``; ``timings``: ``web_search``, ``web_fetch``, ``web_extract``)."""
        web = self.index
        drain_failures = getattr(web, "drain_failures", None)
        drain_timings = getattr(web, "drain_timings", None)
        if drain_failures is None or drain_timings is None:  # a local index records none
            yield
            return
        drain_failures(), drain_timings()  # what an earlier call on this thread left
        try:
            yield
        finally:
            notes["failures"], notes["timings"] = drain_failures(), drain_timings()

    def research_queries(self, queries: list[Query]) -> list[QueryEvidence]:
        """Evidence for given queries; a snippet kept for several queries appears once per query
        but with the same evidence id (see :func:`unique_evidence`)."""
        return self._research_queries(queries)[0]

    def _research_queries(
        self, queries: list[Query], cache: TenantCache | None = None
    ) -> tuple[list[QueryEvidence], float]:
        """The evidence of each query (from ``cache`` where it holds the query), and the
        milliseconds spent reranking."""
        if cache is None:
            return self._search(queries)
        held = [cache.get(q) for q in queries]
        todo = [q for q, h in zip(queries, held, strict=True) if h is None]
        fresh, ms = self._search(todo)
        for q, qe in zip(todo, fresh, strict=True):
            cache.put(q, qe)
        it = iter(fresh)
        return [h if h is not None else next(it) for h in held], ms

    def _search(self, queries: list[Query]) -> tuple[list[QueryEvidence], float]:
        if not queries:
            return [], 0.0
        first_stage = self.index.search_batch(
            [q.text for q in queries], self.search.candidates, self.search
        )
        named = getattr(self.index, "named", None) if self.cfg.subject_pages else None
        candidates = [
            self._candidates(
                hits, named(query.sentence or query.text, self.cfg.subject_pages) if named else []
            )
            for query, hits in zip(queries, first_stage, strict=True)
        ]
        t = time.perf_counter()
        if self.reranker is None:
            ranked_all = [sorted(c, key=lambda h: -h.score) for c in candidates]
        else:  # every query's candidates in one call
            ranked_all = self.reranker.rerank_batch([q.text for q in queries], candidates)
        rerank_ms = (time.perf_counter() - t) * 1000
        out = []
        for query, ranked in zip(queries, ranked_all, strict=True):
            kept = [
                h for h in ranked if h.relevance is None or h.relevance >= self.cfg.min_relevance
            ]
            kept = kept[: self.cfg.j_snippets]
            out.append(
                QueryEvidence(query, tuple(_evidence(query, h) for h in kept), tuple(ranked))
            )
        return out, rerank_ms

    def _hops(
        self, question: str, cache: TenantCache | None = None
    ) -> tuple[list[QueryEvidence], float]:
        """Multi-hop research of a question that names its subject by a description
        (``editor.research.hops``): hop 2 (the question about the bridge entity) then hop 1
        (the description); for a comparison question, a query per side; nothing for other
        questions; and the milliseconds spent reranking."""
        assert self.hops is not None
        sides = self.hops.comparison(question)
        if sides:
            return self._research_queries([Query(q, "comparison") for q in sides], cache)
        b = self.hops.bridge(question)
        if b is None:
            return [], 0.0
        (first,), ms = self._research_queries([Query(b.description, "hop 1")], cache)
        entity = self.hops.entity(b, first.evidence)
        first = replace(first, query=replace(first.query, focus=entity))
        if entity is None:
            return [first], ms
        (second,), ms2 = self._research_queries(
            [Query(hop_query(question, b, entity), "hop 2", focus=entity)], cache
        )
        return [second, first], ms + ms2

    def _candidates(self, hits: list[Hit], subject: Sequence[Hit] = ()) -> list[Hit]:
        """Snippets of the pages the sentence names (``subject``) and of the K best documents:
        each document's windows, best first-stage first."""
        docs: dict[str, list[Hit]] = {}
        for h in hits:
            if h.snippet.doc_id not in docs:
                if len(docs) >= self.cfg.k_documents:
                    continue
                docs[h.snippet.doc_id] = []
            docs[h.snippet.doc_id].append(h)
        for h in subject:  # a named page joins with its first-stage hits, else by its title
            d = h.snippet.doc_id
            docs.setdefault(d, [x for x in hits if x.snippet.doc_id == d] or [h])
        if self.reranker is None:  # nothing can rank unseen windows: keep first-stage hits only
            return [
                h for doc_hits in docs.values() for h in doc_hits[: self.cfg.max_snippets_per_doc]
            ]
        per_doc: list[list[Hit]] = []
        for doc_hits in docs.values():
            seen = {h.snippet.id for h in doc_hits}
            # Windows of the document the first stage did not return still compete in reranking.
            rest = [s for s in self.index.document_snippets(doc_hits[0]) if s.id not in seen]
            filler = [Hit(s, 0.0, -1, "document") for s in rest]
            per_doc.append((doc_hits + filler)[: self.cfg.max_snippets_per_doc])
        depth = self.cfg.rerank_depth
        if depth is None:
            return [h for doc_hits in per_doc for h in doc_hits]
        turns = zip_longest(*per_doc)  # each document's first window, then each one's second...
        return [h for turn in turns for h in turn if h is not None][:depth]


def _evidence(query: Query, hit: Hit) -> Evidence:
    s = hit.snippet
    relevance = hit.relevance if hit.relevance is not None else hit.score
    return Evidence(
        id=s.id,
        text=s.text,
        title=s.title,
        source=s.source,
        url=s.url,
        query=query.text,
        relevance=float(relevance),
        fetched_at=s.fetched_at,
    )


def _with_question(queries: list[Query], context: str | None) -> list[Query]:
    """The queries with a question context itself first: what the answer must agree on."""
    if not is_question(context):
        return queries
    assert context is not None
    q = " ".join(context.split())
    if any(x.text.strip().lower() == q.lower() for x in queries):
        return queries
    return [Query(q, "question"), *queries]


def unique_evidence(results: list[QueryEvidence]) -> list[Evidence]:
    """All evidence of a research result with duplicates merged (the most relevant copy kept),
    in order of first appearance."""
    best: dict[str, Evidence] = {}
    order: list[str] = []
    for qe in results:
        for ev in qe.evidence:
            if ev.id not in best:
                order.append(ev.id)
                best[ev.id] = ev
            elif ev.relevance > best[ev.id].relevance:
                best[ev.id] = ev
    return [best[i] for i in order]
