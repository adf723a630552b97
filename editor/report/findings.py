"""What the evidence flagged in the caller's text, fixed or not (``EditResult.findings``).

Each revision step carries the agreement gate's flags (``Step.flags``: words of the text it
judged, with the evidence's words for the slot where the span judge found them; a sentence-level
gate flags the whole sentence). Here they become offsets of the original text, one finding per
flagged span (the first, most relevant evidence names it), marked fixed where an accepted step
changed those words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from editor.result import Finding, Step
from editor.text.words import changed_run


def _in_original(original: str, before: str, start: int, end: int) -> tuple[int, int] | None:
    """Where ``before[start:end]`` stands in ``original``: the same place when the step judged
    the original, else the nearest occurrence of the words (None when an edit removed them)."""
    if before == original:
        return start, end
    words = before[start:end]
    hits, at = [], original.find(words)
    while at >= 0 and words:
        hits.append(at)
        at = original.find(words, at + 1)
    if not hits:
        return None
    at = min(hits, key=lambda h: abs(h - start))
    return at, at + len(words)


def findings(original: str, steps: Sequence[Step]) -> tuple[Finding, ...]:
    """The findings of a revision's ``steps`` over ``original`` (see the module doc)."""
    out: dict[tuple, Finding] = {}
    for st in steps:
        region = changed_run(st.before, st.after) if st.accepted and st.after != st.before else None
        for fl in st.flags:
            words = st.before[fl.start : fl.end]
            where = _in_original(original, st.before, fl.start, fl.end)
            fixed = region is not None and region[0] <= fl.end and region[1] >= fl.start
            key = (where, words, fl.kind)
            if key in out:
                if fixed and not out[key].fixed:
                    out[key] = replace(out[key], fixed=True, reason=st.reason)
                continue
            start, end = where if where is not None else (None, None)
            out[key] = Finding(start, end, words, fl.kind, st.evidence_id, fl.fix, fixed, st.reason)
    return tuple(sorted(out.values(), key=lambda f: (f.start is None, f.start or 0)))
