"""Edit metrics of RARR and PURR: preservation, F1_AP, edit categories, closeness to a reference.

Pure functions over strings and numbers; no models. Attribution numbers come from auto-AIS
(``editor.report.auto_ais``). Levenshtein distances are character-level and computed by
``rapidfuzz`` (C++), so passages of many thousand characters cost microseconds.
"""

from __future__ import annotations

import math
from typing import Literal

from rapidfuzz.distance import Levenshtein

# PURR's edit categories (Chen et al. 2023, section 5); inequalities are strict as in the paper.
HUGE_PRESERVATION = 0.5  # huge: Pres < 0.5
BAD_DROP = 0.1  # bad: Attr_y - Attr_x < -0.1
UNNECESSARY_ATTRIBUTION = 0.9  # unnecessary: bad and Attr_x > 0.9
GOOD_GAIN = 0.3  # good: Attr_y - Attr_x > 0.3 ...
GOOD_PRESERVATION = 0.7  # ... and Pres > 0.7

EditCategory = Literal["unchanged", "huge", "unnecessary", "bad", "good", "neutral"]
EDIT_CATEGORIES: tuple[EditCategory, ...] = (
    "unchanged",
    "huge",
    "unnecessary",
    "bad",
    "good",
    "neutral",
)
"""Every value ``edit_category`` returns, in the order it tests them (first match wins)."""


def levenshtein(a: str, b: str) -> int:
    """Character-level Levenshtein distance (insertions, deletions, substitutions cost 1).

    >>> levenshtein("kitten", "sitting")
    3
    """
    return int(Levenshtein.distance(a, b))


def preservation(original: str, revised: str) -> float:
    """Pres_Lev(x, y) = max(1 - Lev(x, y) / len(x), 0): how much of the original survived.

    Exactly 1.0 if and only if ``revised == original``. An empty ``original`` has nothing to
    preserve: the score is 1.0 when ``revised`` is empty too and 0.0 otherwise (everything in
    it was written by the editor).

    >>> preservation("Paris is in France.", "Paris is in France.")
    1.0
    >>> preservation("born in 1990", "born in 1991")  # 1 edit over 12 characters
    0.9166666666666666
    >>> preservation("abc", "a completely different text")  # clipped at 0
    0.0
    >>> preservation("", ""), preservation("", "new text")
    (1.0, 0.0)
    """
    if not original:
        return 1.0 if not revised else 0.0
    return max(1.0 - levenshtein(original, revised) / len(original), 0.0)


def f1_ap(attribution: float, preservation: float) -> float:
    """F1_AP: the harmonic mean of attribution (after editing) and preservation; 0 when both 0.

    >>> f1_ap(1.0, 1.0), f1_ap(0.5, 1.0), f1_ap(0.0, 0.9), f1_ap(0.0, 0.0)
    (1.0, 0.6666666666666666, 0.0, 0.0)
    """
    _check_unit("attribution", attribution)
    _check_unit("preservation", preservation)
    total = attribution + preservation
    return 0.0 if total == 0 else 2 * attribution * preservation / total


def edit_category(
    attr_before: float, attr_after: float, pres: float, *, changed: bool | None = None
) -> EditCategory:
    """PURR's category of one edit, x -> y, from Attr_x, Attr_y and Pres(x, y).

    Tested in this order, first match wins:

    1. ``unchanged``: x == y (``changed=False``; when ``changed`` is None, ``pres == 1.0``,
       which ``preservation`` returns only for identical texts);
    2. ``huge``: Pres < 0.5 (a rewrite; reported as huge whatever happened to attribution);
    3. ``unnecessary``: a bad edit (below) of a text that was already attributed, Attr_x > 0.9;
    4. ``bad``: Attr_y - Attr_x < -0.1;
    5. ``good``: Attr_y - Attr_x > 0.3 and Pres > 0.7;
    6. ``neutral``: everything else (small gains, small losses, larger edits with small gains).

    >>> edit_category(0.2, 0.9, 0.95)
    'good'
    >>> edit_category(0.95, 0.5, 0.9), edit_category(0.6, 0.3, 0.9)
    ('unnecessary', 'bad')
    >>> edit_category(0.2, 0.9, 0.4), edit_category(0.5, 0.6, 0.9), edit_category(0.5, 0.5, 1.0)
    ('huge', 'neutral', 'unchanged')
    """
    for name, value in (("attr_before", attr_before), ("attr_after", attr_after), ("pres", pres)):
        _check_unit(name, value)
    if changed is None:
        changed = pres != 1.0
    if not changed:
        return "unchanged"
    if pres < HUGE_PRESERVATION:
        return "huge"
    gain = attr_after - attr_before
    if gain < -BAD_DROP:
        return "unnecessary" if attr_before > UNNECESSARY_ATTRIBUTION else "bad"
    if gain > GOOD_GAIN and pres > GOOD_PRESERVATION:
        return "good"
    return "neutral"


def levenshtein_closer_chars(original: str, revised: str, reference: str) -> int:
    """Characters by which the edit moved the text towards ``reference``:
    Lev(x, ref) - Lev(y, ref). Positive is closer, negative is further away.

    >>> levenshtein_closer_chars("born in 1990", "born in 1991", "born in 1991")
    1
    >>> levenshtein_closer_chars("born in 1991", "born in 1990", "born in 1991")
    -1
    """
    return levenshtein(original, reference) - levenshtein(revised, reference)


def levenshtein_closer(original: str, revised: str, reference: str) -> float:
    """How much closer to ``reference`` (e.g. a gold correction) the edit moved the text,
    relative: (Lev(x, ref) - Lev(y, ref)) / max(Lev(x, ref), Lev(y, ref)), in [-1, 1].

    When the edit got closer, this is the share of the original distance it closed (1.0 =
    reached the reference); when it moved away, minus the share of the new distance that the
    edit added (-1.0 = the original was the reference). 0.0 when the distance did not change,
    including x == y == ref. The absolute number is ``levenshtein_closer_chars``.

    >>> levenshtein_closer("born in 1990 in Rome", "born in 1991 in Rome", "born in 1991 in Oslo")
    0.2
    >>> levenshtein_closer("born in 1991", "born in 1990", "born in 1991")
    -1.0
    >>> levenshtein_closer("same", "same", "other")
    0.0
    """
    before = levenshtein(original, reference)
    after = levenshtein(revised, reference)
    scale = max(before, after)
    return 0.0 if scale == 0 else (before - after) / scale


def _check_unit(name: str, value: float) -> None:
    if not isinstance(value, int | float) or math.isnan(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
