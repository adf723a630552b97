"""A gazetteer for the slot checks: which places lie inside which, which names (and demonyms)
name the same place. Evidence that names a place containing the claim's ("a town in Germany"
against "a town in Bavaria") is less specific, not contradicting; "Britain" and "the United
Kingdom", "Dutch" and "the Netherlands" are one place.

``places.json`` (shipped) joins the hand-written ``places_curated.json`` with what the first
sentences of the packaged Wikipedia summaries state ("Bavaria, officially the Free State of
Bavaria, is a landlocked state of Germany."); ``python -m editor.claims.places`` writes
it again.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

HERE = Path(__file__).resolve().parent
CURATED = HERE / "places_curated.json"
BUILT = HERE / "places.json"

Relation = Literal["same", "inside", "contains"]
CONTINENTS = frozenset(
    {"europe", "asia", "africa", "north america", "south america", "oceania", "antarctica"}
)

_PLACE_NOUN = (
    r"(?:city|town|village|country|state|province|region|municipality|commune|capital|island|"
    r"archipelago|territory|county|district|prefecture|metropolis|port|peninsula|nation|"
    r"kingdom|republic|emirate|borough|settlement|megacity|oblast|department|canton|"
    r"autonomous community|island country|subregion|continent|suburb|neighbourhood|"
    r"neighborhood|arrondissement|governorate|principality|duchy|dependency)"
)
_NAME = r"[A-Z][\w'’.-]*(?:\s+(?:of\s+|and\s+|de\s+|the\s+)?[A-Z][\w'’.-]*)*"
_PARENT = re.compile(
    rf"\bis (?:a|an|the)\b[^.;]*?\b{_PLACE_NOUN}\b[^.;]*?\b(?:in|of|on)\s+(?:the\s+)?({_NAME})"
)
_OFFICIALLY = re.compile(rf"^({_NAME}), (?:officially|formally) (?:the\s+)?({_NAME})")
_KNOWN_AS = re.compile(rf"(?:commonly|also|simply|better) known as (?:the\s+)?({_NAME})")
_COMPASS = re.compile(
    r"^(?:(?:north|south|east|west|central|northern|southern|eastern|western|"
    r"north-?eastern|north-?western|south-?eastern|south-?western|upper|lower|mainland|"
    r"and|the)\s+)+",
    re.I,
)


def key(name: str) -> str:
    """A place name as the gazetteer looks it up: lower case, no article, possessive or dots.

    >>> key("the U.S."), key("Japan's"), key("The Hague")
    ('us', 'japan', 'hague')
    """
    name = re.sub(r"['’]s$", "", name.strip())
    name = re.sub(r"^the\s+", "", name, flags=re.I).replace(".", "")
    return " ".join(name.lower().split())


@dataclass(frozen=True)
class Gazetteer:
    """Parents (``key -> keys of the places it lies in``) and one canonical key per name."""

    parents: dict[str, list[str]]
    canonical: dict[str, str]

    def _canon(self, name: str) -> str:
        k = key(name)
        return self.canonical.get(k, k)

    def ancestors(self, name: str) -> set[str]:
        """Every place ``name`` lies in, transitively (canonical keys)."""
        seen: set[str] = set()
        todo = [self._canon(name)]
        while todo:
            for p in self.parents.get(todo.pop(), []):
                p = self.canonical.get(p, p)
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        return seen

    def relation(self, claim: str, evidence: str) -> Relation | None:
        """How the claim's place relates to the evidence's: ``same`` (one place, two names),
        ``inside`` (the claim's lies inside the evidence's: the evidence is less specific),
        ``contains`` (the evidence's lies inside the claim's), or None.

        >>> g = load()
        >>> g.relation("Bavaria", "Germany"), g.relation("the UK", "Britain")
        ('inside', 'same')
        >>> g.relation("Europe", "Munich"), g.relation("Dutch", "the Netherlands")
        ('contains', 'same')
        >>> g.relation("Rome", "Paris") is None
        True
        """
        a, b = self._canon(claim), self._canon(evidence)
        if a == b:
            return "same"
        if b in self.ancestors(claim):
            return "inside"
        if a in self.ancestors(evidence):
            return "contains"
        return None

    def level(self, name: str) -> str | None:
        """``continent``, ``country`` (a continent's child), ``inside`` (below a country) or
        None for a place the gazetteer does not place.

        >>> g = load()
        >>> g.level("Europe"), g.level("Greece"), g.level("Athens"), g.level("Atlantis")
        ('continent', 'country', 'inside', None)
        """
        c = self._canon(name)
        if c in CONTINENTS:
            return "continent"
        if set(self.parents.get(c, [])) & CONTINENTS:
            return "country"
        ancestors = self.ancestors(name)
        if any(set(self.parents.get(a, [])) & CONTINENTS for a in ancestors):
            return "inside"
        return None

    @functools.cached_property
    def _names_of(self) -> dict[str, set[str]]:
        """Canonical key -> every key naming that place (built once, on first use)."""
        out: dict[str, set[str]] = {}
        for k, v in self.canonical.items():
            out.setdefault(v, set()).add(k)
        return out

    def names(self, name: str) -> set[str]:
        """Every key that names the same place as ``name`` (itself included)."""
        c = self._canon(name)
        return self._names_of.get(c, set()) | {c, key(name)}


_NOT_PLACES = frozenset({"hemisphere", "world", "earth", "globe", "solar system"})


def _strip_compass(name: str) -> str:
    """ "Southern United States" -> "United States"; "" for no place ("Northern Hemisphere").

    >>> _strip_compass("Western and Central Europe"), _strip_compass("Northern Hemisphere")
    ('Europe', '')
    """
    name = _COMPASS.sub("", name + " ").strip()
    return "" if key(name) in _NOT_PLACES or not name[:1].isupper() else name


def build(summaries=None) -> dict[str, dict]:
    """The gazetteer's tables from the curated file and the summaries' first sentences."""
    curated = json.loads(CURATED.read_text("utf-8"))
    parents: dict[str, set[str]] = {}
    canonical: dict[str, str] = {}
    for group in curated["same"]:
        for name in group:
            canonical[key(name)] = key(group[0])
    for demonym, place in curated["demonyms"].items():
        canonical.setdefault(key(demonym), key(place))
    for outer, inner in curated["inside"].items():
        for name in inner:
            parents.setdefault(key(name), set()).add(key(outer))
    if summaries is None:
        from retrieval.corpus import read_wiki_summaries

        summaries = read_wiki_summaries()
    for doc in summaries:
        first = doc.text.split(". ")[0]
        title = key(re.sub(r"\s*\(.*\)$", "", doc.title))
        m = _PARENT.search(first)
        if m is None:
            continue  # not a place: its other names are no place's
        parent = key(_strip_compass(m.group(1)))
        parent = canonical.get(parent, parent)
        if (
            parent
            and parent != canonical.get(title, title)
            and title not in parents.get(parent, set())
        ):
            parents.setdefault(title, set()).add(parent)
        aliases = _KNOWN_AS.findall(first[:200])
        official = _OFFICIALLY.match(first)
        if official and key(official.group(1)) == title:
            aliases.append(official.group(2))
        for alias in aliases:
            if _strip_compass(alias) == alias and len(key(alias)) > 2:
                canonical.setdefault(key(alias), canonical.get(title, title))
    return {
        "parents": {k: sorted(v) for k, v in sorted(parents.items())},
        "canonical": dict(sorted(canonical.items())),
    }


@functools.cache
def load() -> Gazetteer:
    """The shipped gazetteer (``places.json``), read once."""
    tables = json.loads(BUILT.read_text("utf-8"))
    return Gazetteer(tables["parents"], tables["canonical"])


if __name__ == "__main__":
    tables = build()
    BUILT.write_text(json.dumps(tables, ensure_ascii=False, indent=0) + "\n", "utf-8")
    print(
        f"{BUILT}: {len(tables['parents'])} places with parents, {len(tables['canonical'])} names"
    )
