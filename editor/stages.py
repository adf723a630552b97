"""Running a pipeline stage under a timeout without a shared pool that late stages can starve.

Python cannot stop a thread, so a stage that runs past its timeout keeps working until it
returns; its result is then dropped. In a shared ``ThreadPoolExecutor`` such stages hold the
workers, and once every worker is held, new stages wait in the queue and time out without having
run. ``StageRunner`` gives each call a thread of its own instead: a late stage costs only its
own thread, and ``running`` says how many are still at work. Each ``Pipeline`` owns one and
closes it with itself.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

T = TypeVar("T")


class StageTimeout(RuntimeError):
    """A stage ran past its timeout (its thread finishes in the background)."""


class StageRunner:
    """Runs one stage call per thread and waits for it at most ``timeout_s`` seconds.

    >>> runner = StageRunner()
    >>> runner.run(lambda: 2 + 2, 5.0, "sum")
    4
    >>> runner.close()
    >>> runner.run(lambda: 1, 5.0, "sum")
    Traceback (most recent call last):
    ...
    RuntimeError: the pipeline is closed; build a new one
    """

    def __init__(self, name: str = "purr-stage") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._running = 0
        self._closed = False

    @property
    def running(self) -> int:
        """Stage calls still at work, those past their timeout included."""
        return self._running

    def run(self, fn: Callable[[], T], timeout_s: float, stage: str) -> T:
        """``fn()``, or ``StageTimeout`` once ``timeout_s`` has passed; ``fn``'s own exception
        is raised as is."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the pipeline is closed; build a new one")
            self._running += 1
        future: Future[T] = Future()

        def work() -> None:
            try:
                future.set_result(fn())
            except BaseException as e:  # noqa: BLE001 - handed to the waiting caller
                future.set_exception(e)
            finally:
                with self._lock:
                    self._running -= 1

        context = contextvars.copy_context()  # the caller's (an edit's scope) goes with it
        threading.Thread(
            target=context.run, args=(work,), name=f"{self.name}-{stage}", daemon=True
        ).start()
        try:
            return future.result(timeout=timeout_s)
        except FutureTimeout:
            raise StageTimeout(f"{stage} timed out after {timeout_s:g} s") from None

    def close(self) -> None:
        """Refuse new stage calls (calls already running finish on their own)."""
        with self._lock:
            self._closed = True


def load_alongside(*loads: Callable[[], object] | None) -> None:
    """Run the given loads at once, each on its own thread (the ONNX sessions, file reads and
    native code overlap; Python-bound parts take turns), and raise the first error."""
    from concurrent.futures import ThreadPoolExecutor

    todo = [load for load in loads if load is not None]
    if len(todo) < 2:
        for load in todo:
            load()
        return
    with ThreadPoolExecutor(len(todo) - 1, thread_name_prefix="purr-load") as pool:
        running = [pool.submit(load) for load in todo[1:]]
        todo[0]()
        for future in running:
            future.result()
