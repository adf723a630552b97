"""The values an edit writes, as the evidence writes them.

A replacement taken from the evidence must stand in the revision as it stands there:
- every word with a digit the edit writes is one of the evidence's words (no "1/s/s" made of
  "1/s" pasted before the "/s" that was left);
- a number the evidence gives in one unit is not put before another unit the evidence also uses
  ("about 5.78 kiloparsecs (18,900 light-years)": 18,900 is light-years, not kiloparsecs);
- a name the evidence goes on with a word the edit removed is not cut short ("the United States
  Senate" is not "the United States").
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from editor.text.words import content_words

_EDGE = "()[]{}\"'“”‘’.,;:!?"


def _bare(token: str) -> str:
    return token.strip(_EDGE)


def _alnum(token: str) -> str:
    return re.sub(r"\W", "", token).lower()


def _follower(tokens: list[str], end: int) -> str | None:
    """The word after ``tokens[:end]``'s last token, when nothing but a space parts them (no
    comma, bracket or full stop), and it is a content word."""
    if end >= len(tokens) or tokens[end - 1] != tokens[end - 1].rstrip(_EDGE):
        return None
    nxt = tokens[end]
    if nxt != nxt.lstrip(_EDGE):
        return None
    word = _bare(nxt)
    return word if word and content_words(word) and not any(c.isdigit() for c in word) else None


def value_problem(old: str, new: str, evidence: str) -> str | None:
    """Why the values ``new`` writes in place of ``old``'s are not the evidence's (None when
    they are).

    >>> ev = "It has a diameter of about 5.78 kiloparsecs (18,900 light-years), and stars."
    >>> value_problem("of about 11.56 kiloparsecs (18,900 light-years)",
    ...               "of 18,900 kiloparsecs (18,900 light-years)", ev)
    "the evidence's '18,900' is in 'light-years', not 'kiloparsecs'"
    >>> value_problem("is 0/s or s−1", "is 1/s/s or s−1", "is 1/s or s−1, meaning")
    "the edit writes '1/s/s', which the evidence does not"
    >>> value_problem("the state in SI Senate from 1885", "the state in the United States from 1885",
    ...               "represented the state in the United States Senate from 1885")
    "the evidence's name goes on: 'the United States Senate'"
    >>> value_problem("It won 3 Oscars.", "It won 5 Oscars.", "It won 5 Academy Awards.") is None
    True
    >>> value_problem("about 11.56 kiloparsecs", "about 5.78 kiloparsecs", ev) is None
    True
    >>> value_problem("dates back 27 million years", "dates back 49 million years",
    ...               "It has 49 species. Its record dates back 49 million years.") is None
    True
    """
    ev_tokens = evidence.split()
    ev_alnum = {_alnum(t) for t in ev_tokens}
    ev_words = [_bare(t).lower() for t in ev_tokens]
    a, b = old.split(), new.split()
    ops = SequenceMatcher(a=[_bare(t).lower() for t in a], b=[_bare(t).lower() for t in b])
    for tag, i1, i2, j1, j2 in ops.get_opcodes():
        if tag not in {"replace", "insert"}:
            continue
        run = b[j1:j2]
        for t in run:
            if any(c.isdigit() for c in t) and _alnum(t) not in ev_alnum:
                return f"the edit writes {_bare(t)!r}, which the evidence does not"
        seq = [_bare(t).lower() for t in run]
        ats = [p for p in range(len(ev_words)) if seq and ev_words[p : p + len(seq)] == seq]
        followers = [_follower(ev_tokens, p + len(seq)) for p in ats]
        mine = _follower(b, j2)
        if not ats or any(f is None or f.lower() == (mine or "").lower() for f in followers):
            continue  # the evidence writes the value as the revision does, somewhere
        theirs = [f for f in followers if f is not None]
        removed = {_bare(t).lower() for t in a[i1:i2]}
        value = " ".join(_bare(t) for t in run)
        if all(f.lower() in removed for f in theirs):
            return f"the evidence's name goes on: '{value} {theirs[0]}'"
        numeric = any(c.isdigit() for c in value)
        if numeric and mine is not None and mine.lower() in ev_words:
            # the evidence uses the revision's unit, but for other numbers
            return f"the evidence's {value!r} is in {theirs[0]!r}, not {mine!r}"
    return None
