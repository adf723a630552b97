"""An on-disk cache of search responses and fetched pages, for reproducible and cheaper runs.

Entries are JSON files keyed by a hash of what was asked: the provider, its URL, the query and
every parameter for a search; the URL for a page. Each entry is written whole (a temporary file
renamed into place), so a killed run never leaves half an entry. Modes:

- ``rw``: answer from the cache, ask the web on a miss and keep the answer;
- ``ro``: answer from the cache only; a miss is an error and no request is sent, so a rerun
  gives the same evidence, byte for byte, with the web unreachable;
- ``refresh``: always ask the web and replace what the cache holds.

``Budget`` caps the requests a provider may receive: per run and per minute. A request over
budget is not sent; research goes on with the evidence already found and says so.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal

from retrieval.files import output_error, write_text
from retrieval.files.errors import WRITE_ERRNOS
from retrieval.web.fetch import FetchedPage, PageFetcher
from retrieval.web.providers import Features, Results, WebResult, WebSearch, WebSearchError

logger = logging.getLogger(__name__)

CacheMode = Literal["rw", "ro", "refresh"]
MODES = ("rw", "ro", "refresh")


class WebCache:
    """Search responses and pages under ``root`` (see the module doc)."""

    def __init__(self, root: str | Path, mode: CacheMode = "rw") -> None:
        if mode not in MODES:
            raise ValueError(f"web cache mode '{mode}' unknown; choose rw, ro or refresh")
        self.root = Path(root).expanduser()
        self.mode = mode
        if mode == "ro" and not self.root.is_dir():
            raise ValueError(
                f"--web-cache {self.root}: no such folder to read (mode ro); run once with mode "
                "rw to fill it"
            )
        self.hits = self.misses = 0
        self.unwritable: str | None = None
        """why an entry could not be written (a full disk, say): research goes on uncached"""
        self._lock = threading.Lock()

    @staticmethod
    def key(**what: Any) -> str:
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode("utf-8")).hexdigest()

    def _path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / f"{key}.json"

    def get(self, kind: str, key: str) -> Any | None:
        if self.mode == "refresh":
            return None
        path = self._path(kind, key)
        try:
            data = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            with self._lock:
                self.misses += 1
            return None
        except (OSError, ValueError):  # an unreadable entry is a miss, and is replaced
            with self._lock:
                self.misses += 1
            return None
        with self._lock:
            self.hits += 1
        return data

    def put(self, kind: str, key: str, value: Any) -> None:
        if self.mode == "ro":
            return
        path = self._path(kind, key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text(path, json.dumps(value, ensure_ascii=False, sort_keys=True))
        except OSError as e:  # the cache only saves time: a failed write is never the run's end
            if e.errno not in WRITE_ERRNOS:
                raise
            reason = str(output_error(e, path))
            with self._lock:
                first, self.unwritable = self.unwritable is None, reason
            if first:
                logger.warning("web cache: %s; going on without caching", reason)


class Budget:
    """At most ``per_run`` requests in all and ``per_minute`` in any 60 seconds (None: no cap)."""

    def __init__(
        self,
        per_run: int | None = None,
        per_minute: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_run, self.per_minute, self.clock = per_run, per_minute, clock
        self.used = 0
        self._recent: deque[float] = deque()
        self._lock = threading.Lock()

    def take(self) -> str | None:
        """Spend one request; None when allowed, else why not."""
        with self._lock:
            now = self.clock()
            while self._recent and now - self._recent[0] >= 60:
                self._recent.popleft()
            if self.per_run is not None and self.used >= self.per_run:
                return f"the budget of {self.per_run} requests per run is spent"
            if self.per_minute is not None and len(self._recent) >= self.per_minute:
                return f"the budget of {self.per_minute} requests per minute is spent"
            self.used += 1
            self._recent.append(now)
            return None


class BudgetSpent(WebSearchError):
    """A request was not sent: the provider's budget is spent."""


class CacheMiss(WebSearchError):
    """A request was not sent: the read-only cache does not hold it."""


class CachedSearch:
    """A provider behind the cache and its budget (both optional)."""

    def __init__(
        self, provider: WebSearch, cache: WebCache | None, budget: Budget | None, url: str = ""
    ) -> None:
        self.provider = provider
        self.cache = cache
        self.budget = budget
        self.url = url
        self.name = provider.name
        self.features: Features = provider.features
        self.requests = 0

    def search(self, query, n=10, site=None, recency_days=None, language=None):
        key = WebCache.key(
            kind="search",
            provider=self.name,
            url=self.url,
            query=query,
            n=n,
            site=site,
            recency_days=recency_days,
            language=language,
        )
        if self.cache is not None:
            hit = self.cache.get("search", key)
            if hit is not None:  # {results, notes}; a bare list from before notes existed
                rows, notes = (hit, []) if isinstance(hit, list) else (hit["results"], hit["notes"])
                return Results([WebResult(**r) for r in rows], notes)
            if self.cache.mode == "ro":
                raise CacheMiss(
                    f"{self.name}: '{query}' is not in the read-only web cache; no request sent"
                )
        if self.budget is not None:
            why = self.budget.take()
            if why is not None:
                raise BudgetSpent(f"{self.name}: {why}; no request sent")
        self.requests += 1
        results = self.provider.search(query, n, site, recency_days, language)
        if self.cache is not None:
            notes = list(getattr(results, "notes", ()))
            self.cache.put("search", key, {"results": [asdict(r) for r in results], "notes": notes})
        return results


class CachedFetcher(PageFetcher):
    """A ``PageFetcher`` that answers from the cache first (see the module doc)."""

    def __init__(self, cache: WebCache, **kw: Any) -> None:
        super().__init__(**kw)
        self.cache = cache
        self.requests = 0

    def fetch(self, url: str) -> FetchedPage:
        key = WebCache.key(kind="page", url=url)
        hit = self.cache.get("page", key)
        # a page that failed is kept too, so that a read-only rerun replays the same fallback;
        # read-write asks again for it
        if hit is not None and (hit.get("body") is not None or self.cache.mode == "ro"):
            # a page cached under another web.allow_networks is not served past this one's
            why = self.policy.refuses_offline(url) or self.policy.refuses_offline(
                hit.get("final_url") or url
            )
            if why:
                return FetchedPage(
                    url, url, None, "", hit.get("fetched_at", ""), error=f"refused: {why}"
                )
            return FetchedPage(**hit)
        if self.cache.mode == "ro":
            return FetchedPage(url, url, None, "", "", error="not in the read-only web cache")
        with self._lock:
            self.requests += 1
        page = super().fetch(url)
        self.cache.put("page", key, asdict(page))
        return page
