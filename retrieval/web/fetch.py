"""Fetching result pages politely and safely.

``PageFetcher.fetch_many(urls)`` fetches pages in parallel with httpx:

- at most ``concurrency`` requests in flight, and at most ``per_host`` to one host;
- a timeout per request, at most ``max_redirects`` redirects (each one checked again);
- only hosts on the public internet (``retrieval.netguard``): before each request and after
  each redirect the host is resolved and checked, and the request connects to the address that
  was checked; a refused URL comes back with the reason, nothing sent;
- only HTML, XHTML and plain text, and at most ``max_bytes`` of body (streamed: a huge page is cut
  off, not downloaded);
- on 429 and 5xx, up to ``retries`` retries with backoff that honours ``Retry-After`` (capped at
  ``max_wait_s``).

A page that cannot be fetched comes back as a ``FetchedPage`` with ``error`` set (the reason), so
research can fall back to the provider's snippet and say why.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urljoin, urlsplit

import httpx

from retrieval.netguard import NetworkPolicy, Pin, RefusedAddress
from retrieval.web.providers import retry_after

TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain")


@dataclass(frozen=True)
class FetchedPage:
    """A page as fetched: its final URL, body text (None on failure), content type, when it was
    fetched (UTC, ISO 8601), and why it failed."""

    url: str
    final_url: str
    body: str | None
    content_type: str
    fetched_at: str
    status: int | None = None
    error: str | None = None
    truncated: bool = False


class PageFetcher:
    """Fetches pages under the limits of the module doc. Thread-safe; reuse one per run."""

    def __init__(
        self,
        client: httpx.Client | None = None,
        timeout_s: float = 10.0,
        max_bytes: int = 2_000_000,
        max_redirects: int = 5,
        concurrency: int = 8,
        per_host: int = 2,
        retries: int = 2,
        max_wait_s: float = 10.0,
        user_agent: str = "purr-research/1 (+https://github.com/purr-edit)",
        sleep: Callable[[float], None] = time.sleep,
        policy: NetworkPolicy | None = None,
    ) -> None:
        if concurrency < 1 or per_host < 1:
            raise ValueError("concurrency and per_host must be >= 1")
        self.client = client or httpx.Client(follow_redirects=False)
        self.policy = policy or NetworkPolicy()
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.concurrency = concurrency
        self.per_host = per_host
        self.retries = retries
        self.max_wait_s = max_wait_s
        self.headers = {"User-Agent": user_agent, "Accept": "text/html,text/plain;q=0.8"}
        self.sleep = sleep
        self._hosts: dict[str, threading.Semaphore] = {}
        self._lock = threading.Lock()

    def _host(self, url: str) -> threading.Semaphore:
        host = urlsplit(url).netloc.lower()
        with self._lock:
            if host not in self._hosts:
                self._hosts[host] = threading.Semaphore(self.per_host)
            return self._hosts[host]

    def fetch_many(self, urls: Sequence[str]) -> list[FetchedPage]:
        """Every URL's page, in order."""
        if not urls:
            return []
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(urls))) as pool:
            return list(pool.map(self.fetch, urls))

    def fetch(self, url: str) -> FetchedPage:
        """One page (see the module doc); never raises for a network or HTTP failure."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        current = url
        for _ in range(self.max_redirects + 1):
            if urlsplit(current).scheme not in ("http", "https"):
                return FetchedPage(url, current, None, "", now, error="not an http(s) URL")
            try:
                pin = self.policy.pin(current)
            except RefusedAddress as e:
                return FetchedPage(url, current, None, "", now, error=f"refused: {e}")
            page, location = self._get(url, current, now, pin)
            if location is None:
                return page
            current = urljoin(current, location)
        return FetchedPage(
            url, current, None, "", now, error=f"more than {self.max_redirects} redirects"
        )

    def _get(self, url: str, current: str, now: str, pin: Pin) -> tuple[FetchedPage, str | None]:
        """One URL, sent to its checked address (``pin``) and retried on 429/5xx; (page, None),
        or (_, Location) on a redirect."""
        last = FetchedPage(url, current, None, "", now, error="not fetched")
        for attempt in range(self.retries + 1):
            with self._host(current):
                try:
                    with self.client.stream(
                        "GET",
                        pin.connect_url,
                        headers={**self.headers, **pin.headers},
                        timeout=self.timeout_s,
                        extensions=pin.extensions,
                    ) as r:
                        if r.is_redirect and r.headers.get("location"):
                            return last, r.headers["location"]
                        failed = FetchedPage(
                            url, current, None, "", now, r.status_code, f"HTTP {r.status_code}"
                        )
                        if r.status_code == 429 or r.status_code >= 500:
                            wait = retry_after(r.headers.get("retry-after"), 0.5 * 2**attempt)
                            last = failed
                        elif r.status_code >= 400:
                            return failed, None
                        else:
                            return self._read(url, current, now, r), None
                except httpx.HTTPError as e:
                    wait = 0.5 * 2**attempt
                    last = FetchedPage(
                        url, current, None, "", now, error=f"{type(e).__name__}: {e}"
                    )
            if attempt < self.retries:
                self.sleep(min(wait, self.max_wait_s))
        return last, None

    def _read(self, url: str, current: str, now: str, r: httpx.Response) -> FetchedPage:
        ctype = r.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype and ctype not in TEXT_TYPES:
            return FetchedPage(
                url, current, None, ctype, now, r.status_code, f"content type {ctype} is not a page"
            )
        chunks, size, truncated = [], 0, False
        for chunk in r.iter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= self.max_bytes:
                truncated = True
                break
        raw = b"".join(chunks)[: self.max_bytes]
        encoding = r.charset_encoding or sniff_charset(raw) or "utf-8"
        try:
            body = raw.decode(encoding, errors="replace")
        except LookupError:
            body = raw.decode("utf-8", errors="replace")
        return FetchedPage(
            url, current, body, ctype or "text/html", now, r.status_code, None, truncated
        )


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


def sniff_charset(raw: bytes) -> str | None:
    """The charset a page declares in its first 4 KiB (``<meta charset>`` or ``http-equiv``),
    for a server that names none in its Content-Type; None when it declares none.

    >>> sniff_charset(b'<html><head><meta charset="ISO-8859-1"><title>x</title>')
    'ISO-8859-1'
    >>> sniff_charset(b"<html><p>no declaration</p>") is None
    True
    """
    m = _META_CHARSET.search(raw[:4096])
    return m.group(1).decode("ascii") if m else None
