"""The revision stage's contract: the ``Revises`` Protocol that the pipeline calls (RARR's edit
size limits, which every edit must pass, are the judge's: ``editor.policy.edit_allowed``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from editor.result import Step
from editor.types import Evidence


class Revises(Protocol):
    """The revision stage: the revised text and the steps taken."""

    @property
    def name(self) -> str: ...

    def revise(
        self, text: str, evidence: Sequence[Evidence], context: str | None = None
    ) -> tuple[str, list[Step]]: ...
