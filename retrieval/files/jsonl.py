"""The one reader and writer of every job that writes JSONL rows (``purr edit --input``,
``score``, ``data make``, ``data querygen``, ``eval``).

``RowJournal`` appends whole lines only: each row is one ``write`` of its encoded line, so a
kill leaves either the row or nothing; the file is fsynced at batch boundaries and on close. On
resume it reads what an earlier run left: a cut last line (a full disk, a crash of the machine)
or an unreadable or repeated line is moved aside to ``FILE.partial`` with a warning naming it,
and its row is redone; rows already written are skipped, so none is written twice; rows that
``redo`` selects (``--retry-degraded``) are taken out and redone.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from retrieval.files.atomic import write_bytes
from retrieval.files.errors import WRITE_ERRNOS, output_error

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class JournalSummary:
    """What one run did to its output file."""

    path: str
    written: int
    """rows this run wrote"""
    skipped: int
    """rows an earlier run had written (not redone)"""
    redone: int
    """rows redone: a cut or unreadable line moved aside, or a row ``redo`` selected"""
    partial: str | None
    """where cut or unreadable lines were moved, when there were any"""
    duplicates: int = 0
    """input items left out because an earlier item had their id"""

    def to_json(self) -> dict[str, Any]:
        return {
            "written": self.written,
            "skipped": self.skipped,
            "redone": self.redone,
            "partial": self.partial,
            "duplicate_ids": self.duplicates,
        }


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        row = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return row if isinstance(row, dict) else None


class RowJournal:
    """An append-only JSONL output that a killed run resumes without losing or doubling rows.

    ``key`` names each row (a field, or a function of the row); ``redo`` picks rows of an
    earlier run to take out and do again.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "out.jsonl"
    >>> _ = path.write_bytes(b'{"id": "a"}\\n{"id": "b"')  # a run killed mid-line
    >>> with RowJournal(path) as j:
    ...     todo = list(j.pending(["a", "b", "c"]))
    ...     for k in todo:
    ...         j.write({"id": k})
    >>> todo, path.read_text().count("\\n"), j.summary().redone
    (['b', 'c'], 3, 1)
    """

    def __init__(
        self,
        path: str | Path,
        key: str | Callable[[dict[str, Any]], str] = "id",
        redo: Callable[[dict[str, Any]], bool] | None = None,
        fsync_every: int = 64,
    ) -> None:
        if fsync_every < 1:
            raise ValueError(f"fsync_every must be >= 1, got {fsync_every}")
        self.path = Path(path)
        self._key = key if callable(key) else (lambda row, f=key: str(row[f]))
        self.redo = redo
        self.fsync_every = fsync_every
        self.rows: list[dict[str, Any]] = []
        """the whole rows an earlier run left (after the redone ones are taken out)"""
        self._done: set[str] = set()
        self._fd: int | None = None
        self._size = 0
        self._unsynced = 0
        self.written = self.skipped = self.redone = self.duplicates = 0
        self.partial: Path | None = None

    # -- opening: what an earlier run left ---------------------------------------------------

    def key(self, row: dict[str, Any]) -> str:
        return str(self._key(row))

    def open(self) -> RowJournal:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.is_file():
                self._recover()
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as e:
            if e.errno in WRITE_ERRNOS:
                raise output_error(e, self.path) from None
            raise
        self._size = os.fstat(self._fd).st_size
        return self

    def _recover(self) -> None:
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the file ends in a newline
        kept: list[bytes] = []
        aside: list[bytes] = []
        for line in [*lines, tail]:  # a tail that parses is whole (written by another tool)
            if not line.strip():
                continue
            row = _parse(line)
            if row is None:  # cut mid-way (JSON does not parse) or not an object
                aside.append(line)
                continue
            try:
                k = self.key(row)
            except (KeyError, TypeError):
                aside.append(line)
                continue
            if k in self._done:
                aside.append(line)  # a repeated row (an older version could double one)
                continue
            if self.redo is not None and self.redo(row):
                self.redone += 1
                continue
            self._done.add(k)
            self.rows.append(row)
            kept.append(line)
        self.redone += len(aside)
        rebuilt = b"".join(line + b"\n" for line in kept)
        if rebuilt == data:
            return
        if aside:
            self.partial = self.path.with_name(self.path.name + ".partial")
            with open(self.partial, "ab") as f:
                f.write(b"".join(line + b"\n" for line in aside))
            log.warning(
                "%s: %d cut or unreadable line(s) moved to %s; their rows are redone",
                self.path,
                len(aside),
                self.partial,
            )
        if data.startswith(rebuilt):
            os.truncate(self.path, len(rebuilt))  # only a cut tail: no rewrite needed
        else:
            write_bytes(self.path, rebuilt)

    # -- the run ---------------------------------------------------------------------------------

    def __contains__(self, key: object) -> bool:
        return str(key) in self._done

    def pending(self, items: Iterable[T], key: Callable[[T], str] = str) -> Iterator[T]:
        """The items whose key is not written yet (the others are counted as skipped); an item
        whose key an earlier item had is left out with a warning (its row would be a double)."""
        seen: set[str] = set()
        for item in items:
            k = str(key(item))
            if k in self._done:
                self.skipped += 1
                continue
            if k in seen:
                self.duplicates += 1
                log.warning(
                    "%s: id %r appears again in the input; only its first row is done", self.path, k
                )
                continue
            seen.add(k)
            yield item

    def write(self, row: dict[str, Any]) -> None:
        """Append ``row`` as one line in one write; a row whose key is written is refused."""
        self.write_many([row])

    def write_many(self, rows: list[dict[str, Any]]) -> None:
        """Append ``rows`` in one write (the variants of one seed: all of them, or none)."""
        if self._fd is None:
            raise RuntimeError("open the journal first (with RowJournal(path) as j: ...)")
        keys = [self.key(row) for row in rows]
        for k in keys:
            if k in self._done or keys.count(k) > 1:
                raise ValueError(f"{self.path}: row {k!r} is already written")
        data = b"".join(
            (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8") for row in rows
        )
        view = memoryview(data)
        try:
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
        except OSError as e:
            try:
                os.ftruncate(self._fd, self._size)  # no half line left behind
            except OSError:
                pass
            kept = f"the {len(self._done)} rows before it are kept; run the same command again to resume"
            if e.errno in WRITE_ERRNOS:
                raise output_error(e, self.path, kept, needed=len(data)) from None
            raise
        self._size += len(data)
        self._done.update(keys)
        self.written += len(rows)
        self._unsynced += len(rows)
        if self._unsynced >= self.fsync_every:
            self.sync()

    def sync(self) -> None:
        """fsync what was written (called at batch boundaries and on close)."""
        if self._fd is not None and self._unsynced:
            os.fsync(self._fd)
            self._unsynced = 0

    def close(self) -> None:
        if self._fd is not None:
            try:
                self.sync()
            finally:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> RowJournal:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def summary(self) -> JournalSummary:
        return JournalSummary(
            str(self.path),
            self.written,
            self.skipped,
            self.redone,
            str(self.partial) if self.partial else None,
            self.duplicates,
        )


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The whole rows of a JSONL output (a cut last line, as a killed run leaves, is left out).

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "o.jsonl"
    >>> _ = p.write_text('{"id": 1}\\n{"id"')
    >>> read_rows(p)
    [{'id': 1}]
    """
    rows = []
    for line in Path(path).read_bytes().split(b"\n"):
        row = _parse(line) if line.strip() else None
        if row is not None:
            rows.append(row)
    return rows
