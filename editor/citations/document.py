"""A cited text parsed once: its sentences with their character spans and their citation
markers. Markers are structure, not text: they are found first, the sentences are split on the
text with the markers blanked out (same offsets), and each marker belongs to the sentence it
sits in or, placed after a sentence's end ("... 1889. [2]"), to the sentence before it.

Styles: ``[1]``, ``[1, 3]``, ``[1-3]``, ``[1][2]``, ``[^1]``, and ``[id]`` for the ids of the
given sources. A numeric marker that names no source is kept and reported as unknown; a
bracketed word that names no source ("[sic]") is text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from retrieval.sentences import split_spans

_BRACKET = re.compile(r"\[(\^?[^\[\]\n]{1,40})\]")
_NUMERIC = re.compile(r"^\^?\d+(?:\s*[-–]\s*\^?\d+)?$")
_RANGE = re.compile(r"^\^?(\d+)\s*[-–]\s*\^?(\d+)$")
MAX_RANGE = 50
"""A range marker longer than this ("[1-9999]") is read as one unknown id, not expanded."""


@dataclass(frozen=True)
class Marker:
    """One citation marker: its span in the text, the source ids it names, its own text."""

    start: int
    end: int
    ids: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class CitedSentence:
    """A sentence with its markers. ``start``/``end`` cover the markers that follow it;
    ``claim`` is what it says, markers removed."""

    start: int
    end: int
    text: str
    claim: str
    markers: tuple[Marker, ...]

    @property
    def citations(self) -> tuple[str, ...]:
        """The ids its markers name, in order, each once."""
        return tuple(dict.fromkeys(i for m in self.markers for i in m.ids))


def _ids(inner: str, known: frozenset[str]) -> tuple[str, ...] | None:
    """The source ids of a marker's inside, or None when it is not a marker.

    >>> _ids("1, 3", frozenset()), _ids("^2", frozenset()), _ids("2-4", frozenset())
    (('1', '3'), ('2',), ('2', '3', '4'))
    >>> _ids("sic", frozenset()), _ids("doc-a", frozenset({"doc-a"}))
    (None, ('doc-a',))
    """
    parts = [p.strip() for p in re.split(r"[,;]", inner)]
    if not parts or not all(parts):
        return None
    out: list[str] = []
    for part in parts:
        if part.lstrip("^") in known:
            out.append(part.lstrip("^"))
            continue
        if not _NUMERIC.match(part):
            return None
        r = _RANGE.match(part)
        if r and 0 < int(r.group(2)) - int(r.group(1)) <= MAX_RANGE:
            out.extend(str(i) for i in range(int(r.group(1)), int(r.group(2)) + 1))
        else:
            out.append(part.lstrip("^"))
    return tuple(out)


def parse_markers(text: str, source_ids: Iterable[str] = ()) -> list[Marker]:
    """The citation markers of ``text``, in order.

    >>> [(m.text, m.ids) for m in parse_markers("A [1][2]. B [^3]. C [sic] [4, 5].")]
    [('[1]', ('1',)), ('[2]', ('2',)), ('[^3]', ('3',)), ('[4, 5]', ('4', '5'))]
    """
    known = frozenset(str(i) for i in source_ids)
    out = []
    for m in _BRACKET.finditer(text):
        ids = _ids(m.group(1), known)
        if ids is not None:
            out.append(Marker(m.start(), m.end(), ids, m.group()))
    return out


def _claim(masked: str) -> str:
    """A sentence's words without its blanked markers: spaces collapsed, none before
    punctuation."""
    text = re.sub(r"\s+", " ", masked).strip()
    return re.sub(r"\s+([.,;:!?)])", r"\1", text)


@dataclass(frozen=True)
class CitedDocument:
    """A text split into sentences that carry their markers (see the module doc).

    >>> doc = CitedDocument.parse("Paris is in France [1]. It has 2 million people. [2][3]")
    >>> [(s.claim, s.citations) for s in doc.sentences]
    [('Paris is in France.', ('1',)), ('It has 2 million people.', ('2', '3'))]
    >>> doc.sentences[1].text
    'It has 2 million people. [2][3]'
    """

    text: str
    sentences: tuple[CitedSentence, ...]

    @classmethod
    def parse(cls, text: str, source_ids: Iterable[str] = ()) -> CitedDocument:
        markers = parse_markers(text, source_ids)
        masked = list(text)
        for m in markers:
            masked[m.start : m.end] = " " * (m.end - m.start)
        blank = "".join(masked)
        spans = split_spans(blank)
        owned: list[list[Marker]] = [[] for _ in spans]
        for m in markers:
            # the sentence it sits in, or the last one that starts before it
            i = max((k for k, (a, _) in enumerate(spans) if a <= m.start), default=0)
            if owned:
                owned[i].append(m)
        sentences = []
        for (a, b), ms in zip(spans, owned, strict=True):
            end = max([b, *(m.end for m in ms)])
            claim = _claim(blank[a:b])
            sentences.append(CitedSentence(a, end, text[a:end], claim, tuple(ms)))
        return cls(text, tuple(sentences))

    @property
    def markers(self) -> tuple[Marker, ...]:
        return tuple(m for s in self.sentences for m in s.markers)

    def unknown_markers(self, source_ids: Iterable[str]) -> list[str]:
        """The marker ids that name none of ``source_ids``, each once."""
        known = {str(i) for i in source_ids}
        ids = (i for m in self.markers for i in m.ids)
        return list(dict.fromkeys(i for i in ids if i not in known))

    def with_sentences(self, segments: Sequence[str]) -> str:
        """The text with each sentence's span replaced by its segment; what lies between
        sentences is kept as it was."""
        out, pos = [], 0
        for s, seg in zip(self.sentences, segments, strict=True):
            out.append(self.text[pos : s.start])
            out.append(seg)
            pos = s.end
        out.append(self.text[pos:])
        return "".join(out)
