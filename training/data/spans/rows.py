"""The span row: one (question, claim, evidence) pair with its label, spans and fix.

Standard library only: the generator and the trainer's bundle read it where purr's other
dependencies are not installed.
"""

from __future__ import annotations

import json
import lzma
import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from editor.verdicts import LABELS as LABELS  # the pair head's classes, in id order

SPAN_TAGS = ("C", "U")
"""Claim span kinds: ``C`` the evidence states another value, ``U`` the evidence does not say."""


@dataclass(frozen=True)
class Span:
    """Characters ``[start, end)`` of the claim, tagged ``C`` or ``U``; for ``C`` the evidence
    characters ``[fix_start, fix_end)`` that state the right value (-1 when it states none)."""

    start: int
    end: int
    tag: str
    fix_start: int = -1
    fix_end: int = -1


@dataclass(frozen=True)
class SpanRow:
    """One training pair. ``group`` is the source document (splits never cross it)."""

    id: str
    family: str
    label: str
    claim: str
    evidence: str
    group: str
    spans: tuple[Span, ...] = field(default_factory=tuple)
    question: str = ""

    def __post_init__(self) -> None:
        if self.label not in LABELS:
            raise ValueError(f"{self.id}: label must be one of {LABELS}, got {self.label!r}")
        for s in self.spans:
            if not 0 <= s.start < s.end <= len(self.claim) or s.tag not in SPAN_TAGS:
                raise ValueError(f"{self.id}: bad span {s} of a {len(self.claim)}-char claim")
            if s.fix_start >= 0 and not 0 <= s.fix_start < s.fix_end <= len(self.evidence):
                raise ValueError(f"{self.id}: bad fix {s} in {len(self.evidence)}-char evidence")

    def to_json(self) -> dict:
        d = asdict(self)
        d["spans"] = [[s.start, s.end, s.tag, s.fix_start, s.fix_end] for s in self.spans]
        if not self.question:
            del d["question"]
        return d

    @classmethod
    def from_json(cls, d: dict) -> SpanRow:
        spans = tuple(Span(*s) for s in d.get("spans", ()))
        return cls(
            d["id"],
            d["family"],
            d["label"],
            d["claim"],
            d["evidence"],
            d["group"],
            spans,
            d.get("question", ""),
        )


def open_text(path: str | Path, mode: str = "rt"):
    """A text file, xz-compressed when its name ends in ``.xz``."""
    p = Path(path)
    if p.suffix == ".xz":
        return lzma.open(p, mode, encoding="utf-8", preset=6 if "w" in mode else None)
    return p.open(mode.replace("t", ""), encoding="utf-8")


def temp_for(path: Path) -> Path:
    """A temporary file beside ``path`` for this process to write and rename; the ones a
    killed process left for the same path are removed first.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); (d / ".rows.jsonl.tmp-999999999.xz").write_text("half")
    4
    >>> temp_for(d / "rows.jsonl.xz").name == f".rows.jsonl.tmp-{os.getpid()}.xz", list(d.iterdir())
    (True, [])
    """
    for old in path.parent.glob(f".{path.stem}.tmp-*{path.suffix}"):
        pid = old.name.removesuffix(path.suffix).rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            old.unlink(missing_ok=True)
    return path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (this module travels in the GPU kit alone, so it keeps its
    own copy of ``retrieval.files.atomic``'s check)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_rows(rows: Iterable[SpanRow], path: str | Path) -> int:
    """Write ``rows`` to ``path`` in one step: a temporary file beside it, then renamed, so a
    process killed while writing leaves the old file or none, never half of one."""
    p = Path(path)
    tmp = temp_for(p)
    n = 0
    try:
        with open_text(tmp, "wt") as f:
            for r in rows:
                f.write(json.dumps(r.to_json(), ensure_ascii=False) + "\n")
                n += 1
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, p)
    finally:
        if tmp.exists():
            tmp.unlink()
    return n


def read_rows(path: str | Path) -> Iterator[SpanRow]:
    """Rows of a span file; a broken line is a ValueError naming the file and line."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such span file; write one with purr data spans")
    with open_text(p) as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield SpanRow.from_json(json.loads(line))
                except (json.JSONDecodeError, KeyError, TypeError) as e:
                    raise ValueError(f"{p}:{n}: bad span row ({e})") from None
