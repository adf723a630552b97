"""Web-search providers behind one protocol: a query in, ranked results (URL, title, the
provider's snippet, a date when given) out.

Each provider speaks its service's documented JSON API over httpx:

- ``searxng``: a self-hosted SearXNG, ``GET {url}/search?q=…&format=json`` (no key; JSON output
  must be enabled in its ``settings.yml``);
- ``brave``: Brave Search API, ``GET {url}/res/v1/web/search?q=…&count=…`` with the key in
  ``X-Subscription-Token``;
- ``serper``: Serper (Google results), ``POST {url}/search`` with ``{"q", "num"}`` and the key in
  ``X-API-KEY``;
- ``tavily``: Tavily, ``POST {url}/search`` with ``{"query", "max_results"}`` and the key as a
  bearer token.

Keys come from the caller (``PURR_*`` settings) and never reach a log line, an error message or
a result: every message a provider raises goes through ``redact``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

PROVIDERS = ("searxng", "brave", "serper", "tavily")
DEFAULT_URLS = {
    "searxng": "http://127.0.0.1:8888",
    "brave": "https://api.search.brave.com",
    "serper": "https://google.serper.dev",
    "tavily": "https://api.tavily.com",
}
KEY_VARIABLES = {
    "brave": "PURR_BRAVE_API_KEY",
    "serper": "PURR_SERPER_API_KEY",
    "tavily": "PURR_TAVILY_API_KEY",
}


@dataclass(frozen=True)
class Features:
    """What a provider can filter by."""

    site_filter: bool = False
    recency: bool = False
    language: bool = False


@dataclass(frozen=True)
class WebResult:
    """One search result as the provider gave it."""

    url: str
    title: str
    snippet: str
    rank: int
    provider: str
    published: str | None = None


class WebSearchError(RuntimeError):
    """A provider could not answer: unreachable, an HTTP error, or a body not in its format.
    ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Results(list):
    """A provider's results (a list of ``WebResult``), with ``notes``: what the provider said
    was missing from them (for example SearXNG's engines that did not answer)."""

    def __init__(self, items=(), notes: Sequence[str] = ()) -> None:
        super().__init__(items)
        self.notes: tuple[str, ...] = tuple(notes)


class WebSearch(Protocol):
    """A web-search provider."""

    name: str
    features: Features

    def search(
        self,
        query: str,
        n: int = 10,
        site: str | None = None,
        recency_days: int | None = None,
        language: str | None = None,
    ) -> list[WebResult]: ...


def redact(text: str, secrets: Sequence[str | None]) -> str:
    """``text`` with every secret replaced by ``***``.

    >>> redact("GET /search?key=abc123 failed", ["abc123", None])
    'GET /search?key=*** failed'
    """
    for s in secrets:
        if s:
            text = text.replace(s, "***")
    return text


@dataclass
class _Http:
    """The HTTP side shared by the providers: a client, a timeout, retries on 429 and 5xx that
    honour ``Retry-After`` (capped at ``max_wait_s``)."""

    client: httpx.Client
    timeout_s: float = 10.0
    retries: int = 2
    max_wait_s: float = 10.0
    sleep: Callable[[float], None] = field(default=time.sleep)

    def request(self, provider: str, key: str | None, method: str, url: str, **kw: Any) -> Any:
        last: WebSearchError | None = None
        for attempt in range(self.retries + 1):
            try:
                r = self.client.request(method, url, timeout=self.timeout_s, **kw)
            except httpx.HTTPError as e:
                what = (
                    f"did not answer within {self.timeout_s:g} s"
                    if isinstance(e, httpx.TimeoutException)
                    else "unreachable"
                )
                last = WebSearchError(
                    redact(f"{provider}: {url} {what} ({type(e).__name__}: {e})", [key])
                )
                if attempt < self.retries:
                    self.sleep(min(2.0**attempt, self.max_wait_s))
                continue
            if r.status_code == 429 or r.status_code >= 500:
                last = WebSearchError(
                    redact(f"{provider}: HTTP {r.status_code} from {url}", [key]), r.status_code
                )
                if attempt < self.retries:
                    self.sleep(
                        min(
                            retry_after(r.headers.get("retry-after"), 2.0**attempt), self.max_wait_s
                        )
                    )
                continue
            if r.status_code >= 400:
                raise WebSearchError(
                    redact(
                        f"{provider}: HTTP {r.status_code} from {url}"
                        + (" (check the API key)" if r.status_code in (401, 403) else ""),
                        [key],
                    ),
                    r.status_code,
                )
            try:
                return r.json()
            except ValueError:
                raise WebSearchError(
                    redact(f"{provider}: {url} did not answer JSON", [key]), r.status_code
                ) from None
        assert last is not None
        raise last


