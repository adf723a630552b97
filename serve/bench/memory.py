"""The server's memory, read from /proc: now, at its peak, and sampled through a load."""

from __future__ import annotations

import threading
import time
from pathlib import Path


def memory_mb(pid: int, field: str = "VmHWM") -> float | None:
    """A memory figure of ``pid`` from /proc in MB: ``VmHWM`` its peak resident memory,
    ``VmRSS`` its resident memory now."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class RssSampler:
    """The resident memory of ``pid`` every ``every_s`` seconds while in its ``with`` block:
    ``samples`` as ``[seconds, MB]``."""

    def __init__(self, pid: int, every_s: float = 5.0) -> None:

        self.pid, self.every_s = pid, every_s
        self.samples: list[list[float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        t0 = time.monotonic()
        while not self._stop.is_set():
            mb = memory_mb(self.pid, "VmRSS")
            if mb is not None:
                self.samples.append([round(time.monotonic() - t0, 1), mb])
            self._stop.wait(self.every_s)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def second_half_growth(self) -> float | None:
        """Growth from the middle sample to the last: a leak keeps growing, a warm-up does not.

        >>> r = RssSampler(0); r.samples = [[0, 100.0], [5, 110.0], [10, 121.0]]
        >>> r.second_half_growth()
        0.1
        """
        if len(self.samples) < 3:
            return None
        mid, last = self.samples[len(self.samples) // 2][1], self.samples[-1][1]
        return round(last / mid - 1, 3) if mid else None
