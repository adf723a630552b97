"""The judge's policy: every comparison that turns a score or an observation into a decision,
with the numbers from the judge's config section (``judge:``; the defaults here are its
defaults) and the slot check's tolerances.

It sits below every stage so that each can ask it: the stages outside ``editor/judge`` never
compare a score with a number themselves (``tests/test_editor/test_judge/test_policy.py`` fails
where one does). They ask: the gate and the report's contradiction (``refutes``), the report's
and auto-AIS's attribution (``attributed``), an editor's swap (``gains``, ``swap_helps``),
RARR's edit size limits (``edit_allowed``), citation repair's removal (``removes_citation``),
``purr check``'s answer match (``answers_agree``), and the slot check (``editor.claims``),
which observes: whether an evidence sentence shares enough of a claim's context to be compared
(``aligned``, ``negation_aligned``), whether two quantities are one (``same_quantity``), and
whether the evidence states a claim word for word (``states_verbatim``).
"""

from __future__ import annotations

from typing import Protocol

from rapidfuzz.distance import Levenshtein

from editor.types import EntailmentScores


class SlotOutcome(Protocol):
    """What ``refutes`` reads of a slot check's observation (``editor.claims.slot_check``)."""

    @property
    def names_a_difference(self) -> bool: ...

    @property
    def less_specific(self) -> bool: ...


CONTRADICTED_MIN = 0.7
"""``judge.contradicted_min``: P(contradicted) a judgement needs (above P(supported) too) to
count as a contradiction when no slot check names the span the evidence states otherwise. At
0.5 the fused verifier called 20-22% of the supported claims of SciFact and SummEdits dev
(first 120 rows each) contradicted; at 0.7, 2.4% and 0%."""
ATTRIBUTED_MIN = 0.5
"""``judge.attributed_min``: P(supported) from which a sentence is attributable."""


def refutes(
    scores: EntailmentScores,
    slot: SlotOutcome | None = None,
    min_contradicted: float = CONTRADICTED_MIN,
) -> bool:
    """The one contradiction rule (the agreement gate, the report, ``purr eval slots``): a slot
    check that names the span the evidence states otherwise, or P(contradicted) at least
    ``min_contradicted`` and above P(supported), unless the slot check found the evidence only
    less specific than the claim.

    >>> refutes(EntailmentScores(0.2, 0.75, 0.05)), refutes(EntailmentScores(0.3, 0.6, 0.1))
    (True, False)
    """
    if slot is not None and slot.names_a_difference:
        return True
    if slot is not None and slot.less_specific:
        return False  # a coarser statement of the same slot: nothing to correct
    return scores.contradicted >= min_contradicted and scores.contradicted > scores.supported


def attributed(p_supported: float, threshold: float = ATTRIBUTED_MIN) -> bool:
    """Whether P(supported) makes a sentence attributable (auto-AIS; the report's ``supported``
    where the judge did not assess the sentence).

    >>> attributed(0.5), attributed(0.49)
    (True, False)
    """
    return p_supported >= threshold


def gains(before: float, after: float, min_gain: float) -> bool:
    """Whether an edit raised P(supported) - P(contradicted) from ``before`` to ``after`` by at
    least ``min_gain`` (``judge.min_gain``: substitute and the answer editor keep such a swap).

    >>> gains(-0.5, 0.1, 0.2), gains(0.0, 0.1, 0.2)
    (True, False)
    """
    return after - before >= min_gain


def swap_helps(before: float, after: float, min_gain: float) -> bool:
    """Whether a swap stands for an editor to propose it: P(supported) - P(contradicted) rose
    by ``min_gain`` (``gains``) and ends up above 0 (the sentence supported more than
    contradicted).

    >>> swap_helps(-0.5, 0.1, 0.2), swap_helps(-0.5, -0.1, 0.2)
    (True, False)
    """
    return gains(before, after, min_gain) and after > 0


def edit_allowed(before: str, after: str, max_chars: int, max_ratio: float) -> tuple[bool, str]:
    """Whether an edit is within RARR's limits (``judge.max_edit_chars``,
    ``judge.max_edit_ratio``), and why not.

    >>> edit_allowed("Built in 1887.", "Built in 1889.", 50, 0.5)
    (True, 'edit of 1 characters')
    >>> edit_allowed("Built in 1887.", "Completely different words here.", 50, 0.5)[0]
    False
    """
    if after == before:
        return False, "no change"
    d = int(Levenshtein.distance(before, after))
    if d > max_chars:
        return False, f"edit of {d} characters exceeds the limit of {max_chars}"
    if d > max_ratio * max(1, len(before)):
        return False, f"edit of {d} characters exceeds {max_ratio:g} x the text's {len(before)}"
    return True, f"edit of {d} characters"