def retry_after(value: str | None, default: float) -> float:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date), else
    ``default``.

    >>> retry_after("3", 1.0), retry_after(None, 1.0), retry_after("soon", 2.0)
    (3.0, 1.0, 2.0)
    """
    if not value:
        return default
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    return max(0.0, when.timestamp() - time.time())


def _need_key(provider: str, key: str | None) -> str:
    if not key:
        raise WebSearchError(
            f"{provider} needs an API key: set {KEY_VARIABLES[provider]} (or choose "
            "web.provider=searxng, which needs none)"
        )
    return key


def _str(x: Any) -> str:
    return x if isinstance(x, str) else ""


def _period(days: int) -> str:
    """The shortest of a day, week, month or year (``d w m y``) that covers ``days``, as the
    providers' recency filters name them.

    >>> [_period(d) for d in (1, 7, 30, 365)]
    ['d', 'w', 'm', 'y']
    """
    return "d" if days <= 1 else "w" if days <= 7 else "m" if days <= 31 else "y"


def _rows(provider: str, data: Any, field: str, hint: str = "") -> list[Any]:
    """The list of results under ``field`` of a provider's JSON answer, or a clear error."""
    rows = data.get(field) if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise WebSearchError(f"{provider}: the answer has no '{field}' list{hint}")
    return rows


class _Provider:
    """What every provider holds: its base URL, the HTTP client with retries, its key."""

    name: str
    features: Features

    def __init__(self, url: str, http: _Http, key: str | None = None) -> None:
        self.url, self.http, self.key = url.rstrip("/"), http, key


class SearxngSearch(_Provider):
    name = "searxng"
    features = Features(site_filter=True, recency=True, language=True)

    def search(self, query, n=10, site=None, recency_days=None, language=None):
        params: dict[str, Any] = {"q": f"site:{site} {query}" if site else query, "format": "json"}
        if recency_days is not None:
            # SearXNG's ranges are day, month and year: a week asks for the month
            params["time_range"] = {"d": "day", "w": "month", "m": "month", "y": "year"}[
                _period(recency_days)
            ]
        if language:
            params["language"] = language
        data = self.http.request(self.name, self.key, "GET", f"{self.url}/search", params=params)
        rows = _rows(self.name, data, "results", " (is format=json on?)")
        results = _results(self.name, rows, "url", "title", "content", "publishedDate", n)
        return Results(results, _unresponsive(data.get("unresponsive_engines")))


class BraveSearch(_Provider):
    name = "brave"
    features = Features(site_filter=True, recency=True, language=True)

    def search(self, query, n=10, site=None, recency_days=None, language=None):
        key = _need_key(self.name, self.key)
        q = f"site:{site} {query}" if site else query
        params: dict[str, Any] = {"q": q, "count": min(n, 20)}  # Brave answers at most 20
        if recency_days is not None:
            params["freshness"] = "p" + _period(recency_days)
        if language:
            params["search_lang"] = language
        data = self.http.request(
            self.name,
            key,
            "GET",
            f"{self.url}/res/v1/web/search",
            params=params,
            headers={"X-Subscription-Token": key, "Accept": "application/json"},
        )
        web = data.get("web") if isinstance(data, dict) else None
        rows = web.get("results") if isinstance(web, dict) else None
        if not isinstance(rows, list):
            return []  # Brave omits "web" when nothing was found
        return _results(self.name, rows, "url", "title", "description", "page_age", n)


