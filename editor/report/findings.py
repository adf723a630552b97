"""What the judge flagged in the caller's text, fixed or not (``EditResult.findings``).

Each revision step carries the judge's flags (``Step.flags``: words of the text it judged,
with the evidence's words for the slot where the span judge found them; a sentence-level
judgement flags the whole sentence). Here they become offsets of the original text, one finding
per flagged span (the first, most relevant evidence names it), marked fixed (``safe``) where an
accepted step changed those words. Where the judge was unsure of an edit (``Step.suggested``)
the finding names the words that edit would replace and suggests its words (``unsafe``); the
rest name their words only (``display``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from editor.report.verdicts import carried_back
from editor.result import FindingReport, Step
from editor.text.words import changed_run


def _in_original(
    original: str, steps: Sequence[Step], i: int, start: int, end: int
) -> tuple[int, int] | None:
    """Where ``steps[i].before[start:end]`` stands in ``original``: the same place where the
    step judged the original, else carried back through the accepted edits before it (None
    where an edit wrote those words)."""
    if steps[i].before == original:
        return start, end
    back = carried_back((start, end), steps[i].before, steps[:i])
    return back[0] if back is not None and back[1] == original else None


def findings(original: str, steps: Sequence[Step]) -> tuple[FindingReport, ...]:
    """The findings of a revision's ``steps`` over ``original`` (see the module doc)."""
    out: dict[tuple, FindingReport] = {}
    for i, st in enumerate(steps):
        region = changed_run(st.before, st.after) if st.accepted and st.after != st.before else None
        unsure = changed_run(st.before, st.suggested) if st.suggested else None
        for fl in st.flags:
            start, end, suggestion = fl.start, fl.end, None
            if unsure is not None and unsure[0] <= fl.end and unsure[1] >= fl.start:
                start, end = unsure[0], unsure[1]  # the words the unsure edit would replace
                assert st.suggested is not None
                suggestion = st.suggested[unsure[0] : unsure[2]]
            words = st.before[start:end]
            where = _in_original(original, steps, i, start, end)
            fixed = region is not None and region[0] <= end and region[1] >= start
            key = (where, words, fl.kind)
            if key in out:
                if fixed and not out[key].fixed:
                    out[key] = replace(
                        out[key],
                        fixed=True,
                        reason=st.reason,
                        applicability="safe",
                        suggestion=None,
                    )
                elif suggestion is not None and out[key].applicability == "display":
                    out[key] = replace(out[key], applicability="unsafe", suggestion=suggestion)
                continue
            a, b = where if where is not None else (None, None)
            kind = "safe" if fixed else "unsafe" if suggestion is not None else "display"
            out[key] = FindingReport(
                a, b, words, fl.kind, st.evidence_id, fl.fix, fixed, st.reason, kind, suggestion
            )
    return tuple(sorted(out.values(), key=lambda f: (f.start is None, f.start or 0)))
