"""The ``span`` editor: extractive fixes by the span judge (``editor.revision.span_fix``).

Each contradicted span the judge flags is replaced by the evidence words its pointer names,
fitted to the sentence; the edit stands only when the judge, reading the revised sentence
against the same evidence, calls it supported and no longer flags the words it wrote (and,
with the guards on, the sentence keeps its form). Otherwise the text comes back unchanged with
the reason. Nothing else in the sentence moves.
"""

from __future__ import annotations

from collections.abc import Sequence

from editor.revision.editors.base import OneByOne, Revision
from editor.revision.span_fix import SpanFixer, asked
from editor.types import Evidence, evidence_text


class SpanEditor(OneByOne):
    name = "span"

    def __init__(self, fixer: SpanFixer) -> None:
        self.fixer = fixer

    def edit(self, text: str, evidence: Sequence[Evidence], context: str | None = None) -> Revision:
        if not text.strip() or not evidence:
            return Revision(text, "nothing to edit")
        f = self.fixer.fix(text, [evidence_text(e) for e in evidence[:1]], asked(context))
        return Revision(f.revised, f.reason)
