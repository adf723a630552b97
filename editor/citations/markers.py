"""Markers kept out of the editor's reach, then put back where their words went.

``protect(text)`` takes every citation marker out (with the whitespace before it) and records
where it sat in the clean text; the clean text is what the research and revision stages see.
``restore(protected, edited)`` aligns the clean text with its edited version character by
character and puts each marker back after the words it followed: inside an unchanged stretch at
the same place, after a rewritten stretch at its end. Markers are never edited, renumbered or
dropped here; an unchanged text comes back byte for byte.

``format_marker`` writes a marker for new ids in the style the text already uses;
``set_markers`` rewrites a sentence's markers to cite the ids repair chose.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from editor.citations.document import Marker, parse_markers


@dataclass(frozen=True)
class Anchor:
    """A marker taken out: its insertion point in the clean text and the exact bytes removed
    (the marker with the whitespace before it)."""

    at: int
    text: str


@dataclass(frozen=True)
class Protected:
    """A text with its markers taken out."""

    original: str
    clean: str
    anchors: tuple[Anchor, ...]

    @property
    def has_markers(self) -> bool:
        return bool(self.anchors)


def protect(text: str, source_ids: Iterable[str] = ()) -> Protected:
    """The text without its markers, and where each one sat.

    >>> p = protect("Built in 1889 [1]. Tall [2][3].")
    >>> p.clean, [(a.at, a.text) for a in p.anchors]
    ('Built in 1889. Tall.', [(13, ' [1]'), (19, ' [2]'), (19, '[3]')])
    """
    markers = parse_markers(text, source_ids)
    clean: list[str] = []
    anchors: list[Anchor] = []
    pos = 0
    for m in markers:
        start = m.start
        while start > pos and text[start - 1] in " \t":
            start -= 1
        clean.append(text[pos:start])
        at = sum(len(c) for c in clean)
        anchors.append(Anchor(at, text[start : m.end]))
        pos = m.end
    clean.append(text[pos:])
    return Protected(text, "".join(clean), tuple(anchors))


def _strip_new_markers(clean: str, edited: str) -> str:
    """Markers the editor wrote that the clean text did not have are taken out: citations are
    not the editor's to make."""
    if not parse_markers(edited) or parse_markers(clean):
        return edited
    return protect(edited).clean


def map_offset(opcodes: Sequence[tuple[str, int, int, int, int]], at: int, old: str = "") -> int:
    """Where insertion point ``at`` of the old text falls in the new one: before the
    punctuation it preceded when that punctuation is kept ("1887 [1]." -> "1889 [1]."), else
    after the character it followed.

    >>> ops = difflib.SequenceMatcher(None, "in 1889.", "in 1887.", autojunk=False).get_opcodes()
    >>> map_offset(ops, 7)
    7
    """
    if at <= 0:
        return 0
    if old[at : at + 1] in _PUNCT:
        for tag, i1, i2, j1, _j2 in opcodes:
            if tag == "equal" and i1 <= at < i2:
                return j1 + (at - i1)
    for tag, i1, i2, j1, j2 in opcodes:
        if i1 < at <= i2:
            return j1 + (at - i1) if tag == "equal" else j2
    return opcodes[-1][4] if opcodes else at


_PUNCT = frozenset(".,;:!?")
_TAIL = frozenset(".,;:!?…\"')]” \t\n")


def _common_tail(a: str, b: str) -> int:
    """Length of the closing punctuation (and spacing) both texts end with."""
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n] and a[-1 - n] in _TAIL:
        n += 1
    return n


def restore(protected: Protected, edited: str) -> str:
    """``edited`` (an edit of ``protected.clean``) with the markers put back.

    >>> p = protect("It has minimal ornamentation [3]. It opened in 1889 [1].")
    >>> restore(p, "It has minimal decoration. It opened in 1887.")
    'It has minimal decoration [3]. It opened in 1887 [1].'
    >>> restore(protect("It arrived in the U.S. Civil War [2]."), "It arrived in Constantinople.")
    'It arrived in Constantinople [2].'
    >>> restore(p, p.clean) == p.original
    True
    """
    if edited == protected.clean:
        return protected.original
    if not protected.anchors:
        return edited
    edited = _strip_new_markers(protected.clean, edited)
    clean = protected.clean
    # the closing punctuation both end with is aligned first: a marker before the final full
    # stop stays before it, whatever the edit did to the words
    tail = _common_tail(clean, edited)
    body_old, body_new = len(clean) - tail, len(edited) - tail
    ops = difflib.SequenceMatcher(
        None, clean[:body_old], edited[:body_new], autojunk=False
    ).get_opcodes()
    placed = []
    for n, a in enumerate(protected.anchors):
        if a.at >= body_old:
            at = body_new + (a.at - body_old)
        else:
            at = map_offset(ops, a.at, clean)
        placed.append((at, n, a.text))
    out = edited
    for at, _, marker in sorted(placed, key=lambda p: (p[0], p[1]), reverse=True):
        # a marker put back after a space the edit left keeps its own space only
        if marker[:1].isspace() and at > 0 and out[at - 1 : at].isspace():
            marker = marker.lstrip()
        out = out[:at] + marker + out[at:]
    return out


