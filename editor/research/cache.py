"""A bounded cache of research results per query, kept apart per tenant (``purr serve``).

A service sees the same questions again: a chat wrapper's replies about one subject, a pipeline
re-checking a document, clients retrying. Research (first-stage search, then the reranker over
every query's windows) is most of an edit's time, and a query's evidence does not change while
the index does not. :class:`ResearchCache` keeps the last ``max_entries`` queries' evidence for
``ttl_s`` seconds; a service hands each request ``cache.tenant(key)``, a view whose entries are
keyed by the tenant too, so one API key's queries and evidence never answer another's.

The cache is built by whoever owns the researcher's lifetime (the service, in its lifespan) and
passed to each call explicitly; the library never caches on its own. Thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from editor.types import Query, QueryEvidence


class ResearchCache:
    """Research results by (tenant, query), least recently used first out."""

    def __init__(self, max_entries: int = 4096, ttl_s: float = 3600.0) -> None:
        if max_entries < 1 or ttl_s <= 0:
            raise ValueError(
                f"a research cache needs max_entries >= 1 and ttl_s > 0, got {max_entries}, {ttl_s}"
            )
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self._entries: OrderedDict[tuple[str, Query], tuple[float, QueryEvidence]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def tenant(self, name: str) -> TenantCache:
        """The view one tenant (an API key's id, or ``anonymous``) reads and writes."""
        return TenantCache(self, name)

    def get(self, tenant: str, query: Query) -> QueryEvidence | None:
        key = (tenant, query)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or time.monotonic() - entry[0] > self.ttl_s:
                if entry is not None:
                    del self._entries[key]
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry[1]

    def put(self, tenant: str, query: Query, found: QueryEvidence) -> None:
        with self._lock:
            self._entries[(tenant, query)] = (time.monotonic(), found)
            self._entries.move_to_end((tenant, query))
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


@dataclass(frozen=True)
class TenantCache:
    """One tenant's view of a :class:`ResearchCache` (what a researcher call receives)."""

    cache: ResearchCache
    name: str

    def get(self, query: Query) -> QueryEvidence | None:
        return self.cache.get(self.name, query)

    def put(self, query: Query, found: QueryEvidence) -> None:
        self.cache.put(self.name, query, found)
