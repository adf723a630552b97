"""One-line messages for the ways an output can fail to be written (full disk, a file-size
limit, a read-only filesystem, no permission), naming the path and the fix."""

from __future__ import annotations

import errno
import os
import re
import shutil
from pathlib import Path

_FIXES = {
    errno.ENOSPC: ("no space left on the device", "free some space or write elsewhere"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or write elsewhere"),
    errno.EFBIG: (
        "the file-size limit was reached",
        "raise the limit (ulimit -f) or write elsewhere",
    ),
    errno.EROFS: ("the filesystem is read-only", "write to a writable path"),
    errno.EACCES: ("permission denied", "write to a path you can write or fix its permissions"),
    errno.EPERM: (
        "operation not permitted",
        "write to a path you can write or fix its permissions",
    ),
}
WRITE_ERRNOS = frozenset(_FIXES)
"""The errnos that mean "this output cannot be written here", not a bug."""


_ERRNO_TEXT = re.compile(r"\[Errno (\d+)\]")
_STRERRORS = {os.strerror(n): n for n in WRITE_ERRNOS}


def write_errno(exc: BaseException) -> int | None:
    """The errno of a refused write inside ``exc``, however the library wrapped it:
    ``shutil.copytree`` gathers its files' errors into one ``shutil.Error`` without an errno,
    FAISS raises ``RuntimeError`` from C++ and safetensors ``SafetensorError`` from Rust, each
    with the system's message in its text.

    >>> write_errno(OSError(28, "No space left on device"))
    28
    >>> write_errno(RuntimeError("Error in faiss::FileIOWriter: fwrite failed: No space left on device"))
    28
    >>> write_errno(ValueError("bad value")) is None
    True
    """
    if isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS:
        return exc.errno
    text = str(exc)
    for match in _ERRNO_TEXT.finditer(text):
        if int(match.group(1)) in WRITE_ERRNOS:
            return int(match.group(1))
    for message, number in _STRERRORS.items():  # C++ and Rust libraries: the text alone
        if message in text:
            return number
    return None


class OutputError(OSError):
    """An output could not be written; ``str()`` is one line with the path and the fix."""

    def __str__(self) -> str:
        return self.strerror or super().__str__()


def size(n: float) -> str:
    """Bytes for people.

    >>> size(512), size(2_500_000)
    ('512 B', '2.4 MiB')
    """
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def free_bytes(path: str | Path) -> int | None:
    """Free space on the filesystem that holds ``path`` (its nearest existing folder)."""
    folder = Path(path).absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def output_error(
    exc: OSError,
    path: str | Path | None = None,
    kept: str = "",
    needed: int | None = None,
    more: bool = False,
) -> OutputError:
    """``exc`` as an ``OutputError`` whose message names ``path`` (or the exception's own),
    what happened, for a full disk the space needed (``needed`` bytes, or with ``more`` more
    than what is free once the partial write is removed) and the space free, the fix and what
    was kept.

    >>> import errno
    >>> str(output_error(OSError(errno.ENOSPC, "No space left on device"), "out.jsonl",
    ...                  "the 12 rows before it are kept"))
    'cannot write out.jsonl: no space left on the device; free some space or write elsewhere (the 12 rows before it are kept)'
    """
    where = path if path is not None else (exc.filename or "the output")
    what, fix = _FIXES.get(exc.errno or 0, (exc.strerror or str(exc), "check the path"))
    if exc.errno in (errno.ENOSPC, errno.EDQUOT) and needed is not None:
        free = free_bytes(where)
        if free is None:
            what += f" ({'more than ' if more else ''}{size(needed)} needed)"
        elif more:  # it was cleaned up: all we know is that it did not fit in what is free now
            what += f" (it needs more than the {size(max(free, needed))} free there)"
        else:
            what += f" ({size(needed)} needed, {size(free)} free)"
    tail = f" ({kept})" if kept else ""
    message = f"cannot write {where}: {what}; {fix}{tail}"
    err = OutputError(exc.errno or 0, message)
    err.filename = str(where)
    return err
