"""One-line messages for the ways an output can fail to be written (full disk, a file-size
limit, a read-only filesystem, no permission), naming the path and the fix."""

from __future__ import annotations

import errno
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


class OutputError(OSError):
    """An output could not be written; ``str()`` is one line with the path and the fix."""

    def __str__(self) -> str:
        return self.strerror or super().__str__()


def output_error(exc: OSError, path: str | Path | None = None, kept: str = "") -> OutputError:
    """``exc`` as an ``OutputError`` whose message names ``path`` (or the exception's own),
    what happened, the fix and what was kept.

    >>> import errno
    >>> str(output_error(OSError(errno.ENOSPC, "No space left on device"), "out.jsonl",
    ...                  "the 12 rows before it are kept"))
    'cannot write out.jsonl: no space left on the device; free some space or write elsewhere (the 12 rows before it are kept)'
    """
    where = path if path is not None else (exc.filename or "the output")
    what, fix = _FIXES.get(exc.errno or 0, (exc.strerror or str(exc), "check the path"))
    tail = f" ({kept})" if kept else ""
    message = f"cannot write {where}: {what}; {fix}{tail}"
    err = OutputError(exc.errno or 0, message)
    err.filename = str(where)
    return err