class SerperSearch(_Provider):
    name = "serper"
    features = Features(site_filter=True, recency=True, language=True)

    def search(self, query, n=10, site=None, recency_days=None, language=None):
        key = _need_key(self.name, self.key)
        body: dict[str, Any] = {"q": f"site:{site} {query}" if site else query, "num": n}
        if recency_days is not None:
            body["tbs"] = "qdr:" + _period(recency_days)
        if language:
            body["hl"] = language
        data = self.http.request(
            self.name, key, "POST", f"{self.url}/search", json=body, headers={"X-API-KEY": key}
        )
        rows = _rows(self.name, data, "organic")
        return _results(self.name, rows, "link", "title", "snippet", "date", n)


class TavilySearch(_Provider):
    name = "tavily"
    features = Features(site_filter=True, recency=True, language=False)

    def search(self, query, n=10, site=None, recency_days=None, language=None):
        key = _need_key(self.name, self.key)
        body: dict[str, Any] = {"query": query, "max_results": n}
        if site:
            body["include_domains"] = [site]
        if recency_days is not None:
            body["days"] = recency_days
            body["topic"] = "news"
        data = self.http.request(
            self.name,
            key,
            "POST",
            f"{self.url}/search",
            json=body,
            headers={"Authorization": f"Bearer {key}"},
        )
        rows = _rows(self.name, data, "results")
        return _results(self.name, rows, "url", "title", "content", "published_date", n)


def _unresponsive(engines: Any) -> list[str]:
    """SearXNG's ``unresponsive_engines`` (``[[engine, reason], ...]``) as one note.

    >>> print(*_unresponsive([["google", "too many requests"], ["bing", "timeout"]]))
    engines that did not answer, so results may be missing: google (too many requests), bing (timeout)
    >>> _unresponsive([])
    []
    """
    if not isinstance(engines, list):
        return []
    named = []
    for e in engines:
        if isinstance(e, list | tuple) and e:
            why = f" ({_str(e[1])})" if len(e) > 1 and _str(e[1]) else ""
            named.append(f"{_str(e[0])}{why}")
    if not named:
        return []
    return ["engines that did not answer, so results may be missing: " + ", ".join(named)]


def _results(
    provider: str, rows: list[Any], url: str, title: str, snippet: str, date: str, n: int
) -> list[WebResult]:
    out: list[WebResult] = []
    for row in rows:
        if not isinstance(row, dict) or not _str(row.get(url)).startswith(("http://", "https://")):
            continue
        out.append(
            WebResult(
                row[url],
                _str(row.get(title)),
                _str(row.get(snippet)),
                len(out),
                provider,
                _str(row.get(date)) or None,
            )
        )
        if len(out) >= n:
            break
    return out


def make_provider(
    name: str,
    url: str | None = None,
    key: str | None = None,
    client: httpx.Client | None = None,
    timeout_s: float = 10.0,
    retries: int = 2,
    sleep: Callable[[float], None] = time.sleep,
) -> WebSearch:
    """The provider ``name`` at ``url`` (its public API by default)."""
    classes = {
        "searxng": SearxngSearch,
        "brave": BraveSearch,
        "serper": SerperSearch,
        "tavily": TavilySearch,
    }
    if name not in classes:
        raise ValueError(f"web.provider '{name}' unknown; choose one of {', '.join(PROVIDERS)}")
    http = _Http(client or httpx.Client(follow_redirects=False), timeout_s, retries, sleep=sleep)
    return classes[name](url or DEFAULT_URLS[name], http, key)
