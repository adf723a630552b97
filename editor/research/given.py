"""Evidence the caller supplies instead of research: ids ``given-0``, ``given-1``, ... and each
query paired with the given evidence that bears on it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from editor.text.words import content_words
from editor.types import Evidence, Query


def given_evidence(texts: Sequence[str], source: str = "given") -> list[Evidence]:
    """Evidence supplied by the caller (ids ``given-0``, ``given-1``, ...)."""
    return [
        Evidence(
            id=f"{source}-{i}", text=t, title="", source=source, url=None, query="", relevance=1.0
        )
        for i, t in enumerate(texts)
    ]


def assign_queries(queries: Sequence[Query], evidence: Sequence[Evidence]) -> list[Evidence]:
    """Given evidence carries no query: pair each query with the given evidence that shares the
    most content words with it (one (query, evidence) step per query, as research would give).

    >>> ev = given_evidence(["Paris is the capital of France.", "The Nile is long."])
    >>> [(e.id, e.query) for e in assign_queries([Query("How long is the Nile?", "t")], ev)]
    [('given-1', 'How long is the Nile?')]
    """
    if not queries or not evidence:
        return list(evidence)
    words = [content_words(e.text) for e in evidence]
    out = []
    for q in queries:
        target = content_words(q.text)
        best = max(range(len(evidence)), key=lambda i: (len(target & words[i]), -i))
        out.append(replace(evidence[best], query=q.text))
    return out