def marker_style(markers: Sequence[Marker]) -> str:
    """The style a text cites in: ``caret`` ([^1]), ``comma`` ([1, 3]) or ``bracket`` ([1][3]).

    >>> marker_style(parse_markers("A [^1]. B [^2]."))
    'caret'
    >>> marker_style(parse_markers("A [1, 2]. B [3]."))
    'comma'
    """
    if any(m.text.startswith("[^") for m in markers):
        return "caret"
    if any(len(m.ids) > 1 and "," in m.text for m in markers):
        return "comma"
    return "bracket"


def format_marker(ids: Sequence[str], style: str = "bracket") -> str:
    """A marker naming ``ids`` in ``style``.

    >>> format_marker(["2"]), format_marker(["1", "4"], "comma"), format_marker(["1", "4"], "caret")
    ('[2]', '[1, 4]', '[^1][^4]')
    """
    if style == "caret":
        return "".join(f"[^{i}]" for i in ids)
    if style == "comma":
        return "[" + ", ".join(ids) + "]"
    return "".join(f"[{i}]" for i in ids)


def marker_before_period(text: str, markers: Sequence[Marker]) -> bool:
    """Whether the text puts markers before a sentence's closing punctuation ("x [1].") rather
    than after it ("x. [1]"); before when it has no markers.

    >>> marker_before_period("A. [1] B. [2]", parse_markers("A. [1] B. [2]"))
    False
    """
    if not markers:
        return True
    after = sum(1 for m in markers if re.search(r"[.!?]\s*$", text[: m.start]) is not None)
    return after * 2 < len(markers)


_END = re.compile(r"([.!?…]+[\"')\]]*)?(\s*)$")


def _add_marker(segment: str, marker: str, before_period: bool) -> str:
    """``segment`` with ``marker`` at its end, before or after the closing punctuation."""
    m = _END.search(segment)
    assert m is not None
    core_end = m.start()
    punct, space = m.group(1) or "", m.group(2)
    core = segment[:core_end]
    if before_period:
        return f"{core} {marker}{punct}{space}"
    return f"{core}{punct} {marker}{space}"


def set_markers(
    segment: str,
    keep_ids: Sequence[str],
    new_ids: Sequence[str],
    style: str,
    before: bool,
    known: Sequence[str],
) -> str:
    """``segment`` citing ``keep_ids`` (markers naming only those stay as they are) plus
    ``new_ids``: the first marker that names none of ``keep_ids`` is rewritten in place to name
    the new ids (the text's own placement kept), other markers are removed with the space before
    them, and new ids with no marker to take over are added at the end.

    >>> set_markers("It is tall.[^2] Yes.", [], ["3"], "caret", False, ["2", "3"])
    'It is tall.[^3] Yes.'
    """
    out = segment
    if new_ids:
        takeover = next(
            (m for m in parse_markers(out, known) if not any(i in keep_ids for i in m.ids)), None
        )
        if takeover is not None:
            out = out[: takeover.start] + format_marker(list(new_ids), style) + out[takeover.end :]
            keep_ids, new_ids = [*keep_ids, *new_ids], ()
    for m in reversed(parse_markers(out, known)):
        ids = [i for i in m.ids if i in keep_ids]
        if len(ids) == len(m.ids):
            continue
        start = m.start
        while start > 0 and out[start - 1] in " \t":
            start -= 1
        repl = (" " if start < m.start else "") + format_marker(ids, style) if ids else ""
        out = out[:start] + repl + out[m.end :]
    if new_ids:
        out = _add_marker(out, format_marker(list(new_ids), style), before)
    return out
