"""The judge's policy: every comparison that turns a score into a decision, with the numbers
from the judge's config section (``judge:``; the defaults here are its defaults).

The stages outside ``editor/judge`` ask these functions rather than compare a score with a
number themselves (``tests/test_editor/test_judge/test_policy.py`` fails where one does): the
gate and the report's contradiction (``refutes``), the report's and auto-AIS's attribution
(``attributed``), an editor's swap (``gains``, ``swap_helps``), RARR's edit size limits
(``edit_allowed``), citation repair's removal (``removes_citation``) and ``purr check``'s
answer match (``answers_agree``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rapidfuzz.distance import Levenshtein

from editor.types import EntailmentScores

if TYPE_CHECKING:
    from editor.claims.slot_check import SlotObservation

CONTRADICTED_MIN = 0.7
"""``judge.contradicted_min``: P(contradicted) a judgement needs (above P(supported) too) to
count as a contradiction when no slot check names the span the evidence states otherwise. At
0.5 the fused verifier called 20-22% of the supported claims of SciFact and SummEdits dev
(first 120 rows each) contradicted; at 0.7, 2.4% and 0%."""
ATTRIBUTED_MIN = 0.5
"""``judge.attributed_min``: P(supported) from which a sentence is attributable."""


def refutes(
    scores: EntailmentScores,
    slot: SlotObservation | None = None,
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
