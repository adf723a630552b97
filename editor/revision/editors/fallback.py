"""An editor with a second opinion: the first editor's revision when it is usable, else the
second's (dspy's ``Refine`` habit: a wrapper that composes editors instead of subclassing).

The default pipeline runs the trained causal editor first and falls back to the substitute
editor (the evidence's own name, number or date swapped in, kept only when the attribution
model agrees) where the trained editor returns the text unchanged or an edit larger than the
revision limits would accept; the reason says which editor answered.
"""

from __future__ import annotations

from collections.abc import Sequence

from editor.revision.base import edit_allowed
from editor.revision.editors.base import Editor, Revision
from editor.types import Evidence


class FallbackEditor:
    """``primary``'s revisions, with ``secondary`` filling in where they are unusable."""

    def __init__(
        self, primary: Editor, secondary: Editor, max_edit_chars: int = 50, max_ratio: float = 0.5
    ) -> None:
        self.primary = primary
        self.secondary = secondary
        self.max_edit_chars = max_edit_chars
        self.max_ratio = max_ratio
        self.name = f"{primary.name}+{secondary.name}"

    def load(self) -> None:
        """Load both editors' models now (else on first use)."""
        for editor in (self.primary, self.secondary):
            load = getattr(editor, "load", None)
            if callable(load):
                load()

    def usable(self, text: str, revision: Revision) -> tuple[bool, str]:
        """Whether ``revision`` changes ``text`` within the edit limits, and why not.

        >>> from editor.revision.editors import IdentityEditor
        >>> ed = FallbackEditor(IdentityEditor(), IdentityEditor(), 10, 0.5)
        >>> ed.usable("Built in 1887.", Revision("Built in 1889.", ""))
        (True, 'edit of 1 characters')
        >>> ed.usable("Built in 1887.", Revision("Built in 1887.", ""))
        (False, 'no change')
        """
        return edit_allowed(
            text.strip(), revision.text.strip(), self.max_edit_chars, self.max_ratio
        )

    def edit(self, text: str, evidence: Sequence[Evidence], context: str | None = None) -> Revision:
        return self.edit_batch([(text, evidence)], context)[0]

    def edit_batch(
        self, items: Sequence[tuple[str, Sequence[Evidence]]], context: str | None = None
    ) -> list[Revision]:
        first = self.primary.edit_batch(items, context)
        redo = [i for i, (r, (t, _)) in enumerate(zip(first, items, strict=True))
                if not self.usable(t, r)[0]]  # fmt: skip
        out = list(first)
        if redo:
            second = self.secondary.edit_batch([items[i] for i in redo], context)
            for i, rev in zip(redo, second, strict=True):
                why = self.usable(items[i][0], first[i])[1]
                out[i] = Revision(
                    rev.text, f"{self.primary.name}: {why}; {self.secondary.name}: {rev.reason}"
                )
        return out
