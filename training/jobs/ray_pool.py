"""Batch jobs on Ray: a pool of actors, each building its worker (a pipeline, a data maker) once,
fed batches of rows; results come back to the caller in submission order, so the caller, the
only writer of the output, keeps the row order and its resume journal.

A worker's process that dies (killed, out of memory, its node lost) is restarted by Ray and its
unfinished batches are run again (up to ``TASK_RETRIES`` times each, so a batch that kills every
worker it meets ends the job with one line instead of looping); a batch's result reaches the
caller once, when it finishes, so no row is lost or written twice.

Ray is the optional extra ``purr-edit[ray]``, imported only here and only when used.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import re
import socket
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from retrieval.extras import MissingExtraError

log = logging.getLogger(__name__)

INSTALL = "pip install 'purr-edit[ray]'"
T = TypeVar("T")
Worker = Callable[[list[Any]], list[Any]]


class RayUnavailableError(ValueError):
    """No Ray cluster answers at the address given, or Ray is not installed."""


class RayJobError(ValueError):
    """A worker could not start, or died on the same batch more than ``TASK_RETRIES`` times."""


TASK_RETRIES = 3


@dataclass(frozen=True)
class RayJob:
    """Where and how wide a batch job runs. ``address`` None starts a local cluster."""

    address: str | None = None
    workers: int = 2
    batch_size: int = 4
    cpus_per_worker: float | None = None
    """CPUs each actor reserves (and its inference threads); None: see ``cpus``."""

    @property
    def cpus(self) -> float:
        """CPUs per actor: as given; on a cluster (an address) 1, since its nodes' size is not
        this machine's; on a local cluster this machine's cores shared out."""
        if self.cpus_per_worker is not None:
            return self.cpus_per_worker
        if self.address:
            return 1.0
        return float(max(1, (os.cpu_count() or 1) // self.workers))

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"--ray-workers must be >= 1, got {self.workers}")
        if self.batch_size < 1:
            raise ValueError(f"--ray-batch-size must be >= 1, got {self.batch_size}")


def _ray():
    try:
        import ray
    except ImportError:
        raise MissingExtraError(f"--ray needs Ray: {INSTALL}") from None
    return ray


def _check_address(address: str, timeout_s: float = 5.0) -> None:
    """Fail fast, in one line, when nothing listens at ``address`` (ray.init would wait)."""
    if address == "auto":
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise RayUnavailableError(
            f"--ray {address}: give the cluster as HOST:PORT (the head's GCS, 6379 by default) "
            "or ray://HOST:10001, or 'auto' for the cluster this machine belongs to"
        )
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as e:
        raise RayUnavailableError(
            f"no Ray cluster answers at {address} ({e.strerror or e}); start one with "
            f"`ray start --head --port={port}`, or pass --ray without an address to run a local "
            "cluster"
        ) from None


def start(job: RayJob) -> bool:
    """Connect to ``job.address`` or start a local cluster; True when this call started Ray."""
    ray = _ray()
    if ray.is_initialized():
        return False
    passthrough = {k: v for k, v in os.environ.items() if k.startswith(("PURR_", "HF_"))}
    kwargs: dict[str, Any] = dict(
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        runtime_env={"env_vars": passthrough},
    )
    if job.address:
        _check_address(job.address)
        ray.init(address=job.address, **kwargs)
    else:
        cpus = max(os.cpu_count() or 1, int(job.workers * job.cpus + 0.999))
        for attempt in (1, 2):
            try:
                ray.init(num_cpus=cpus, **kwargs)
                break
            except Exception as e:  # noqa: BLE001 - Ray raises a bare Exception on this timeout
                if "timed out" not in str(e).lower():  # during startup, or waiting for a port
                    raise
                ray.shutdown()
                if attempt == 2:
                    raise RayUnavailableError(
                        f"the local Ray cluster did not start ({e}); the machine may be "
                        "overloaded: retry, or run without --ray"
                    ) from None
                log.warning("the local Ray cluster did not start in time; trying once more")
    return True


def stop(started: bool) -> None:
    if started:
        _ray().shutdown()


@contextlib.contextmanager
def session(job: RayJob | None) -> Iterator[None]:
    """Ray for the length of a batch job (nothing without a job): joined or started (an address
    that does not answer fails here, before the job writes anything), shut down after if started
    here. Ray prints its own notices (a worker died, a task is retried) to stdout; they go to
    stderr meanwhile, so stdout keeps the command's output."""
    if job is None:
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        started = start(job)
        try:
            yield
        finally:
            stop(started)


