"""An editor with a second opinion: the first editor's revision when it is usable, else the
second's (dspy's ``Refine`` habit: a wrapper that composes editors instead of subclassing).

The default pipeline runs the substitute editor first (the evidence's own name, number or
date swapped in, kept only when the attribution model agrees: a fraction of a second) and falls
back to the trained causal LLM editor (about 2 s a call on two CPU cores) where the substitute
returns the text unchanged, an edit larger than the revision limits would accept, or (given an
``acceptance``) an edit the verifier or the form check rejects; the reason says which editor
answered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from editor.revision.base import edit_allowed
from editor.revision.editors.base import Editor, Revision
from editor.types import Evidence

Usable = Callable[[str, str, Evidence, "str | None"], Any]
"""The judge's decision on a whole-sentence revision against one evidence (``RulesJudge.usable``:
anything with ``accepted`` and ``reason``)."""


class FallbackEditor:
    """``primary``'s revisions, with ``secondary`` filling in where they are unusable."""

    def __init__(
        self,
        primary: Editor,
        secondary: Editor,
        max_edit_chars: int = 50,
        max_ratio: float = 0.5,
        acceptance: Usable | None = None,
    ) -> None:
        self.primary = primary
        self.secondary = secondary
        self.max_edit_chars = max_edit_chars
        self.max_ratio = max_ratio
        self.acceptance = acceptance
        self.name = f"{primary.name}+{secondary.name}"

    def load(self) -> None:
        """Load both editors' models now (else on first use)."""
        for editor in (self.primary, self.secondary):
            load = getattr(editor, "load", None)
            if callable(load):
                load()

    def usable(
        self,
        text: str,
        revision: Revision,
        evidence: Sequence[Evidence] = (),
        context: str | None = None,
    ) -> tuple[bool, str]:
        """Whether ``revision`` changes ``text`` within the edit limits (and, with an
        ``acceptance`` and ``evidence``, the judge would apply it against the first evidence),
        and why not.

        >>> from editor.revision.editors import IdentityEditor
        >>> ed = FallbackEditor(IdentityEditor(), IdentityEditor(), 10, 0.5)
        >>> ed.usable("Built in 1887.", Revision("Built in 1889.", ""))
        (True, 'edit of 1 characters')
        >>> ed.usable("Built in 1887.", Revision("Built in 1887.", ""))
        (False, 'no change')
        """
        ok, why = edit_allowed(
            text.strip(), revision.text.strip(), self.max_edit_chars, self.max_ratio
        )
        if not ok or self.acceptance is None or not evidence:
            return ok, why
        d = self.acceptance(text.strip(), revision.text.strip(), evidence[0], context)
        return d.accepted, d.reason

    def edit(self, text: str, evidence: Sequence[Evidence], context: str | None = None) -> Revision:
        return self.edit_batch([(text, evidence)], context)[0]

    def edit_batch(
        self, items: Sequence[tuple[str, Sequence[Evidence]]], context: str | None = None
    ) -> list[Revision]:
        first = self.primary.edit_batch(items, context)
        verdicts = [self.usable(t, r, ev, context) for r, (t, ev) in zip(first, items, strict=True)]
        redo = [i for i, (ok, _) in enumerate(verdicts) if not ok]
        out = [Revision(r.text, r.reason, r.editor or self.primary.name) for r in first]
        if redo:
            second = self.secondary.edit_batch([items[i] for i in redo], context)
            for i, rev in zip(redo, second, strict=True):
                why = verdicts[i][1]
                out[i] = Revision(
                    rev.text,
                    f"{self.primary.name}: {why}; {self.secondary.name}: {rev.reason}",
                    rev.editor or self.secondary.name,
                )
        return out
