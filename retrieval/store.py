"""On-disk snippet store: JSON lines plus ``.npy`` offsets for O(1) memory-mapped access."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from retrieval.types import Snippet

PASSAGES = "passages.jsonl"
OFFSETS = "passages.offsets.npy"
PASSAGE_DOC = "passage_doc.npy"
DOCS = "docs.jsonl"


def _encode(s: Snippet) -> bytes:
    row = {
        "id": s.id,
        "doc_id": s.doc_id,
        "title": s.title,
        "text": s.text,
        "start": s.start,
        "end": s.end,
        "url": s.url,
        "source": s.source,
    }
    return (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")


def write_store(
    directory: Path,
    groups: Iterable[tuple[dict, list[Snippet]]],
    existing: SnippetStore | None = None,
) -> int:
    """Write (or extend a copy of) a store in ``directory``: one ``(doc_record, snippets)`` per
    document. Returns the number of passages written in total."""
    offsets: list[int] = [0]
    passage_doc: list[int] = []
    n_docs = 0
    with (
        open(directory / PASSAGES, "ab" if existing else "wb") as fp,
        open(directory / DOCS, "a" if existing else "w", encoding="utf-8") as fd,
    ):
        if existing is not None:
            offsets = existing.offsets.tolist()
            passage_doc = existing.passage_doc.tolist()
            n_docs = existing.n_docs
        pos = offsets[-1]
        for doc, snippets in groups:
            if not snippets:
                continue
            fd.write(
                json.dumps(
                    {**doc, "first": len(passage_doc), "count": len(snippets)}, ensure_ascii=False
                )
                + "\n"
            )
            for s in snippets:
                data = _encode(s)
                fp.write(data)
                pos += len(data)
                offsets.append(pos)
                passage_doc.append(n_docs)
            n_docs += 1
    np.save(directory / OFFSETS, np.asarray(offsets, dtype=np.int64))
    np.save(directory / PASSAGE_DOC, np.asarray(passage_doc, dtype=np.int32))
    return len(passage_doc)


class SnippetStore:
    """Random access to the snippets of an index directory."""

    def __init__(self, directory: Path, mmap: bool = True):
        self.directory = directory
        mode = "r" if mmap else None
        self.offsets = np.load(directory / OFFSETS, mmap_mode=mode)  # (n + 1,)
        self.passage_doc = np.load(directory / PASSAGE_DOC, mmap_mode=mode)  # (n,)
        self._fh = open(directory / PASSAGES, "rb")  # noqa: SIM115 - closed in close()
        self._docs: list[dict] | None = None

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def docs(self) -> list[dict]:
        """Document records ``{id, title, url, first, count}`` (loaded on first use)."""
        if self._docs is None:
            with open(self.directory / DOCS, encoding="utf-8") as f:
                self._docs = [json.loads(line) for line in f if line.strip()]
        return self._docs

    @property
    def n_docs(self) -> int:
        return len(self.docs)

    def get(self, row: int) -> Snippet:
        if not 0 <= row < len(self):
            raise IndexError(f"passage row {row} out of range 0..{len(self) - 1}")
        a, b = int(self.offsets[row]), int(self.offsets[row + 1])
        data = os_pread(self._fh, b - a, a)
        return Snippet(**json.loads(data))

    def get_many(self, rows: Iterable[int]) -> list[Snippet]:
        return [self.get(int(r)) for r in rows]

    def doc_rows(self, row: int) -> range:
        """Passage rows of the document that passage ``row`` belongs to."""
        doc = self.docs[int(self.passage_doc[row])]
        return range(doc["first"], doc["first"] + doc["count"])

    def __iter__(self) -> Iterator[Snippet]:
        """Every snippet, in row order (streamed)."""
        with open(self.directory / PASSAGES, encoding="utf-8") as f:
            for line in f:
                yield Snippet(**json.loads(line))

    def close(self) -> None:
        self._fh.close()


def os_pread(fh, size: int, offset: int) -> bytes:
    import os

    return os.pread(fh.fileno(), size, offset)