class _Actor:
    """One worker process: builds its worker once, then runs batches."""

    def __init__(self, make_worker: Callable[[], Worker], threads: int):
        os.environ["PURR_THREADS"] = str(threads)  # ONNX Runtime reads it per session
        try:
            import torch

            torch.set_num_threads(threads)
        except ImportError:
            pass
        self.worker = make_worker()

    def run(self, batch: list[Any]) -> list[Any]:
        return self.worker(batch)

    def pid(self) -> int:
        return os.getpid()


def _get(ray, ref, batch: list[Any]) -> list[Any]:
    """A batch's results; a worker that failed to start or kept dying becomes one line."""
    try:
        return ray.get(ref)
    except (ray.exceptions.RayActorError, ray.exceptions.RayTaskError) as e:
        raise RayJobError(
            f"a Ray worker failed on a batch of {len(batch)} row(s) and was not brought back "
            f"({_root_cause(e)}); rows written so far are kept, run the same command again to "
            "resume"
        ) from None


def _root_cause(error: BaseException) -> str:
    """The last ``SomeError: message`` line of a Ray error's remote traceback, else its first
    line.

    >>> _root_cause(RuntimeError("The actor died...\\n  File x\\nFileNotFoundError: no index"))
    'FileNotFoundError: no index'
    """
    text = str(error)
    found = re.findall(r"^\s*(\w+(?:Error|Exception): .+)$", text, flags=re.MULTILINE)
    if found:
        return found[-1].strip()[:300]
    return " ".join(text.split())[:300]


def actor_pool(job: RayJob, make_worker: Callable[[], Worker]) -> list[Any]:
    """``job.workers`` restartable actors, each building ``make_worker()`` once."""
    ray = _ray()
    remote = ray.remote(max_restarts=-1, max_task_retries=TASK_RETRIES, num_cpus=job.cpus)(_Actor)
    threads = max(1, int(job.cpus))
    return [remote.remote(make_worker, threads) for _ in range(job.workers)]


def ray_map(
    job: RayJob,
    make_worker: Callable[[], Worker],
    batches: Iterable[list[T]],
    stop_requested: Callable[[], bool] = lambda: False,
    actors: list[Any] | None = None,
    payload: Callable[[list[T]], list[Any]] = list,
) -> Iterator[tuple[list[T], list[Any]]]:
    """(batch, results) for every batch, in the order given, computed on the actor pool
    (``payload(batch)`` is what an actor receives).

    At most two batches per actor are in flight; the caller's pace (and ``stop_requested``)
    bounds how far ahead the pool runs. Batches still in flight when the caller stops are
    dropped, never returned."""
    ray = _ray()
    pool = actors if actors is not None else actor_pool(job, make_worker)
    window = 2 * len(pool)
    pending: collections.deque[tuple[list[T], Any]] = collections.deque()
    source = iter(batches)
    turn = 0
    exhausted = False
    try:
        while True:
            while not exhausted and len(pending) < window and not stop_requested():
                batch = next(source, None)
                if batch is None:
                    exhausted = True
                    break
                pending.append((batch, pool[turn % len(pool)].run.remote(payload(batch))))
                turn += 1
            if not pending or stop_requested():
                return
            batch, ref = pending.popleft()
            yield batch, _get(ray, ref, batch)
    finally:
        for _, ref in pending:
            ray.cancel(ref, force=False)
        if actors is None:
            for actor in pool:
                ray.kill(actor)
