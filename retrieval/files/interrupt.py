"""Graceful stops for batch jobs: the first SIGTERM or Ctrl-C asks the job to stop after the
row in hand (written, so nothing is lost); a second one stops at once."""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType
from typing import Any

log = logging.getLogger(__name__)


class GracefulStop:
    """A context manager: inside it ``requested`` turns True on SIGTERM/SIGINT.

    Jobs check ``requested`` between rows. ``exit_code`` is the shell's 128 + signal number
    (130 for Ctrl-C, 143 for SIGTERM), or 0 when no signal came.

    >>> import os, signal
    >>> with GracefulStop() as stop:
    ...     os.kill(os.getpid(), signal.SIGTERM)
    ...     stop.requested, stop.exit_code
    (True, 143)
    """

    def __init__(self, signals: tuple[int, ...] = (signal.SIGTERM, signal.SIGINT)) -> None:
        self.signals = signals
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @property
    def exit_code(self) -> int:
        return 128 + self.signum if self.signum is not None else 0

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else ""

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            raise KeyboardInterrupt  # the second signal: stop now
        self.signum = signum
        log.warning(
            "%s: finishing the row in hand, then stopping (send it again to stop now)",
            signal.Signals(signum).name,
        )

    def __enter__(self) -> GracefulStop:
        if threading.current_thread() is threading.main_thread():
            for s in self.signals:
                self._previous[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        self._previous.clear()
