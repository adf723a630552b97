"""JSON-ready views of results, shared by the CLI and (later) the HTTP API."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from editor.research.researcher import unique_evidence
from editor.types import QueryEvidence
from retrieval.types import Hit


def hit_json(hit: Hit) -> dict[str, Any]:
    s = hit.snippet
    return {
        "rank": hit.rank + 1,
        "id": s.id,
        "doc_id": s.doc_id,
        "title": s.title,
        "url": s.url,
        "fetched_at": s.fetched_at,
        "text": s.text,
        "start": s.start,
        "end": s.end,
        "score": round(hit.score, 6),
        "relevance": None if hit.relevance is None else round(hit.relevance, 6),
        "retriever": hit.retriever,
        "scores": {k: round(v, 6) for k, v in hit.scores.items()},
    }


def research_json(
    text: str, context: str | None, results: list[QueryEvidence], timings_ms: dict[str, float]
) -> dict[str, Any]:
    return {
        "text": text,
        "context": context,
        "queries": [qe.query.text for qe in results],
        "query_details": [asdict(qe.query) for qe in results],
        "evidence": [asdict(ev) for ev in unique_evidence(results)],
        "by_query": [
            {"query": qe.query.text, "evidence_ids": [ev.id for ev in qe.evidence]}
            for qe in results
        ],
        "timings_ms": {k: round(v, 1) for k, v in timings_ms.items()},
    }
