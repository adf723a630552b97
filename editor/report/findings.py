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

from editor.report.sentence_verdicts import carried_back
from editor.result import FindingReport, Step
from editor.text.words import changed_run, fitted


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


def _joined(
    before: str, after: str, span: tuple[int, int], run: tuple[int, int, int]
) -> tuple[int, int, str]:
    """``span`` of ``before`` grown to hold the changed ``run`` (``changed_run``), and the words
    ``after`` has in its place: replacing ``before[start:end]`` by them gives ``after``'s text
    there.

    >>> b, a = "It has a one-year warranty.", "It has a two-year warranty."
    >>> _joined(b, a, (9, 17), changed_run(b, a))
    (9, 17, 'two-year')
    """
    start, end = min(span[0], run[0]), max(span[1], run[1])
    return start, end, before[start : run[0]] + after[run[0] : run[2]] + before[run[1] : end]


def findings(original: str, steps: Sequence[Step]) -> tuple[FindingReport, ...]:
    """The findings of a revision's ``steps`` over ``original`` (see the module doc). A
    finding's ``fix`` replaces exactly ``original[start:end]``: for a fixed one the words the
    edit wrote there (its span the words it replaced), for an unsure one its suggestion, for
    one only named the evidence's words fitted to the span."""
    out: dict[tuple, FindingReport] = {}
    for i, st in enumerate(steps):
        region = changed_run(st.before, st.after) if st.accepted and st.after != st.before else None
        unsure = changed_run(st.before, st.suggested) if st.suggested else None
        for fl in st.flags:
            start, end, suggestion = fl.start, fl.end, None
            fix = fitted(st.before, start, end, fl.fix)
            if unsure is not None and unsure[0] <= fl.end and unsure[1] >= fl.start:
                assert st.suggested is not None  # the named words and those the edit would replace
                start, end, fix = _joined(st.before, st.suggested, (fl.start, fl.end), unsure)
                suggestion = fix
            fixed = region is not None and region[0] <= end and region[1] >= start
            if fixed:
                assert region is not None  # the named words and those the edit replaced
                start, end, fix = _joined(st.before, st.after, (start, end), region)
            named = st.before[fl.start : fl.end]
            key = (_in_original(original, steps, i, fl.start, fl.end), named, fl.kind)
            where = _in_original(original, steps, i, start, end)
            a, b = where if where is not None else (None, None)
            kind = "safe" if fixed else "unsafe" if suggestion is not None else "display"
            found = FindingReport(
                a, b, st.before[start:end], fl.kind, st.evidence_id, fix, fixed, st.reason, kind,
                suggestion,
            )  # fmt: skip
            held = out.get(key)
            if any((f.start, f.end, f.fix) == (a, b, fix) for f in out.values() if f is not held):
                continue  # two flags of one edit (a swap): the words it would replace, once
            if held is None:
                out[key] = found
            elif fixed and not held.fixed:  # the first, most relevant evidence still names it
                out[key] = replace(found, evidence_id=held.evidence_id)
            elif suggestion is not None and held.applicability == "display":
                out[key] = found  # its span and fix: the words the unsure edit would replace
    return tuple(sorted(out.values(), key=lambda f: (f.start is None, f.start or 0)))
