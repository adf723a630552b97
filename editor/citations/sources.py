"""The sources a cited text may cite: ``Source``, read from user input, and as a premise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from editor.types import Evidence, evidence_text

MAX_SOURCES = 200
"""Most sources one text may come with."""


@dataclass(frozen=True)
class Source:
    """A document the text may cite."""

    id: str
    text: str
    title: str | None = None
    url: str | None = None

    def evidence(self, origin: str, text: str | None = None, query: str = "") -> Evidence:
        """This source as evidence (its own text, or a span of it)."""
        return Evidence(
            self.id,
            self.text if text is None else text,
            self.title or "",
            origin,
            self.url,
            query,
            1.0,
        )


def read_sources(raw: Any, where: str = "sources") -> list[Source]:
    """``Source``s from a list of ``{id, text, title?, url?}`` (or of strings, numbered from
    1); a ``ValueError`` naming the bad item and the fix.

    >>> [s.id for s in read_sources(["A.", {"id": 7, "text": "B."}])]
    ['1', '7']
    >>> read_sources([{"id": "1", "text": ""}])
    Traceback (most recent call last):
    ...
    ValueError: sources[0]: 'text' must be a non-empty string
    """
    if not isinstance(raw, list):
        raise ValueError(
            f"{where} must be a list of {{id, text}} objects, got {type(raw).__name__}"
        )
    if len(raw) > MAX_SOURCES:
        raise ValueError(
            f"{where} has {len(raw)} sources, over the limit of {MAX_SOURCES}; pass the ones "
            "the text cites"
        )
    out: list[Source] = []
    for n, item in enumerate(raw):
        if isinstance(item, str):
            item = {"id": str(n + 1), "text": item}
        if not isinstance(item, dict):
            raise ValueError(f"{where}[{n}] must be an object {{id, text, title?, url?}}")
        sid, text = item.get("id", n + 1), item.get("text")
        if not isinstance(sid, (str, int)) or isinstance(sid, bool) or not str(sid).strip():
            raise ValueError(f"{where}[{n}]: 'id' must be a string or a number")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{where}[{n}]: 'text' must be a non-empty string")
        for key in ("title", "url"):
            if item.get(key) is not None and not isinstance(item[key], str):
                raise ValueError(f"{where}[{n}]: '{key}' must be a string")
        out.append(Source(str(sid).strip(), text, item.get("title"), item.get("url")))
    ids = [s.id for s in out]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ValueError(f"{where}: ids {twice} are given twice; give each source its own id")
    return out


def premise_of(source: Source) -> str:
    """A source as the verifier's premise: its title first when the text does not start with
    it (a passage often names its subject only in the title).

    >>> premise_of(Source("1", "It is 330 metres tall.", "Eiffel Tower"))
    'Eiffel Tower. It is 330 metres tall.'
    """
    return evidence_text(source.evidence("given"))
