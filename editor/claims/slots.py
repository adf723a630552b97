"""Typed slots of a sentence: the names, numbers, quantities and dates it states, and whether it
is negated. Found with spaCy's entities and a number pattern; dates are read with dateparser and
units with pint, so "31 March 1889", "1887 to 1889" and "330 metres" become comparable values.

The ``substitute`` editor proposes its swaps from these slots, and ``editor.claims.slot_check``
compares a claim's slots with its evidence's.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from typing import Any

from editor.text.words import content_words

SLOT_TYPES = {
    "PERSON": "person",
    "ORG": "org",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "NORP": "norp",
    "DATE": "date",
    "TIME": "date",
    "CARDINAL": "number",
    "QUANTITY": "number",
    "MONEY": "number",
    "PERCENT": "number",
    "ORDINAL": "ordinal",
    "EVENT": "other",
    "WORK_OF_ART": "other",
    "PRODUCT": "other",
    "LANGUAGE": "other",
}
"""spaCy entity labels and the coarse slot kind each one fills."""

_NUMBER = re.compile(r"(?<![\w.])\d(?:[\d,]*\d)?(?:\.\d+)?(?![\w])")
_YEAR = re.compile(r"^(1[0-9]{3}|20[0-9]{2})$")
_YEARS = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})(s?)\b")
_MONTH = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)", re.I)
_CENTURY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b(?=.*?\b(centur|millenni))", re.I)
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_APPROX = re.compile(
    r"\b(about|around|approximately|roughly|nearly|almost|some|circa|c\.|over|more than|"
    r"less than|under|up to|at least|at most|above|below|estimated)\s*$",
    re.I,
)


@dataclass(frozen=True)
class Slot:
    """A typed span of a text: ``kind`` is person, org, place, norp, date, number, ordinal or
    other."""

    start: int
    end: int
    text: str
    kind: str


_GREEK = str.maketrans("αβγδεκλμπστω", "abgdeklmpstw")


def norm(text: str) -> str:
    """Lower case, accents and punctuation dropped, Greek letters as Latin (scientific names
    are written both ways: "NF-κB", "NF-kB"): how slot texts are compared.

    >>> norm("Eiffel's  Tower!"), norm("NF-κB"), norm("Rímac")
    ('eiffel s tower', 'nf kb', 'rimac')
    """
    text = unicodedata.normalize("NFKD", text.lower()).translate(_GREEK)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return re.sub(r"\W+", " ", text).strip()


def family(kind: str) -> str:
    """Kinds that may stand for each other: spaCy often labels a person's name ORG and back."""
    return "name" if kind in {"person", "org"} else kind


def shape(text: str) -> str:
    """Digits as 9, letters as a, runs collapsed: '1889' -> '9', 'the 1910s' -> 'a 9a'.

    >>> shape("1,200"), shape("the 1910s"), shape("Gustave Eiffel")
    ('9,9', 'a 9a', 'a a')
    """
    out = re.sub(r"[0-9]+", "9", text)
    return re.sub(r"[^\W\d_]+", "a", out)


def typed_spans(doc: Any) -> list[Slot]:
    """Named entities (coarse kinds) and bare numbers of a parsed text; numbers that look like
    years are dates. Numbers inside an entity are listed too, so '31 March 1887' offers both
    the whole date and '1887'; two years NER splits out of one range are joined too. Kept in
    the doc's ``user_data`` (the checks ask for a doc's slots several times)."""
    cached = doc.user_data.get("purr_slots") if hasattr(doc, "user_data") else None
    if cached is not None:
        return list(cached)
    spans = [
        Slot(
            e.start_char,
            e.end_char,
            e.text,
            _kind(SLOT_TYPES[e.label_], e.text, doc.text, e.end_char),
        )
        for e in doc.ents
        if e.label_ in SLOT_TYPES
    ]
    seen = {(s.start, s.end) for s in spans}
    for m in _NUMBER.finditer(doc.text):
        if (m.start(), m.end()) in seen:
            continue
        kind = "date" if _YEAR.match(m.group()) else "number"
        spans.append(Slot(m.start(), m.end(), m.group(), _kind(kind, m.group(), doc.text, m.end())))
    spans += _ranges(spans, doc.text)
    spans = _eras(spans, doc.text)
    if hasattr(doc, "user_data"):
        doc.user_data["purr_slots"] = tuple(spans)
    return spans


_ERA = re.compile(
    r"\b\d{1,4}\s+(?:BCE?|CE|AD|B\.C\.(?:E\.)?|A\.D\.)(?!\w)|\b(?:AD|A\.D\.)\s+\d{1,4}\b"
)


