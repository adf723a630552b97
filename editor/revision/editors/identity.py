"""The ``identity`` editor: changes nothing (the baseline every editor is measured against)."""

from __future__ import annotations

from collections.abc import Sequence

from editor.revision.editors.base import OneByOne, Revision
from editor.types import Evidence


class IdentityEditor(OneByOne):
    """Changes nothing: the baseline every editor is measured against."""

    name = "identity"
    edits = False  # a capability: no gate, no fallback, nothing to revise

    def edit(self, text: str, evidence: Sequence[Evidence], context: str | None = None) -> Revision:
        return Revision(text, "identity editor: no edits")
