"""Prometheus metrics of one app (its own registry, so several apps in a process never mix):
requests and errors by route and status, request latency, latency by pipeline stage, edits by
status and requests in flight. ``GET /metrics`` serves ``Metrics.render()``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "purr_requests", "HTTP requests by route and status", ["route", "status"], registry=r
        )
        self.errors = Counter(
            "purr_errors", "HTTP responses with status >= 400 by route", ["route"], registry=r
        )
        self.latency = Histogram(
            "purr_request_seconds",
            "HTTP request latency by route",
            ["route"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.stage = Histogram(
            "purr_stage_seconds",
            "Pipeline latency by stage (research, revision, report)",
            ["stage"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.edits = Counter(
            "purr_edits", "Passages edited, by result status", ["status"], registry=r
        )
        self.inflight = Gauge("purr_inflight_requests", "Requests being served", registry=r)
        self.key_requests = Counter(
            "purr_key_requests", "Requests by API key (a hash of it)", ["key"], registry=r
        )
        self.key_refused = Counter(
            "purr_key_rate_limited",
            "Requests refused with 429 by API key (a hash of it) and limit",
            ["key", "limit"],
            registry=r,
        )

    def watch_research_cache(self, cache: Any) -> None:
        """Export ``cache``'s hits and misses (read when scraped), once per registry."""
        if getattr(self, "_cache_watched", False):
            return
        self._cache_watched = True
        for name, what in (("hits", "answered from"), ("misses", "not found in")):
            gauge = Gauge(
                f"purr_research_cache_{name}",
                f"Queries {what} the research cache since start-up",
                registry=self.registry,
            )
            gauge.set_function(lambda name=name: getattr(cache, name))

    def observe_request(self, route: str, status: int, seconds: float) -> None:
        self.requests.labels(route, str(status)).inc()
        self.latency.labels(route).observe(seconds)
        if status >= 400:
            self.errors.labels(route).inc()

    def observe_edit(self, status: str, timings_ms: Mapping[str, float]) -> None:
        self.edits.labels(status).inc()
        for stage, ms in timings_ms.items():
            self.stage.labels(stage).observe(ms / 1000)

    def render(self) -> bytes:
        return generate_latest(self.registry)
