"""The revision stage's contract: the ``Revises`` Protocol that the pipeline calls and the edit-size
rule (RARR's limits) that every edit must pass."""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
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


def keep_spacing(before: str, after: str) -> str:
    """``after`` with the words it shares with ``before`` written as ``before`` writes them
    and the spacing around them kept (a generating editor writes "80 km" for "80\u00a0km" and
    collapses double spaces): only the words the edit changes change.

    >>> keep_spacing("It is 80\u00a0km  (50\u00a0mi) long.", "It is 80 km (72 mi) long.")
    'It is 80\xa0km  (72\xa0mi) long.'
    >>> keep_spacing("Built in 1887.", "Built  in 1887."), keep_spacing("in 1887.", "Built in 1887.")
    ('Built in 1887.', 'Built in 1887.')
    >>> keep_spacing("It was  built.", "It was not built."), keep_spacing("It was not  built.", "It was built.")
    ('It was  not built.', 'It was  built.')
    """
    words = list(re.finditer(r"\S+", before))
    new = after.split()
    if not words or not new:
        return after
    gaps = [before[: words[0].start()]] + [
        before[a.end() : b.start()] for a, b in zip(words, words[1:], strict=False)
    ]
    out: list[str] = []
    ops = SequenceMatcher(None, [w.group() for w in words], new, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            out.extend(gaps[k] + words[k].group() for k in range(i1, i2))
        elif tag == "replace":
            out.append(gaps[i1] + " ".join(new[j1:j2]))
        elif tag == "insert" and i1 < len(words):  # before word i1: it takes a plain space
            out.append(gaps[i1] + " ".join(new[j1:j2]))
            gaps[i1] = " "
        elif tag == "insert":
            out.append(" " + " ".join(new[j1:j2]))
    return "".join(out) + before[words[-1].end() :]
