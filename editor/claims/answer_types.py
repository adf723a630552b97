"""What kind of answer a question asks for, and what kind an answer is: two observations the
judge weighs (a "who produced" question answered with a year, "which record label" with a
singer, "which river" with a town). Neither decides anything; ``fit`` says whether the two
agree (1), disagree (-1: another family of kinds, a year for "who") or cannot be compared (0).

The question's kind: its wh-word ("who": a person or an organisation; "where": a place or an
organisation; "when": a date; "how many / how much / how long": a quantity or a duration; "how often": a
frequency, "twice a day") or, for
"which X" / "what X", the class noun X ("which river": a natural place; "what record label": an
organisation; "which driver": a person). The answer's kind: the spaCy entity labels its words
carry in the text it was read from; a bare number is a cardinal, words of a rate ("a day",
"every", "twice") a frequency.
"""

from __future__ import annotations

import re
from typing import Any

_PERSON = frozenset({"PERSON", "NORP"})
_ORG = frozenset({"ORG"})
_NATURAL = frozenset({"LOC"})
_SETTLED = frozenset({"GPE"})
_PLACE = frozenset({"GPE", "LOC", "FAC"})
_DATE = frozenset({"DATE", "TIME"})
_AMOUNT = frozenset({"CARDINAL", "QUANTITY", "MONEY", "PERCENT", "DATE", "TIME"})

_CLASSES: dict[frozenset[str], tuple[str, ...]] = {
    _PERSON | _ORG: ("artist", "band", "group", "composer", "producer", "owner"),
    _PERSON: (
        "person",
        "man",
        "woman",
        "singer",
        "actor",
        "actress",
        "driver",
        "player",
        "president",
        "author",
        "writer",
        "director",
        "king",
        "queen",
        "emperor",
        "scientist",
        "coach",
        "captain",
        "founder",
        "inventor",
        "character",
        "pope",
        "poet",
        "painter",
        "rapper",
        "wife",
        "husband",
        "son",
        "daughter",
        "father",
        "mother",
        "minister",
        "governor",
    ),  # fmt: skip
    _ORG: (
        "team",
        "label",
        "imprint",
        "company",
        "studio",
        "club",
        "party",
        "university",
        "school",
        "college",
        "network",
        "channel",
        "agency",
        "organization",
        "organisation",
        "publisher",
        "airline",
        "manufacturer",
        "brand",
        "firm",
        "bank",
        "newspaper",
    ),  # fmt: skip
    _NATURAL: (
        "river",
        "lake",
        "mountain",
        "sea",
        "ocean",
        "island",
        "continent",
        "desert",
        "valley",
    ),  # fmt: skip
    _SETTLED: ("city", "country", "town", "state", "capital", "county", "province", "village"),
    _DATE: ("year", "date", "day", "month", "century", "decade", "season"),
    _AMOUNT: ("percentage", "percent", "number", "amount", "price", "cost", "fee", "population"),
}
_CLASS_OF = {noun: labels for labels, nouns in _CLASSES.items() for noun in nouns}
_WHICH = re.compile(
    r"\b(?:which|what)\s+(?:(?:is|was|are|were)\s+(?:the|a|an)\s+)?"
    r"(?:(?:kind|type|sort|name) of\s+)?(\w+)(?:\s+(\w+))?"
)
_NUMBER = re.compile(r"^\W*\d[\d,.]*\W*$")
_FREQUENCY = re.compile(
    r"(?i)\b(?:per|a|an|every|each|times|once|twice|daily|weekly|monthly|yearly|annually|hourly)\b"
)


_OPENERS = frozenset(
    "what which who whom whose when where why how is are was were do does did can could will "
    "would should has have had".split()
)


def expected(question: str) -> frozenset[str] | None:
    """The spaCy labels an answer to ``question`` may carry; None where the question does not
    say (``what is ...``, ``why``, a yes/no question).

    >>> sorted(expected("Who produced the film?")), sorted(expected("Which river flows there?"))
    (['NORP', 'ORG', 'PERSON'], ['LOC'])
    >>> sorted(expected("What record label released it?")), expected("What is DNA?")
    (['ORG'], None)
    >>> sorted(expected("In what year did his career start?"))
    ['DATE', 'TIME']
    >>> sorted(expected("Karl Marx wrote it with whom in 1848?")), expected("What did he do when?")
    (['NORP', 'ORG', 'PERSON'], None)
    """
    q = question.lower().strip()
    words = [w.strip("?!.,;:") for w in q.split()]
    for m in _WHICH.finditer(q):  # "which river", "what record label": the class noun
        for w in filter(None, m.groups()):
            noun = w if w in _CLASS_OF else w.removesuffix("s")
            if noun in _CLASS_OF:
                return _CLASS_OF[noun]
    first = words[0] if words else ""
    if first in ("in", "on", "at", "by", "from", "to", "for", "during", "until") and len(words) > 1:
        first = words[1]
    if first not in _OPENERS:  # a declarative question: "It was commanded by whom?"
        inside = re.search(r"\b(?:who|whom|whose|when|where|how)\b", q)
        if inside is not None and inside.start() > 0:
            return expected(q[inside.start() :])
    if q.startswith("how often") or re.match(r"how many times\b", q):
        return frozenset({"FREQUENCY"})
    if first in ("who", "whom", "whose"):
        return _PERSON | _ORG
    if first == "when":
        return _DATE
    if first == "where":
        return _PLACE | _ORG
    if re.match(r"(?:\w+ )?how (many|much|long|far|old|tall|big|high|large|heavy)", q):
        return _AMOUNT
    return None


def labels_at(doc: Any, start: int, end: int) -> frozenset[str]:
    """The entity labels of ``doc`` (a spaCy doc) over the characters ``start:end``; a span of
    only a number with no entity is ``CARDINAL``."""
    found = {e.label_ for e in doc.ents if e.start_char < end and start < e.end_char}
    if not found and _NUMBER.match(doc.text[start:end]):
        found.add("CARDINAL")
    if _FREQUENCY.search(doc.text[start:end]):  # "twice a day", "every 8 hours"
        found.add("FREQUENCY")
    return frozenset(found)


_FAMILIES = (
    frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "PRODUCT", "WORK_OF_ART", "EVENT"}),
    frozenset({"DATE", "TIME"}),
    frozenset({"CARDINAL", "QUANTITY", "MONEY", "PERCENT", "ORDINAL"}),
    frozenset({"FREQUENCY"}),
)
"""Kinds the small spaCy model keeps apart; within one it often mislabels (a rare town read as
a person), so a label of the same family is not a mismatch."""


def _family(labels: frozenset[str]) -> set[int]:
    return {k for k, f in enumerate(_FAMILIES) if labels & f}


def fit(wanted: frozenset[str] | None, labels: frozenset[str]) -> int:
    """1: the answer carries a label the question asks for; -1: it is only of other families
    of kinds (a date for "who", a name for "how many"); 0: unknown, or a label of the same
    family the small NER model may have confused ("Kiel" read as a person for "where").

    >>> fit(expected("Who wrote it?"), frozenset({"DATE"})), fit(None, frozenset({"DATE"}))
    (-1, 0)
    >>> fit(expected("Where was she born?"), frozenset({"PERSON"}))
    0
    """
    if wanted is None or not labels:
        return 0
    if labels & wanted:
        return 1
    return -1 if not _family(labels) & _family(wanted) else 0