def _eras(spans: list[Slot], text: str) -> list[Slot]:
    """A year with its era ("476 BC", "AD 476") as one date slot, the era word no name of its
    own (NER reads "BC" as an organisation).

    >>> [s.text for s in _eras([Slot(0, 3, "476", "number"), Slot(4, 6, "BC", "org")], "476 BC")]
    ['476', '476 BC']
    """
    for m in _ERA.finditer(text):
        a, b = m.span()
        spans = [
            s
            for s in spans
            if not (a <= s.start and s.end <= b and not any(c.isdigit() for c in s.text))
        ]
        if not any((s.start, s.end) == (a, b) for s in spans):
            spans.append(Slot(a, b, m.group(), "date"))
    return spans


_RANGE_JOIN = re.compile(r"\s*(?:to|until|till|through|-|–|—)\s*")


def _ranges(spans: list[Slot], text: str) -> list[Slot]:
    """Year ranges NER splits into two dates ("from 1887 to 1889" as "1887" and "1889"), as
    one date slot, unless a slot already spans both.

    >>> _ranges([Slot(5, 9, "1887", "date"), Slot(13, 17, "1889", "date")], "from 1887 to 1889")
    [Slot(start=5, end=17, text='1887 to 1889', kind='date')]
    """
    dates = sorted((s for s in spans if s.kind == "date"), key=lambda s: s.start)
    out = []
    for a, b in zip(dates, dates[1:], strict=False):
        if not (_YEARS.search(a.text) and _YEARS.search(b.text)):
            continue
        if not _RANGE_JOIN.fullmatch(text[a.end : b.start]):
            continue
        if any(s.start <= a.start and b.end <= s.end for s in spans):
            continue
        out.append(Slot(a.start, b.end, text[a.start : b.end], "date"))
    return out


_AGE = re.compile(
    r"\b(?:(?:the\s+)?age\s+of\s+\d+|\d+\s*(?:-\s*)?years?(?:\s*-\s*|\s+)old)\b", re.I
)


def _kind(kind: str, text: str, whole: str, end: int) -> str:
    """A "date" that is a number with a unit after it ("1571 mi", "72 mi" as NER labels them
    beside a distance) is a number; so is an age ("the age of 78", "78 years old"), which NER
    labels a date; a bare ordinal ("the 12th") is an ordinal.

    >>> _kind("date", "the age of 78", "died at the age of 78", 21)
    'number'
    >>> _kind("date", "the 12th", "was the 12th president", 14)
    'ordinal'
    """
    if kind == "date" and _AGE.search(text):
        return "number"
    if kind == "date" and re.fullmatch(r"(?:the\s+)?\d+(?:st|nd|rd|th)", text.strip(), re.I):
        return "ordinal"  # "the 12th president": NER reads a day of the month
    if kind != "date" or not re.fullmatch(r"[\d,.]+(?:\s*[^\W\d_]+)?", text.strip()):
        return kind
    q = quantity(text, whole[end : end + 20])
    return "number" if q is not None and q[1] is not None else kind


def negated(doc: Any) -> bool:
    """Whether the sentence's main clause is negated ("was not", "never").

    >>> from editor.text.nlp import get_nlp
    >>> nlp = get_nlp()
    >>> negated(nlp("The tower was not built in 1889.")), negated(nlp("It was built in 1889."))
    (True, False)
    """
    return any(t.dep_ == "neg" and t.head.dep_ == "ROOT" for t in doc)


# -- values ------------------------------------------------------------------------------------


@functools.cache
def _date_parser() -> Any:
    from dateparser.date import DateDataParser

    return DateDataParser(languages=["en"], settings={"PREFER_DAY_OF_MONTH": "first"})


@functools.lru_cache(maxsize=8192)  # pure, and dateparser is slow (ms per call)
def date_range(text: str) -> tuple[date, date] | None:
    """The span of days a date expression covers: a year is its whole year, "1887 to 1889"
    three years, "the 1910s" a decade, "31 March 1889" one day. None when it names no year.

    >>> date_range("from 1887 to 1889")
    (datetime.date(1887, 1, 1), datetime.date(1889, 12, 31))
    >>> date_range("31 March 1889"), date_range("the 1910s")[1]
    ((datetime.date(1889, 3, 31), datetime.date(1889, 3, 31)), datetime.date(1919, 12, 31))
    >>> date_range("the 17th and 18th centuries")
    (datetime.date(1601, 1, 1), datetime.date(1800, 12, 31))
    >>> date_range("last week") is None
    True
    >>> date_range("in 1889") == date_range("in 1889 or so")  # a bare year: no dateparser
    True
    """
    years = [(int(y), bool(s)) for y, s in _YEARS.findall(text)]
    if not years:  # "the 17th and 18th centuries", "the 1st millennium" (AD only)
        spans = []
        for n, unit in _CENTURY.findall(text):
            size = 100 if unit.lower().startswith("centur") else 1000
            if 0 < int(n) and int(n) * size <= 9999 and not re.search(r"\bBCE?\b", text):
                spans.append(((int(n) - 1) * size + 1, int(n) * size))
        if spans:
            return date(min(a for a, _ in spans), 1, 1), date(max(b for _, b in spans), 12, 31)
    if not years:
        return None
    if len(years) > 1:
        return date(min(y for y, _ in years), 1, 1), date(max(y + 9 * d for y, d in years), 12, 31)
    year, decade = years[0]
    if decade:
        return date(year, 1, 1), date(year + 9, 12, 31)
    if not _MONTH.search(text) and not re.search(r"\d", _YEARS.sub("", text)):
        return date(year, 1, 1), date(year, 12, 31)  # no month, no day: dateparser would agree
    data = _date_parser().get_date_data(text)
    if data.date_obj is not None and data.date_obj.year == year:
        day = data.date_obj.date()
        if data.period == "day":
            return day, day
        if data.period == "month":
            last = date(year + (day.month == 12), day.month % 12 + 1, 1) - date.resolution
            return day.replace(day=1), last
    return date(year, 1, 1), date(year, 12, 31)


