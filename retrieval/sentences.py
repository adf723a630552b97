"""Fast rule-based sentence splitting with character offsets.

Used for snippet windows over large corpora, where speed matters more than the last point of
accuracy. Handles common abbreviations, initials, decimals and ellipses.
"""

from __future__ import annotations

import re

_ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof sr jr st mt ft vs etc e.g i.e cf al fig figs eq eqs no nos vol vols
    ed eds approx ca jan feb mar apr jun jul aug sep sept oct nov dec inc ltd co corp dept
    univ gen col lt sgt capt cmdr adm gov sen rep pres u.s u.k u.n ph.d b.c a.d p pp""".split()
)
# Names that end in "!" or "?" ("Yahoo! Inc.", "Impulse! Records", "Mamma Mia! Here We Go"):
# their mark, before a capitalised word, is no boundary.
_EXCLAIMED_NAMES = frozenset("yahoo jeopardy impulse oklahoma wham mia panic oliver".split())
# A candidate boundary: terminal punctuation, optional closing quotes/brackets, whitespace.
_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]]*\s+|\n\s*\n+|\n(?=\s*[-*•]\s)")
_NEXT_START = re.compile(r"[\"'“‘(\[]*[A-Z0-9À-ÖØ-Þ]")


def split_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` of ``text``, stripped of surrounding whitespace.

    >>> t = "Dr. Smith was born in 1901. He died in St. Louis in 1990! Really?"
    >>> [t[a:b] for a, b in split_spans(t)]
    ['Dr. Smith was born in 1901.', 'He died in St. Louis in 1990!', 'Really?']
    >>> split("He recorded for Impulse! Records in 1961. Yahoo! Inc. bought it. Oh wham! It fell.")
    ['He recorded for Impulse! Records in 1961.', 'Yahoo! Inc. bought it.', 'Oh wham!', 'It fell.']
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        end = m.end()
        punct_end = m.start() + len(m.group().rstrip())
        chunk = text[m.start() : m.end()]
        if "\n" not in chunk or chunk.strip():
            # Sentence-final punctuation: check it is a real boundary.
            if not _is_boundary(text, start, m.start(), end):
                continue
        _append(text, spans, start, punct_end if chunk.strip() else m.start())
        start = end
    _append(text, spans, start, len(text))
    return spans


def split(text: str) -> list[str]:
    """Sentences of ``text``.

    >>> split("It rains. It pours.")
    ['It rains.', 'It pours.']
    """
    return [text[a:b] for a, b in split_spans(text)]


def _is_boundary(text: str, sent_start: int, punct_at: int, next_at: int) -> bool:
    if next_at < len(text) and not _NEXT_START.match(text, next_at):
        return False  # next sentence must start with a capital, digit or opening quote
    word_start = punct_at
    while word_start > sent_start and not text[word_start - 1].isspace():
        word_start -= 1
    word = text[word_start:punct_at].lower().lstrip("(\"'“")
    if text[punct_at] != ".":
        return word not in _EXCLAIMED_NAMES or not text[word_start].isupper()
    if not word:
        return True
    if word in _ABBREVIATIONS:
        return False
    if len(word) == 1 and word.isalpha():  # an initial: "J. R. R. Tolkien"
        return False
    if re.fullmatch(r"(?:[a-z]\.)+[a-z]", word):  # "U.S", "e.g"
        return False
    return True


def _append(text: str, spans: list[tuple[int, int]], a: int, b: int) -> None:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    if b > a:
        spans.append((a, b))
