"""The revision stage's contract: the ``Revises`` Protocol that the pipeline calls and the edit-size
rule (RARR's limits) that every edit must pass."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from editor.report.metrics import levenshtein
from editor.result import Step
from editor.types import Evidence


class Revises(Protocol):
    """The revision stage: the revised text and the steps taken."""

    @property
    def name(self) -> str: ...

    def revise(
        self, text: str, evidence: Sequence[Evidence], context: str | None = None
    ) -> tuple[str, list[Step]]: ...


def edit_allowed(before: str, after: str, max_chars: int, max_ratio: float) -> tuple[bool, str]:
    """Whether an edit is within RARR's limits, and why not.

    >>> edit_allowed("Built in 1887.", "Built in 1889.", 50, 0.5)
    (True, 'edit of 1 characters')
    >>> edit_allowed("Built in 1887.", "Completely different words here.", 50, 0.5)[0]
    False
    """
    if after == before:
        return False, "no change"
    d = levenshtein(before, after)
    if d > max_chars:
        return False, f"edit of {d} characters exceeds the limit of {max_chars}"
    if d > max_ratio * max(1, len(before)):
        return False, f"edit of {d} characters exceeds {max_ratio:g} x the text's {len(before)}"
    return True, f"edit of {d} characters"
