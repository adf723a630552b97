"""Whether two slots state the same thing: the value comparisons behind the slot checks.

Two slots are comparable when they state the same kind of thing (a date, a quantity in the same
unit, a name of the same family); comparable slots state the same value when a date range
overlaps, a number is within rounding (within 10% when the claim hedges it with "about",
"over", ...), or a name is the same once articles and possessives are dropped.
"""

from __future__ import annotations

import re
from typing import Any

from editor.claims.slots import Slot, approximate, date_range, family, norm, quantity
from editor.policy import same_quantity

_YEARS = re.compile(r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b")
_DIGITS = re.compile(r"\d")
_DIGIT_RUNS = re.compile(r"\d+")
_WORD_ORDINALS = (
    "second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
    "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
).split()
_ORDINAL = re.compile(
    rf"^(?:the\s+)?(?:\d+(?:st|nd|rd|th)|{'|'.join(_WORD_ORDINALS)})$", re.I
)  # "first" and "last" are left out: "the first woman to ..." ranks nothing against a rival


def ordinal_value(text: str) -> int | None:
    """The rank an ordinal states ("the 16th" 16, "fifth" 5); None for anything else.

    >>> ordinal_value("the 16th"), ordinal_value("Fifth"), ordinal_value("first")
    (16, 5, None)
    """
    t = text.strip().lower()
    if not _ORDINAL.match(t):
        return None
    t = re.sub(r"^the\s+", "", t)
    return int(t[:-2]) if t[:1].isdigit() else _WORD_ORDINALS.index(t) + 2


NAME_KINDS = {"person", "org", "place", "norp", "other"}
"""The slot kinds that are names."""

COMPARED_KINDS = {"date", "number", "ordinal"} | NAME_KINDS
"""The slot kinds the checks compare."""

_STAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2})?\b")
"""A machine timestamp (ISO 8601 date, maybe with a time): metadata more often than a fact."""


def comparable(claim_doc: Any, slot: Slot, ev_doc: Any, other: Slot) -> bool:
    """Whether ``other`` states the same kind of thing as ``slot`` (a date, a quantity in the
    same unit, a name of the same family)."""
    if family(slot.kind) != family(other.kind):
        return False
    if slot.kind == "ordinal":  # "the 16th busiest", not "first"
        return bool(_ORDINAL.match(slot.text.strip())) and bool(_ORDINAL.match(other.text.strip()))
    if slot.kind == "date" and bool(_STAMP.search(slot.text)) != bool(_STAMP.search(other.text)):
        return False  # "2007-05-22" in a page is a timestamp (when it was published), not prose
    if slot.kind == "date" and date_range(slot.text) is not None:
        return date_range(other.text) is not None
    if slot.kind in {"date", "number"}:  # a number, or a date without a year ("27 million years")
        a = quantity(slot.text, claim_doc.text[slot.end : slot.end + 40])
        b = quantity(other.text, ev_doc.text[other.end : other.end + 40])
        return a is not None and b is not None and a[1] == b[1]
    return True


def states_same(claim_doc: Any, slot: Slot, ev_doc: Any, other: Slot) -> bool:
    """Whether slot ``other`` of ``ev_doc`` states the value slot ``slot`` of ``claim_doc``
    states: the same date or quantity within the checks' tolerances (see the module doc), the
    same name. Slots of different kinds never do."""
    if not comparable(claim_doc, slot, ev_doc, other):
        return False
    hedge = _hedged(claim_doc.text, slot)
    if slot.kind == "date" and date_range(slot.text) is not None:
        mine, theirs = date_range(slot.text), date_range(other.text)
        assert mine is not None and theirs is not None
        lo, hi = mine
        if hedge:  # "about 1890", "around the 1890s": a year either way
            lo, hi = lo.replace(year=lo.year - 1), hi.replace(year=hi.year + 1)
        if len(_DIGIT_RUNS.findall(slot.text)) > 1:  # "from 1887 to 1895" states both ends
            ends = (theirs[0].year, theirs[1].year) == (mine[0].year, mine[1].year)
            inside = lo <= theirs[0] and theirs[1] <= hi
            return ends or (hedge and inside) or (theirs[0] <= mine[0] and mine[1] <= theirs[1])
        return lo <= theirs[1] and theirs[0] <= hi
    if slot.kind == "ordinal":
        return ordinal_value(slot.text) == ordinal_value(other.text)
    if slot.kind in {"date", "number"}:
        a = quantity(slot.text, claim_doc.text[slot.end : slot.end + 40])
        b = quantity(other.text, ev_doc.text[other.end : other.end + 40])
        assert a is not None and b is not None
        return same_quantity(a[0], b[0], hedge)  # counts and years exact, others within rounding
    return bare_name(slot.text) == bare_name(other.text)


def bare_name(text: str) -> str:
    """A name as compared: no possessive, no leading article ("the Spanish Empire's")."""
    return norm(re.sub(r"^(?:the|The)\s+|['’]s$", "", text.strip()))


def nested_names(slot: Slot, other: Slot) -> bool:
    """Whether one name holds the other ("the Lesser Antilles of the West Indies" and "the West
    Indies"): a more specific name, not a different one.

    >>> nested_names(Slot(0, 5, "the Lesser Antilles of the West Indies", "place"),
    ...              Slot(0, 5, "the West Indies", "place"))
    True
    """
    if slot.kind not in NAME_KINDS:
        return False
    a, b = f" {bare_name(slot.text)} ", f" {bare_name(other.text)} "
    return a.strip() != "" and b.strip() != "" and (a in b or b in a)


def named_in(slot: Slot, everything: str) -> bool:
    """Whether the evidence mentions the name (a person's surname will do)."""
    name = bare_name(slot.text)
    surname = name.split()[-1] if slot.kind == "person" and name else ""
    return bool(name) and (
        f" {name} " in everything or (len(surname) > 3 and f" {surname} " in everything)
    )


def _hedged(text: str, slot: Slot) -> bool:
    """Whether the words before the slot's number hedge it ("about 300 metres")."""
    m = _YEARS.search(slot.text) or _DIGITS.search(slot.text)
    cut = slot.start + (m.start() if m else 0)
    return approximate(text[:cut])


def is_year_range(slot: Slot) -> bool:
    """Whether a date slot states two years ("1887 to 1889", "1914-1918")."""
    return len(_YEARS.findall(slot.text)) > 1


def outermost(slots: list[Slot]) -> list[Slot]:
    """Slots not inside a longer slot of the same text ('1887' inside '31 March 1887')."""
    return [
        s
        for s in slots
        if not any(o is not s and o.start <= s.start and s.end <= o.end for o in slots)
    ]