def removes_citation(best_supported: float, remove_below: float) -> bool:
    """Whether a citation goes: its best source gives its claim P(supported) under
    ``remove_below`` (``judge.remove_citation_below``)."""
    return best_supported < remove_below


ANSWER_F1_MIN = 0.5
"""Token F1 from which two answers to one question are read as the same (MAFE's questions)."""


def answers_agree(same_value: bool, f1: float) -> bool:
    """Whether the sources answer a question of the text as the text does: the same value, or
    at least ``ANSWER_F1_MIN`` of its words (``purr check`` lists the rest).

    >>> answers_agree(False, 0.6), answers_agree(False, 0.4), answers_agree(True, 0.0)
    (True, False, True)
    """
    return same_value or f1 >= ANSWER_F1_MIN


def silent(no_answer: float, max_no_answer: float) -> bool:
    """Whether a reading says nothing on the question: P(no answer) over ``max_no_answer``
    (``judge.reader.max_no_answer``).

    >>> silent(0.31, 0.3), silent(0.3, 0.3)
    (True, False)
    """
    return no_answer > max_no_answer


# -- the slot check's tolerances ---------------------------------------------------------------

ALIGNED_MIN = 0.4
"""The share of a claim's context words (its words besides the slots) an evidence sentence
must share for the slot check to compare the two; below it the evidence is about something
else and nothing is observed."""
NEGATION_ALIGNED_MIN = 0.6
"""The share from which a claim and an evidence sentence of opposite polarity (one negated)
differ: below it they may say different things."""
EXACT_BELOW = 10_000
"""Whole numbers under this (counts, years) are the same only when equal: "12 games" is not
"12.1 games" rounded."""
SAME_WITHIN = 0.01
"""Two other quantities are one within this relative difference (rounding)..."""
HEDGED_WITHIN = 0.1
"""...or within this one where the claim hedges its value ("about 300 metres")."""
VERBATIM_MIN_WORDS = 3
"""Content words from which a claim the evidence states word for word is supported by it."""
VERBATIM_SUPPORTED = 0.97
"""P(supported) at least, of a claim the evidence states word for word (``states_verbatim``)."""


def aligned(overlap: float) -> bool:
    """Whether an evidence sentence sharing ``overlap`` of a claim's context words is compared
    with it (``ALIGNED_MIN``).

    >>> aligned(0.4), aligned(0.39)
    (True, False)
    """
    return overlap >= ALIGNED_MIN


def negation_aligned(overlap: float) -> bool:
    """Whether opposite polarity at ``overlap`` is a difference (``NEGATION_ALIGNED_MIN``)."""
    return overlap >= NEGATION_ALIGNED_MIN


def within(a: float, b: float, hedged: bool = False) -> bool:
    """Whether two quantities differ by at most ``SAME_WITHIN`` of the larger (``HEDGED_WITHIN``
    where the claim hedges).

    >>> within(2.8, 2.81), within(300, 320), within(300, 320, hedged=True)
    (True, False, True)
    """
    scale = max(abs(a), abs(b), 1e-9)
    return abs(a - b) / scale <= (HEDGED_WITHIN if hedged else SAME_WITHIN)


def same_quantity(a: float, b: float, hedged: bool = False) -> bool:
    """Whether a claim's quantity ``a`` and the evidence's ``b`` (one unit) are one: whole
    numbers under ``EXACT_BELOW`` only when equal (unless hedged), others ``within``.

    >>> same_quantity(1887, 1889), same_quantity(330.0, 330.2), same_quantity(12, 13, True)
    (False, True, True)
    """
    whole = float(a).is_integer() and float(b).is_integer() and max(a, b) < EXACT_BELOW
    if whole and not hedged:
        return a == b
    return within(a, b, hedged)


def states_verbatim(verbatim: bool, content_words: int) -> bool:
    """Whether the evidence stating a claim of ``content_words`` word for word supports it."""
    return verbatim and content_words >= VERBATIM_MIN_WORDS
