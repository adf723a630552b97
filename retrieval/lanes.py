"""Cheap requests first: model calls of an urgent request run before the others'.

``purr serve`` answers score and check requests (given sources, no research) on a lane of their
own threads, but their model calls still share the cores with the edits' and wait behind them:
on 2 cores a 0.05 s score request took 2 s at p95 under 16 clients. With ``PURR_PRIORITY`` on,
the cheap lane runs each request inside ``urgent()``, and every ONNX session sits behind a
``PrioritySession``: while an urgent request is in flight, a call that is not urgent waits
before it starts, until the urgent requests ahead of it are done (not those that come after
it, and at most ``PURR_PRIORITY_MAX_WAIT_MS`` per call, so edits are slowed, never starved).

The gate is one per process (``LANES``), as the cores and the ONNX sessions it guards are.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

_URGENT: ContextVar[bool] = ContextVar("purr_urgent", default=False)


class Lanes:
    """Counts the urgent requests in flight; other calls wait for none to be left.

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> lanes, other = Lanes(), ThreadPoolExecutor(1)
    >>> with lanes.urgent():  # another thread's call waits; the urgent request's own does not
    ...     other.submit(lanes.wait_turn, 0.01).result(), lanes.wait_turn(0.01)
    (False, True)
    >>> lanes.in_flight, other.submit(lanes.wait_turn, 0.01).result()
    (0, True)
    >>> with lanes.urgent():  # a call waits only for the requests that started before it
    ...     waiting = other.submit(lanes.wait_turn, 5.0)
    ...     while lanes.started == lanes.finished or not waiting.running():
    ...         pass
    >>> with lanes.urgent():  # the next urgent request does not hold it back
    ...     waiting.result()
    True
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.started = 0
        self.finished = 0

    @property
    def in_flight(self) -> int:
        return self.started - self.finished

    @contextlib.contextmanager
    def urgent(self) -> Iterator[None]:
        """The block is one urgent request: its model calls do not wait, others' do."""
        token = _URGENT.set(True)
        with self._cond:
            self.started += 1
        try:
            yield
        finally:
            with self._cond:
                self.finished += 1
                self._cond.notify_all()
            _URGENT.reset(token)

    def wait_turn(self, max_wait_s: float) -> bool:
        """Wait, up to ``max_wait_s``, until as many urgent requests have finished as had
        started when the call came (at once inside one): a call waits for the urgent requests
        ahead of it, not for those that come after it. Whether its turn came."""
        if _URGENT.get():
            return True
        with self._cond:
            ahead = self.started
            return self._cond.wait_for(lambda: self.finished >= ahead, timeout=max_wait_s)


LANES = Lanes()
"""The process's gate (see the module doc)."""


class PrioritySession:
    """An ONNX ``InferenceSession`` (or a ``BatchedSession``) whose ``run`` first waits for the
    urgent requests in flight (``Lanes.wait_turn``)."""

    def __init__(self, session: Any, max_wait_s: float, lanes: Lanes = LANES) -> None:
        self.session = session
        self.max_wait_s = max_wait_s
        self.lanes = lanes

    def __getattr__(self, name: str) -> Any:  # get_inputs, get_outputs, ... of the session
        return getattr(self.session, name)

    def run(self, output_names: Any, feed: dict[str, Any], run_options: Any = None) -> list:
        self.lanes.wait_turn(self.max_wait_s)
        return self.session.run(output_names, feed, run_options)
