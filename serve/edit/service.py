"""``EditService``: the edit, batch and score operations of the HTTP API (no FastAPI here).

The models and the index load once (a warm-up edit in the background at start-up) and are
shared by ``workers`` threads; the event loop only awaits. Every request has a deadline: past
it the caller gets their original text back with status ``degraded`` and the reason, while the
late work finishes in its thread and is dropped (work still queued when its deadline passes is
never started).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from editor.inputs import InputError
from editor.pipeline import Pipeline
from editor.research.cache import ResearchCache
from editor.result import EditResult
from retrieval.lanes import LANES
from retrieval.settings import Settings
from serve.edit.protocol import (
    BatchItem,
    BatchRequest,
    CheckRequest,
    CheckResponse,
    EditOptions,
    EditRequest,
    Readiness,
    ScoreRequest,
    ScoreResponse,
)
from serve.errors import ApiError, error_body
from serve.metrics import Metrics
from serve.settings import ServeSettings
from serve.tenants import ANONYMOUS

log = logging.getLogger(__name__)

T = TypeVar("T")

# a month and a unit: the slot checks' date and unit tables load in the warm-up too
WARMUP_TEXT = "The Eiffel Tower in Paris opened in March 1889 at a height of 300 metres."

LIMITS = {  # a request's list: the setting that caps it, what it counts, the limit, the fix, code
    "evidence": (
        "max_evidence", "evidence texts", "the limit", "send the most relevant ones",
        "too_much_evidence",
    ),
    "sources": (
        "max_evidence", "sources", "the limit", "send the ones the text cites", "too_many_sources"
    ),
    "items": (
        "max_batch", "items", "the batch limit", "send several smaller batches", "batch_too_large"
    ),
}  # fmt: skip


class _Late(Exception):
    """The deadline passed before the work started."""


class EditService:
    """Shared pipeline + worker threads + deadlines + metrics."""

    def __init__(
        self, pipeline: Pipeline, settings: ServeSettings, metrics: Metrics | None = None
    ) -> None:
        self.pipeline = pipeline
        self.settings = settings
        self.metrics = metrics or Metrics()
        self._pool = ThreadPoolExecutor(settings.workers, thread_name_prefix="purr-edit")
        # score and check with given sources never queue behind edits: a lane of their own
        self._cheap = (
            ThreadPoolExecutor(settings.cheap_workers, thread_name_prefix="purr-cheap")
            if settings.cheap_workers
            else self._pool
        )
        # and, with PURR_PRIORITY, their model calls go before the edits' (retrieval.lanes)
        self._priority = bool(settings.cheap_workers) and Settings().priority
        self.research_cache = (
            ResearchCache(settings.research_cache, settings.research_cache_ttl_s)
            if settings.research_cache
            else None
        )
        if self.research_cache is not None:
            self.metrics.watch_research_cache(self.research_cache)
        self._pending = 0  # model calls submitted and not finished (running or queued)
        self._pending_lock = threading.Lock()
        self._unsure: Pipeline | None = None
        self._unsure_lock = threading.Lock()
        self._warmup: Future[None] | None = None
        self._warmup_error: str | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Load the models and open the index in the background (``/readyz`` says when done)."""
        if self._warmup is None and self.settings.warmup:
            # a daemon thread, not a pool worker: SIGTERM during a long first-use build (the
            # default index) must not wait for it; what it writes is swapped in whole or not
            done: Future[None] = Future()
            self._warmup = done
            threading.Thread(
                target=self._warm_into, args=(done,), name="purr-warmup", daemon=True
            ).start()

    def _warm_into(self, done: Future[None]) -> None:
        self._warm()  # never raises: a failure is kept for /readyz
        done.set_result(None)

    def _warm(self) -> None:
        t = time.perf_counter()
        try:
            self.pipeline.prepare(conversions=True)  # first use: the index, conversions, models
            self.pipeline.load_models()
            result = self.pipeline.edit(WARMUP_TEXT)
            if result.status == "degraded":
                self._warmup_error = "; ".join(result.warnings)
        except Exception as e:  # noqa: BLE001 - reported by /readyz, the server stays up
            self._warmup_error = f"{type(e).__name__}: {e}"
        if self._warmup_error:
            log.error("warm-up failed: %s", self._warmup_error)
        else:
            log.info("models loaded and index open in %.1f s", time.perf_counter() - t)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._cheap.shutdown(wait=False, cancel_futures=True)

    @property
    def warming(self) -> bool:
        """True while the start-up warm-up (models, index) is still running."""
        return self._warmup is not None and not self._warmup.done()

    def require_ready(self, options: EditOptions) -> None:
        """503 with Retry-After while warming up, unless the caller asked to wait."""
        if self.warming and not options.wait_for_ready:
            self.metrics.observe_edit("not_ready", {})
            raise ApiError(
                503,
                "the server is still loading its models and index; retry after "
                f"{self.settings.retry_after_s} s (see /readyz), or set options.wait_for_ready "
                "to wait within the deadline",
                "not_ready",
                headers={"Retry-After": str(self.settings.retry_after_s)},
            )

    def readiness(self) -> Readiness:
        cfg = self.pipeline.cfg
        index = self.pipeline.components.index_path
        common = {
            "index": str(index) if index else "default",
            "editor": cfg.editor.type,
            "attribution": cfg.attribution.type,
        }
        if self.warming:
            return Readiness(ready=False, reason="loading models and index", **common)
        if self._warmup_error:
            return Readiness(ready=False, reason=self._warmup_error, **common)
        return Readiness(ready=True, **common)

    # -- operations ----------------------------------------------------------------------------

    def _deadline(self, options: EditOptions) -> float:
        cap = self.settings.deadline_s
        return min(options.deadline_s, cap) if options.deadline_s else cap

    def _refuse_over_limit(self, param: str, count: int) -> None:
        """413 where ``count`` of the request's ``param`` are over their limit (``LIMITS``)."""
        setting, counted, limit_name, fix, code = LIMITS[param]
        limit = getattr(self.settings, setting)
        if count > limit:
            raise ApiError(
                413, f"{count} {counted}, over {limit_name} of {limit}; {fix}", code, param
            )

    def check(self, req: EditRequest | ScoreRequest) -> None:
        """Raise ``ApiError`` (413 over a limit, 422 otherwise) naming the problem and the fix."""
        if req.evidence is not None:
            self._refuse_over_limit("evidence", len(req.evidence))
        try:
            self.pipeline.check_input(req.text, req.context, req.evidence)
        except InputError as e:
            if e.too_large:
                raise ApiError(413, str(e), "input_too_large") from None
            raise ApiError(422, str(e), "invalid_input") from None
        sources = getattr(req, "sources", None)
        if sources is not None:
            from editor.citations.sources import read_sources

            self._refuse_over_limit("sources", len(sources))
            if req.evidence is not None:
                raise ApiError(
                    422, "give either evidence or sources, not both", "invalid_input", "sources"
                )
            if not sources:
                raise ApiError(
                    422,
                    "sources is empty; send the documents the text cites, or leave it out",
                    "invalid_input",
                    "sources",
                )
            try:
                read_sources([s.model_dump() for s in sources])
            except ValueError as e:
                raise ApiError(422, str(e), "invalid_input", "sources") from None

    def _admit(self) -> None:
        """Count one more model call, or answer 503 at once when the queue is full."""
        limit = self.settings.workers + self.settings.max_queue
        with self._pending_lock:
            if self._pending >= limit:
                full = True
            else:
                full = False
                self._pending += 1
        if full:
            self.metrics.observe_edit("overloaded", {})
            raise ApiError(
                503,
                f"the server is busy: {limit} model calls are running or queued "
                f"(PURR_WORKERS + PURR_MAX_QUEUE); retry after {self.settings.retry_after_s} s",
                "overloaded",
                headers={"Retry-After": str(self.settings.retry_after_s)},
            )

    def _release(self) -> None:
        with self._pending_lock:
            self._pending -= 1

    async def _run(self, fn: Callable[[], T], deadline: float, cheap: bool = False) -> T:
        """Run ``fn`` on a worker thread (the cheap lane's with ``cheap``); ``TimeoutError``
        past the monotonic ``deadline``."""

        def job() -> T:
            try:
                if time.monotonic() >= deadline:
                    raise _Late
                if self._warmup is not None:
                    self._warmup.result()
                if cheap and self._priority:
                    with LANES.urgent():  # its model calls go first (retrieval.lanes)
                        return fn()
                return fn()
            finally:
                self._release()

        self._admit()
        try:
            pool = self._cheap if cheap else self._pool
            submitted = pool.submit(job)
        except BaseException:  # never scheduled (the pool is shutting down): not pending
            with self._pending_lock:
                self._pending -= 1
            raise
        # cancelled before a worker took it (the caller gave up: a deadline, a cancelled MCP
        # call), the job never runs its own release: release it here
        submitted.add_done_callback(lambda f: self._release() if f.cancelled() else None)
        future = asyncio.wrap_future(submitted)
        try:
            return await asyncio.wait_for(future, timeout=max(deadline - time.monotonic(), 0.0))
        except _Late:
            raise TimeoutError from None

    def _unsure_applied(self) -> Pipeline:
        """The pipeline whose judge applies its unsure fixes too (built once, on first ask)."""
        with self._unsure_lock:
            if self._unsure is None:
                self._unsure = self.pipeline.applying_unsure()
            return self._unsure

    async def edit_result(
        self,
        req: EditRequest,
        deadline: float | None = None,
        tenant: str = ANONYMOUS,
        progress: Callable[[str], None] | None = None,
    ) -> EditResult:
        """The pipeline's result; past the deadline the original text, ``degraded``. Research
        reads and fills ``tenant``'s part of the research cache only; ``progress`` is called
        (on the worker thread) with each stage's name as it starts."""
        self.check(req)
        seconds = self._deadline(req.options)
        deadline = deadline or time.monotonic() + seconds
        cache = self.research_cache.tenant(tenant) if self.research_cache is not None else None
        unsure = req.options.apply_unsure
        try:
            result = await self._run(  # the unsure pipeline is built on the worker, not the loop
                lambda: (self._unsure_applied() if unsure else self.pipeline).edit(
                    req.text,
                    req.context,
                    req.evidence,
                    None if req.sources is None else [s.model_dump() for s in req.sources],
                    cache=cache,
                    progress=progress,
                ),
                deadline,
            )
        except TimeoutError:
            reason = (
                f"the deadline of {seconds:g} s passed before the edit finished; returned the "
                "original text (raise options.deadline_s or retry later)"
            )
            result = EditResult.untouched(req.text, req.context, reason)
        self.metrics.observe_edit(result.status, result.timings_ms)
        return result

    async def edit(self, req: EditRequest, tenant: str = ANONYMOUS) -> dict[str, Any]:
        """The result contract as JSON (what ``purr edit --json`` prints); 503 while warming up
        unless ``options.wait_for_ready``."""
        self.require_ready(req.options)
        return (await self.edit_result(req, tenant=tenant)).to_json()

    async def edit_batch(self, req: BatchRequest, tenant: str = ANONYMOUS) -> list[BatchItem]:
        self._refuse_over_limit("items", len(req.items))
        self.require_ready(req.options)
        deadline = time.monotonic() + self._deadline(req.options)

        async def one(i: int, item: EditRequest) -> BatchItem:
            try:
                result = await self.edit_result(item, deadline, tenant)
                return BatchItem(index=i, result=result)
            except ApiError as e:
                info = error_body(e.status, e.message, e.code, e.param)["error"]
                return BatchItem(index=i, error=info)

        return list(await asyncio.gather(*(one(i, it) for i, it in enumerate(req.items))))

    async def check_citations(self, req: CheckRequest) -> CheckResponse:
        """``Pipeline.check``: the verdict of every citation (what ``purr check --json`` prints)."""
        self._refuse_over_limit("sources", len(req.sources))
        try:
            self.pipeline.check_input(req.text)
        except InputError as e:
            raise ApiError(413 if e.too_large else 422, str(e), "invalid_input") from None
        self.require_ready(EditOptions())
        sources = [s.model_dump() for s in req.sources]
        deadline = time.monotonic() + self.settings.deadline_s
        try:
            result = await self._run(
                lambda: self.pipeline.check(req.text, sources, req.qa, req.reference),
                deadline,
                cheap=True,
            )
        except TimeoutError:
            raise ApiError(
                504,
                f"checking did not finish within {self.settings.deadline_s:g} s; send fewer "
                "sources or retry later",
                "deadline_exceeded",
            ) from None
        except InputError as e:
            raise ApiError(422, str(e), "invalid_input") from None
        return CheckResponse.model_validate(result.to_json())

    async def run_cheap(self, fn: Callable[[], T], deadline: float) -> T:
        """``fn`` on the cheap lane's worker threads (``TimeoutError`` past ``deadline``)."""
        return await self._run(fn, deadline, cheap=True)

    async def score(self, req: ScoreRequest) -> ScoreResponse:
        from editor.report.auto_ais import score_text

        self.check(req)
        self.require_ready(EditOptions())
        a, j = self.pipeline.cfg.attribution, self.pipeline.cfg.judge
        deadline = time.monotonic() + self.settings.deadline_s
        try:
            report = await self._run(
                lambda: score_text(
                    self.pipeline.attribution,
                    req.text,
                    req.evidence,
                    req.context,
                    j.attributed_min,
                    a.decompose,
                    j.contradicted_min,
                ),
                deadline,
                cheap=True,
            )
        except TimeoutError:
            raise ApiError(
                504,
                f"scoring did not finish within {self.settings.deadline_s:g} s; send fewer "
                "evidence texts or retry later",
                "deadline_exceeded",
            ) from None
        return ScoreResponse.model_validate(report.to_json())
