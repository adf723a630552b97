"""glibc's malloc arenas for the server process (``PURR_MALLOC_ARENAS``).

glibc gives each thread that allocates concurrently an arena of its own, up to 8 per core; a
server whose thread pool runs model calls keeps memory freed in one arena from being reused by
another, so resident memory creeps up under load. Capping the arenas (``mallopt(M_ARENA_MAX)``,
what ``MALLOC_ARENA_MAX`` sets before a process starts) trades a little allocator contention for
memory that is reused. ``purr bench serve --mix --malloc-arenas N`` measures it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os

log = logging.getLogger(__name__)
M_ARENA_MAX = -8  # glibc's mallopt parameter number
DEFAULT_ARENAS = 2


def arenas_setting(env: dict[str, str] | None = None) -> int:
    """The arena cap asked for: ``PURR_MALLOC_ARENAS`` (0 leaves glibc's default).

    >>> arenas_setting({}), arenas_setting({"PURR_MALLOC_ARENAS": "0"})
    (2, 0)
    """
    raw = (os.environ if env is None else env).get("PURR_MALLOC_ARENAS", str(DEFAULT_ARENAS))
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(
            f"PURR_MALLOC_ARENAS must be a whole number of arenas (0: glibc's default), got {raw!r}"
        ) from None
    if n < 0:
        raise ValueError(f"PURR_MALLOC_ARENAS must be >= 0, got {n}")
    return n


def limit_arenas(n: int) -> bool:
    """Cap this process's malloc arenas at ``n`` (call before the worker threads start); False
    where it cannot (not glibc, or ``n`` is 0)."""
    if n <= 0:
        return False
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        ok = bool(libc.mallopt(M_ARENA_MAX, n))
    except (OSError, AttributeError):  # not glibc
        return False
    if ok:
        log.info("malloc arenas capped at %d", n)
    return ok
