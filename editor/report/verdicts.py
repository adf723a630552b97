"""The judge's verdicts on the sentences of a revised text, read from the revision's steps, so
that the report says what the judge decided.

Each step records the sentence the judge assessed (``Step.span`` of ``Step.before``) and its
verdict. A sentence of the revised text takes the verdicts of the steps that judged it in the
form it has there: an accepted edit's revision is one the judge accepted (``supported``); a
sentence left as it was keeps the verdict the judge gave it. One contradiction stands whatever
other evidence says (a sentence is wrong where one relevant evidence contradicts it); else
support; else not stated.
"""

from __future__ import annotations

from collections.abc import Sequence

from editor.result import Step

_RANK = {"contradicted": 0, "supported": 1, "not_stated": 2}
REPORTED = {"contradicted": "contradicted", "supported": "supported", "not_stated": "unverified"}
"""the report's word for each verdict of the judge (the report says ``unverified`` for what
the evidence does not state)"""


def judged_verdicts(steps: Sequence[Step]) -> dict[str, str]:
    """The judge's verdict on each sentence (stripped text) the steps assessed in the form it
    ended up with, in the report's words.

    >>> s = Step("q", "e1", False, "r", "It is 5 m. Old.", "It is 6 m. Old.", True, span=(0, 10),
    ...          verdict="contradicted")
    >>> t = Step("q", "e2", True, "r", "It is 6 m. Old.", "It is 6 m. Old.", False, span=(11, 15),
    ...          verdict="supported")
    >>> judged_verdicts([s, t])
    {'It is 6 m.': 'supported', 'It is 5 m.': 'contradicted', 'Old.': 'supported'}
    """
    found: dict[str, str] = {}

    def note(sentence: str, verdict: str) -> None:
        key = sentence.strip()
        if key and verdict in _RANK and _RANK[verdict] < _RANK.get(found.get(key, ""), 9):
            found[key] = verdict

    for st in steps:
        if st.span is None or st.verdict is None or st.rule == "gate-off":
            continue
        a, b = st.span
        if st.accepted:
            note(st.after[a : b + len(st.after) - len(st.before)], "supported")
        note(st.before[a:b], st.verdict)
    return {k: REPORTED[v] for k, v in found.items()}
