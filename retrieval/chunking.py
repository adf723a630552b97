"""Sliding sentence windows over documents (RARR: 4 sentences, stride 1, never across a heading)."""

from __future__ import annotations

from collections.abc import Iterator

from retrieval import sentences
from retrieval.config import ChunkingConfig
from retrieval.types import Document, Snippet


def sections(doc: Document) -> list[tuple[int, int]]:
    """Character spans of the document's sections (split at heading offsets).

    >>> sections(Document("d", "", "aaa bbb", headings=(4,)))
    [(0, 4), (4, 7)]
    """
    cuts = [0, *[h for h in doc.headings if 0 < h < len(doc.text)], len(doc.text)]
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def windows(n: int, window: int, stride: int) -> list[tuple[int, int]]:
    """Sentence-index windows ``[i, j)`` covering ``n`` sentences; the tail is always covered.

    >>> windows(6, 4, 1)
    [(0, 4), (1, 5), (2, 6)]
    >>> windows(5, 4, 3)
    [(0, 4), (1, 5)]
    >>> windows(2, 4, 1)
    [(0, 2)]
    """
    if n <= window:
        return [(0, n)] if n else []
    out = [(i, i + window) for i in range(0, n - window + 1, stride)]
    if out[-1][1] < n:
        out.append((n - window, n))
    return out


def chunk(doc: Document, cfg: ChunkingConfig) -> Iterator[Snippet]:
    """Snippets of one document, with character offsets into ``doc.text``."""
    k = 0
    for sec_start, sec_end in sections(doc):
        spans = [
            (sec_start + a, sec_start + b)
            for a, b in sentences.split_spans(doc.text[sec_start:sec_end])
        ]
        for i, j in windows(len(spans), cfg.window, cfg.stride):
            start, end = spans[i][0], spans[j - 1][1]
            # Cap very long windows at a sentence boundary (keep at least one sentence).
            while end - start > cfg.max_chars and j - 1 > i:
                j -= 1
                end = spans[j - 1][1]
            end = min(end, start + cfg.max_chars)
            yield Snippet(
                id=f"{doc.id}#{k}",
                doc_id=doc.id,
                title=doc.title,
                text=doc.text[start:end],
                start=start,
                end=end,
                url=doc.url,
                source=doc.source,
            )
            k += 1
