"""Artefacts a reader never sees half of: each is written beside its target (a hidden
``.NAME.tmp-PID-…`` sibling) and renamed into place.

A folder that already exists is exchanged with its replacement in one ``renameat2`` call
(``RENAME_EXCHANGE``, Linux), so the target path always holds a whole artefact, old or new;
elsewhere the old folder is renamed aside first (a window of a few microseconds where the path
is missing, recovered by the next writer: see ``recover``). Temporary siblings left by a killed
writer are removed by the next one.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from retrieval.files.errors import WRITE_ERRNOS, output_error, write_errno

log = logging.getLogger(__name__)

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _renameat2():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_EXCHANGE = _renameat2()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def temp_sibling(path: str | Path, kind: str = "tmp") -> Path:
    """A fresh hidden path beside ``path`` (same filesystem, so a rename is atomic).

    >>> temp_sibling("/x/index").name.startswith(".index.tmp-")
    True
    """
    path = Path(path)
    return path.parent / f".{path.name}.{kind}-{os.getpid()}-{time.monotonic_ns()}"


def remove_stale(path: str | Path) -> int:
    """Remove the temporary siblings of ``path`` whose writer is no longer running; their count."""
    path = Path(path)
    removed = 0
    if not path.parent.is_dir():
        return 0
    for kind in ("tmp", "old"):
        for sib in path.parent.glob(f".{path.name}.{kind}-*"):
            try:
                pid = int(sib.name.rsplit("-", 2)[-2])
            except (ValueError, IndexError):
                continue
            if pid != os.getpid() and not _alive(pid):
                shutil.rmtree(sib, ignore_errors=True) if sib.is_dir() else sib.unlink(True)
                removed += 1
    return removed


def recover(path: str | Path) -> bool:
    """Put back the previous artefact when a writer was killed between moving it aside and
    moving its replacement in (only where ``renameat2`` is missing); True when it did."""
    path = Path(path)
    if path.exists() or not path.parent.is_dir():
        return False
    olds = sorted(path.parent.glob(f".{path.name}.old-*"), key=lambda p: p.stat().st_mtime)
    if not olds:
        return False
    olds[-1].rename(path)
    log.warning("restored %s from %s (a writer was interrupted)", path, olds[-1].name)
    return True


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def swap_in(tmp: Path, out: Path) -> None:
    """Move the finished ``tmp`` to ``out``, replacing what was there; ``tmp`` is gone after."""
    if out.exists() and out.is_dir() and _EXCHANGE is not None:
        if _EXCHANGE(_AT_FDCWD, bytes(tmp), _AT_FDCWD, bytes(out), _RENAME_EXCHANGE) == 0:
            _fsync_dir(out.parent)
            shutil.rmtree(tmp, ignore_errors=True)  # now the old artefact
            return
        log.debug("renameat2 failed (errno %d); renaming in two steps", ctypes.get_errno())
    old = None
    if out.exists():
        old = temp_sibling(out, "old")
        out.rename(old)
    tmp.rename(out)
    _fsync_dir(out.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink(True)


def _fsync_tree(root: Path) -> None:
    for p in root.rglob("*"):
        if p.is_file():
            with open(p, "rb") as f:
                os.fsync(f.fileno())
    _fsync_dir(root)


@contextmanager
def atomic_dir(
    out: str | Path, copy_existing: bool = False, skip: tuple[str, ...] = ()
) -> Iterator[Path]:
    """Yield an empty (or, with ``copy_existing``, a copied, less the ``skip`` names the block
    rewrites anyway) temporary folder; when the block ends normally it replaces ``out`` in one
    step; when it raises, ``out`` is untouched.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> with atomic_dir(root / "model") as tmp:
    ...     _ = (tmp / "weights").write_text("w")
    >>> sorted(p.name for p in root.iterdir())
    ['model']
    """
    out = Path(out)
    tmp = temp_sibling(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        recover(out)
        remove_stale(out)
        if copy_existing and out.is_dir():
            shutil.copytree(out, tmp, ignore=shutil.ignore_patterns(*skip) if skip else None)
        else:
            tmp.mkdir()
    except OSError as e:
        number = write_errno(e)
        shutil.rmtree(tmp, ignore_errors=True)  # a half copy
        if number is not None:
            refused = OSError(number, os.strerror(number))
            raise output_error(refused, out, f"{out} is unchanged", 0, more=True) from None
        raise
    try:
        yield tmp
        _fsync_tree(tmp)
        swap_in(tmp, out)
    except BaseException as e:
        written = tree_bytes(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
        number = write_errno(e)
        if number is not None:
            refused = OSError(number, os.strerror(number))
            raise output_error(refused, out, f"{out} is unchanged", written, more=True) from None
        raise


def tree_bytes(folder: Path) -> int:
    """Bytes of the files under ``folder`` (0 when it is gone)."""
    total = 0
    for root, _dirs, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a reader sees the old file or the new one."""
    with atomic_file(path) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | Path, text: str) -> None:
    """``write_bytes`` of ``text`` in UTF-8."""
    write_bytes(path, text.encode("utf-8"))


def save_png(fig, path: str | Path, dpi: int = 120) -> None:
    """A matplotlib figure saved as a PNG atomically (rendered in memory, written in one step)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    write_bytes(path, buf.getvalue())


@contextmanager
def atomic_file(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` (with its last suffix, so ``.xz`` still means
    compressed) to write; when the block ends normally it replaces ``path`` in one step.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "rows.jsonl.xz"
    >>> with atomic_file(target) as tmp:
    ...     _ = tmp.write_bytes(b"x")
    ...     tmp.suffix
    '.xz'
    >>> [p.name for p in target.parent.iterdir()]
    ['rows.jsonl.xz']
    """
    path = Path(path)
    tmp = temp_sibling(path)
    tmp = tmp.with_name(tmp.name + path.suffix)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale(path)
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except OSError as e:
        written = tmp.stat().st_size if tmp.exists() else 0
        tmp.unlink(missing_ok=True)
        if e.errno in WRITE_ERRNOS:
            raise output_error(e, path, f"{path} is unchanged", written, more=True) from None
        raise
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
