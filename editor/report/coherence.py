"""Whether an edit's result says one thing: each step's reason opens with what its verdict says
(``editor.verdicts.SAYS``), no sentence the judge doubts (a step left it contradicted, or
suggested an unsure fix) is reported supported, and every such sentence is named in
``findings``. ``purr eval edits`` counts what breaks it (``metrics.json["incoherent"]``).
"""

from __future__ import annotations

from editor.report.sentence_verdicts import carried, sentence_spans, stripped
from editor.result import EditResult
from editor.verdicts import CONTRADICTED, SAYS, SUPPORTED


def incoherences(result: EditResult) -> list[str]:
    """What in ``result`` says something other than its judge decided (empty: nothing).

    >>> from editor.result import Step
    >>> st = Step("q", "e", True, "the evidence does not state it", "A.", "A.", False,
    ...           span=(0, 2), verdict="supported")
    >>> incoherences(EditResult("A.", "A.", None, (), (), (st,), None, "unchanged"))
    ["step 0: verdict supported, reason 'the evidence does not state it'"]
    """
    out: list[str] = []
    said = result.report.sentences if result.report else ()
    spans = sentence_spans(result.revised, [s.text for s in said])
    reported = {span: s.verdict for s, span in zip(said, spans, strict=True)}
    named = [f.text for f in result.findings if f.text]
    for i, st in enumerate(result.steps):
        if st.verdict is None or st.span is None:
            continue
        if not st.reason.startswith(SAYS.get(st.verdict, ())):
            out.append(f"step {i}: verdict {st.verdict}, reason {st.reason[:60]!r}")
        doubted = st.verdict == CONTRADICTED or st.suggested is not None
        if not doubted or st.accepted:
            continue
        sentence = st.before[st.span[0] : st.span[1]].strip()
        moved = carried(st.span, st.before, result.steps[i + 1 :])
        where = stripped(result.revised, moved[0]) if moved else None
        if where is not None and reported.get(where) == SUPPORTED:
            out.append(f"step {i}: {st.verdict} sentence reported supported: {sentence[:60]!r}")
        if not any(w in sentence or sentence in w for w in named):
            out.append(f"step {i}: {st.verdict} sentence not in findings: {sentence[:60]!r}")
    return out
