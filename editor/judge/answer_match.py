"""Whether two answers to one question agree: the same name (a name and its full form, "the"
and a possessive aside), one date range holding the other ("2019" and "14 March 2019": coarser
is not a contradiction), or quantities that agree (units converted, number words read as
numerals, 10% where the text hedges "about"). The judge's one reading of answer equality, for
the reader's signal and for MAFE (``editor.citations.mafe``)."""

from __future__ import annotations

import re

from editor.claims.slot_values import bare_name
from editor.claims.slots import approximate, date_range, quantity
from editor.policy import within

HEDGE = re.compile(r"(?i)(?:about|around|roughly|approximately|nearly|almost|some|over)\b")
_WORD_NUMBERS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {
    w: str(10 * i)
    for i, w in enumerate("thirty forty fifty sixty seventy eighty ninety".split(), 3)
}


def numerals(text: str) -> str:
    """Number words as digits, "a week" as "1 week", "forty two" and "forty-two" as 42.

    >>> numerals("forty two days"), numerals("twenty-five"), numerals("sixteen weeks")
    ('42 days', '25', '16 weeks')
    """
    words = text.replace("-", " - ").split()
    if len(words) == 2 and words[0].lower() in ("a", "an", "one"):
        words[0] = "1"
    out: list[str] = []
    for w in words:
        n = _WORD_NUMBERS.get(w.lower())
        if n is None:
            out.append(w)
        elif len(out) > 1 and out[-1] == "-" and out[-2].isdigit() and out[-2].endswith("0"):
            out[-2:] = [str(int(out[-2]) + int(n))]  # forty-two
        elif (
            out
            and out[-1].isdigit()
            and out[-1].endswith("0")
            and int(n) < 10
            and int(out[-1]) >= 20
        ):
            out[-1] = str(int(out[-1]) + int(n))  # forty two
        else:
            out.append(n)
    return " ".join(out).replace(" - ", "-")


def same_answer(mine: str, theirs: str, after_mine: str = "", hedged: bool = False) -> bool:
    """Whether two answers to one question agree (see the module doc); answers that cannot be
    compared (a length against a weight) count as agreeing: no finding comes of them.

    >>> same_answer("Neil Armstrong", "Armstrong"), same_answer("2019", "14 March 2019")
    (True, True)
    >>> same_answer("4.2 kg", "2.8 kg"), same_answer("2.8 kilograms", "2.8 kg")
    (False, True)
    >>> same_answer("second", "first"), same_answer("six weeks", "6 weeks")
    (False, True)
    >>> same_answer("sixteen weeks", "16 weeks"), same_answer("forty", "40")
    (True, True)
    >>> same_answer("forty two", "40"), same_answer("John Adams", "John Quincy Adams")
    (False, False)
    >>> same_answer("a week", "7 days"), same_answer("a week", "10 days")
    (True, False)
    """
    a, b = bare_name(numerals(mine)), bare_name(numerals(theirs))
    if not a or not b or a == b or f" {a} " in f" {b} " or f" {b} " in f" {a} ":
        return True
    dates = date_range(mine), date_range(theirs)
    if dates[0] and dates[1]:
        (a0, a1), (b0, b1) = dates
        return (a0 <= b0 and b1 <= a1) or (b0 <= a0 and a1 <= b1)
    qa, qb = quantity(numerals(mine), after_mine), quantity(numerals(theirs))
    if qa and qb:
        if qa[1] and qb[1] and qa[1] != qb[1]:
            return True  # not the same kind of quantity: not comparable
        return within(qa[0], qb[0], hedged)
    return False


def hedged_at(text: str, start: int, answer: str) -> bool:
    """Whether the text hedges its answer (``answer`` at ``start``): "about 300", "nearly 2 m".

    >>> hedged_at("It weighs about 300 kg.", 16, "300 kg"), hedged_at("It is 3 m.", 6, "3 m")
    (True, False)
    """
    return approximate(text[:start]) or bool(HEDGE.match(answer))
