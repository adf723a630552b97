"""The judge's verdicts on the sentences of a revised text, read from the revision's steps, so
that the report says what the judge decided.

Each step records the sentence the judge assessed (``Step.span`` of ``Step.before``) and its
verdict. The span is carried through the accepted edits that came after it to where the
sentence stands in the revised text (``carried``), so a sentence written twice takes only its
own verdicts. A sentence of the revised text takes the verdicts of the steps that judged it in
the form it has there: an accepted edit's revision is one the judge accepted (``supported``); a
sentence left as it was keeps the verdict the judge gave it. One contradiction stands whatever
other evidence says (a sentence is wrong where one relevant evidence contradicts it); else
support; else not stated.
"""

from __future__ import annotations

from collections.abc import Sequence

from editor.result import Step
from editor.text.words import changed_run
from editor.verdicts import CONTRADICTED, NOT_STATED, REPORTED, SUPPORTED

Span = tuple[int, int]

_RANK = {CONTRADICTED: 0, SUPPORTED: 1, NOT_STATED: 2}


def stripped(text: str, span: Span) -> Span:
    """``span`` of ``text`` without the spaces at either end.

    >>> stripped(" Hi. ", (0, 5))
    (1, 4)
    """
    a, b = span
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def carried(span: Span, text: str, later: Sequence[Step]) -> tuple[Span, str] | None:
    """``span`` of ``text`` where it stands after the accepted edits of ``later`` (in order),
    and the text they leave; None where an edit reaches across the span's ends or a step did
    not start from the text the edits before it left.

    >>> s = Step("q", "e", False, "r", "A is 5. B is 7.", "A is 5. B is 8.", True)
    >>> carried((0, 7), "A is 5. B is 7.", [s])
    ((0, 7), 'A is 5. B is 8.')
    >>> carried((8, 15), "A is 5. B is 7.", [s])
    ((8, 15), 'A is 5. B is 8.')
    """
    a, b = span
    for st in later:
        if not st.accepted or st.after == st.before:
            continue
        if st.before != text:
            return None
        s, e, f = changed_run(st.before, st.after)
        if e <= a and s < a:
            a, b = a + f - e, b + f - e
        elif s >= b:
            pass
        elif s >= a and e <= b:
            b += f - e
        else:
            return None
        text = st.after
    return (a, b), text


def carried_back(span: Span, text: str, earlier: Sequence[Step]) -> tuple[Span, str] | None:
    """``span`` of ``text`` where it stood before the accepted edits of ``earlier`` (undone
    last first), and the text that was; None where an edit wrote any of it or a step did not
    leave the text the next one started from.

    >>> s = Step("q", "e", False, "r", "A is 5. B is 7.", "A is 55. B is 7.", True)
    >>> carried_back((9, 16), "A is 55. B is 7.", [s])
    ((8, 15), 'A is 5. B is 7.')
    >>> carried_back((5, 7), "A is 55. B is 7.", [s]) is None
    True
    """
    a, b = span
    for st in reversed(earlier):
        if not st.accepted or st.after == st.before:
            continue
        if st.after != text:
            return None
        s, e, f = changed_run(st.before, st.after)
        if a >= f:
            a, b = a - (f - e), b - (f - e)
        elif b > s:
            return None
        text = st.before
    return (a, b), text


def judged_verdicts(steps: Sequence[Step], revised: str) -> dict[Span, str]:
    """The judge's verdict on each sentence of ``revised`` the steps assessed in the form it
    ended up with, in the report's words, by the sentence's span (``stripped``) there.

    >>> s = Step("q", "e1", False, "r", "It is 5 m. Old.", "It is 6 m. Old.", True, span=(0, 10),
    ...          verdict="contradicted")
    >>> t = Step("q", "e2", True, "r", "It is 6 m. Old.", "It is 6 m. Old.", False, span=(11, 15),
    ...          verdict="supported")
    >>> judged_verdicts([s, t], "It is 6 m. Old.")
    {(0, 10): 'supported', (11, 15): 'supported'}
    """
    found: dict[Span, str] = {}

    def note(span: Span, text: str, later: Sequence[Step], verdict: str) -> None:
        moved = carried(span, text, later)
        if moved is None or moved[1] != revised:
            return
        key = stripped(revised, moved[0])
        if (
            key[1] > key[0]
            and verdict in _RANK
            and _RANK[verdict] < _RANK.get(found.get(key, ""), 9)
        ):
            found[key] = verdict

    for i, st in enumerate(steps):
        if st.span is None or st.verdict is None or st.rule == "gate-off":
            continue
        a, b = st.span
        later = steps[i + 1 :]
        if st.accepted:
            note((a, b + len(st.after) - len(st.before)), st.after, later, SUPPORTED)
        else:
            note((a, b), st.before, later, st.verdict)
    return {k: REPORTED[v] for k, v in found.items()}


def sentence_spans(revised: str, sentences: Sequence[str]) -> list[Span | None]:
    """Where each of ``sentences`` (in order, as the report splits ``revised``) stands in it,
    ``stripped``; None where one is not found after the one before it."""
    out: list[Span | None] = []
    at = 0
    for s in sentences:
        words = s.strip()
        k = revised.find(words, at) if words else -1
        out.append(None if k < 0 else (k, k + len(words)))
        at = at if k < 0 else k + len(words)
    return out