@functools.cache
def _units() -> Any:
    import pint

    return pint.UnitRegistry()


@functools.lru_cache(maxsize=8192)  # pure, and pint's failed unit lookups are slow
def quantity(text: str, after: str = "") -> tuple[float, str | None] | None:
    """The value of a number expression, in base units when a unit follows (``after``: the
    words after the number in its sentence). "39.7 million" is 39,700,000; "330 metres" and
    "0.33 km" are the same length.

    >>> quantity("39.7 million")
    (39700000.0, None)
    >>> quantity("330", " metres tall"), quantity("0.33", " km")
    ((330.0, 'meter'), (330.0, 'meter'))
    >>> quantity("two") is None, quantity("1889", " as the centerpiece")
    (True, (1889.0, None))
    """
    m = _NUMBER.search(text)
    if m is None:
        return None
    value = float(m.group().replace(",", ""))
    rest = (text[m.end() :] + " " + after).split()
    if rest and rest[0].lower() in _SCALE:
        value *= _SCALE[rest[0].lower()]
        rest = rest[1:]
    if rest:
        word = re.sub(r"[^\w]", "", rest[0])
        if word and not word.isdigit() and content_words(word):  # "as" is not attoseconds
            try:
                q = _units().Quantity(value, word).to_base_units()
                return float(q.magnitude), str(q.units)
            except Exception:  # noqa: BLE001 - not a unit ("people", "speakers")
                pass
    return value, None


def approximate(before: str) -> bool:
    """Whether the words before a number hedge it ("about", "over", "nearly", ...).

    >>> approximate("It is about "), approximate("It is ")
    (True, False)
    """
    return bool(_APPROX.search(before.rstrip() + " "))


WORD_TOKEN = re.compile(r"\w+|[^\w\s]")
"""Words and single punctuation marks: the units near-copies are compared in."""


def exchanged_spans(claim: str, evidence: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The claim's two spans (character offsets) that the evidence sentence states in each
    other's place, everything else word for word: the shape of a role swap in a near-copy,
    whatever NER makes of the names.

    >>> exchanged_spans("N is an element with symbol Nitrogen.", "Nitrogen is an element with symbol N.")
    ((0, 1), (28, 36))
    >>> exchanged_spans("N is an element.", "Nitrogen is an element.") is None
    True
    >>> exchanged_spans("in the North America region of Pacific Northwest.",
    ...                 "in the Pacific Northwest region of North America.")
    ((7, 20), (31, 48))
    """
    a = [(m.group().lower(), m.start(), m.end()) for m in WORD_TOKEN.finditer(claim)]
    b = [m.group().lower() for m in WORD_TOKEN.finditer(evidence)]
    words = [t for t, _, _ in a]
    if len(words) != len(b) or words == b:
        return None
    lo = next(i for i in range(len(b)) if words[i] != b[i])  # the common ends set aside
    hi = len(b) - next(i for i in range(len(b)) if words[-1 - i] != b[-1 - i])
    mine, theirs = words[lo:hi], b[lo:hi]  # mine = X M Y, theirs = Y M X
    n = len(mine)
    for lx in range(1, n):
        if mine[:lx] != theirs[n - lx :]:
            continue
        for ly in range(1, n - lx + 1):
            if mine[n - ly :] == theirs[:ly] and mine[lx : n - ly] == theirs[ly : n - lx]:
                x, y = mine[:lx], mine[n - ly :]
                if x != y and content_words(" ".join(x)) and content_words(" ".join(y)):
                    return (a[lo][1], a[lo + lx - 1][2]), (a[hi - ly][1], a[hi - 1][2])
    return None
