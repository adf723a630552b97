"""A fetched page's main text, cut into the same sentence windows as local documents.

The main text (the article without navigation, sidebars, cookie banners, comments and footers)
is extracted by trafilatura, a maintained extraction library. Plain-text pages are kept as
they are. Windows keep the page's URL and title and their character offsets into the extracted
text, so a citation can point into the page.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from retrieval.chunking import chunk
from retrieval.config import ChunkingConfig
from retrieval.types import Document, Snippet


@dataclass(frozen=True)
class PageText:
    """What extraction kept of a page."""

    url: str
    title: str
    text: str
    fetched_at: str | None = None


FAVOR = ("precision", "balanced", "recall")
"""trafilatura's trade-offs: drop more doubtful blocks (the default here), its own balance, or
keep more."""


def extract_main_text(
    html: str, url: str | None = None, favor: str = "precision"
) -> tuple[str, str]:
    """(title, main text) of an HTML page; ("", "") when nothing article-like is found.
    ``favor`` is one of ``FAVOR`` (``purr eval extraction`` measures each on saved pages).

    >>> page = ("<html><head><title>Tower</title></head><body><nav>Home | About</nav>"
    ...         "<article><p>The Eiffel Tower was completed in 1889 for the World's Fair in "
    ...         "Paris, and it was the tallest structure in the world for forty years.</p>"
    ...         "</article><footer>Cookie settings</footer></body></html>")
    >>> title, text = extract_main_text(page)
    >>> title, "1889" in text, "Cookie" in text
    ('Tower', True, False)
    """
    import trafilatura

    if favor not in FAVOR:
        raise ValueError(f"favor must be one of {FAVOR}, got {favor!r}")
    doc = trafilatura.bare_extraction(
        html,
        url=url,
        include_comments=False,
        include_tables=True,
        favor_precision=favor == "precision",
        favor_recall=favor == "recall",
        with_metadata=True,
    )
    if doc is None:
        return "", ""
    title = getattr(doc, "title", None) or ""
    text = getattr(doc, "text", None) or ""
    return title.strip(), text.strip()


PAGE_PREFIX = "web-"
"""How the id of every web page (and of a search result's snippet) begins."""


def page_id(url: str) -> str:
    """A stable document id for a URL.

    >>> page_id("https://example.org/a")
    'web-579f2a2ceeee'
    """
    return PAGE_PREFIX + hashlib.sha1(url.encode("utf-8")).hexdigest()[:12]


def page_snippets(page: PageText, cfg: ChunkingConfig, source: str = "web") -> list[Snippet]:
    """The page's sentence windows (ids ``web-<hash>:<n>``), offsets into ``page.text``."""
    if not page.text.strip():
        return []
    doc = Document(page_id(page.url), page.title, page.text, page.url, source)
    return [replace(s, fetched_at=page.fetched_at) for s in chunk(doc, cfg)]
