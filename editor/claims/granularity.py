"""Slots the evidence states differently without contradicting them: one place under two names
("the UK" / "Britain", "Dutch" / "the Netherlands"), a place the evidence names more coarsely (a
country for the claim's region), and a title or body where the claim names a person ("chaired
by the Program Committee" against "chaired by Jane Smith"). The slot check asks these before it
calls two values a contradiction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from editor.claims.places import key, load
from editor.claims.slots import Slot, norm

PLACE_KINDS = frozenset({"place", "norp", "org"})
"""Kinds a gazetteer name may fill: spaCy labels "the UK" GPE, ORG or NORP by context."""


@dataclass(frozen=True)
class Restated:
    """Two values of one slot that do not contradict: ``matches`` (one place, or the
    evidence's inside the claim's) or ``unsaid`` with ``less_specific`` (the evidence coarser)."""

    found: Literal["matches", "unsaid"]
    reason: str
    less_specific: bool = False


def named_otherwise(slot: Slot, everything: str) -> str | None:
    """Another name of the slot's place that the (normalised) evidence holds, or None.

    >>> named_otherwise(Slot(0, 6, "the UK", "place"), " it was made in britain ")
    'britain'
    """
    if slot.kind not in PLACE_KINDS:
        return None
    for name in sorted(load().names(slot.text) - {key(slot.text)}):
        if f" {norm(name)} " in everything:
            return name
    return None


def _is_title(slot: Slot, rival: Slot) -> bool:
    """The claim names a person where the evidence names a role or body ("the committee")."""
    first = rival.text.split()[0] if rival.text.split() else ""
    return slot.kind == "person" and first in {"the", "a", "an"} and rival.kind != "person"


def coarser_or_same(slot: Slot, rival: Slot) -> Restated | None:
    """The slot check's observation when the evidence's ``rival`` names the claim's ``slot``
    otherwise (``matches``) or more coarsely (``less_specific``); None when they differ.

    >>> coarser_or_same(Slot(0, 7, "Bavaria", "place"), Slot(0, 7, "Germany", "place")).reason
    "less specific evidence: 'Germany' contains 'Bavaria'"
    >>> coarser_or_same(Slot(0, 4, "Rome", "place"), Slot(0, 5, "Paris", "place")) is None
    True
    """
    if _is_title(slot, rival):
        return Restated(
            "unsaid",
            f"less specific evidence: {rival.text!r} is a title or body, {slot.text!r} a name",
            less_specific=True,
        )
    if slot.kind not in PLACE_KINDS or rival.kind not in PLACE_KINDS:
        return None
    relation = load().relation(slot.text, rival.text)
    if relation == "same":
        return Restated("matches", f"{slot.text!r} and {rival.text!r} name one place")
    if relation == "contains":
        return Restated("matches", f"{rival.text!r} lies in {slot.text!r}")
    if relation == "inside":
        return Restated(
            "unsaid",
            f"less specific evidence: {rival.text!r} contains {slot.text!r}",
            less_specific=True,
        )
    return None


def same_level(slot: Slot, candidates: list[Slot]) -> Slot | None:
    """The candidate place of the slot's kind in the gazetteer (a country for a country, a place
    inside a country for one), unrelated to it, nearest to it in depth; None when none is, or
    two are equally near.

    >>> rome, paris, france = (Slot(0, 1, t, "place") for t in ("Rome", "Paris", "France"))
    >>> same_level(rome, [paris, france]).text
    'Paris'
    """
    if slot.kind not in PLACE_KINDS:
        return None
    places = load()
    level = places.level(slot.text)
    if level is None:
        return None
    depth = len(places.ancestors(slot.text))
    near = sorted(
        (abs(len(places.ancestors(c.text)) - depth), i, c)
        for i, c in enumerate(candidates)
        if c.kind in PLACE_KINDS
        and places.level(c.text) == level
        and places.relation(slot.text, c.text) is None
    )
    if not near or (len(near) > 1 and near[0][0] == near[1][0]):
        return None
    return near[0][2]
