"""The editor stage's contract: the ``Revision`` record, the ``Editor`` Protocol and its registry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from editor.attribution.base import AttributionModel
from editor.config import EditorConfig
from editor.registry import Registry
from editor.types import Evidence


@dataclass(frozen=True)
class Revision:
    """An editor's answer: the revised text (``text`` itself when nothing changed), why, and
    which editor wrote it where editors compose (None: the editor called)."""

    text: str
    reason: str
    editor: str | None = None


class Editor(Protocol):
    """Revises a text so that it agrees with the evidence."""

    name: str

    def edit(
        self, text: str, evidence: Sequence[Evidence], context: str | None = None
    ) -> Revision: ...

    def edit_batch(
        self, items: Sequence[tuple[str, Sequence[Evidence]]], context: str | None = None
    ) -> list[Revision]: ...


class OneByOne:
    """``edit_batch`` as a loop over ``edit``."""

    def edit_batch(
        self, items: Sequence[tuple[str, Sequence[Evidence]]], context: str | None = None
    ) -> list[Revision]:
        return [self.edit(t, e, context) for t, e in items]  # type: ignore[attr-defined]


class FromBatch:
    """``edit`` as a batch of one (for editors whose work is naturally batched)."""

    def edit(self, text: str, evidence: Sequence[Evidence], context: str | None = None) -> Revision:
        return self.edit_batch([(text, evidence)], context)[0]  # type: ignore[attr-defined]


def edits(editor: object) -> bool:
    """Whether ``editor`` can change a text: an editor that cannot (``edits = False``, e.g.
    ``identity``) gets no agreement gate and no fallback, and the loop skips it."""
    return bool(getattr(editor, "edits", True))


EditorFactory = Callable[..., Editor]

_EDITORS: Registry[EditorFactory] = Registry("editor type", "editor.type")

register = _EDITORS.register
"""Make ``factory(cfg, attribution=..., llm=..., llm_cfg=..., policy=...)`` buildable as
``editor.type=name``; ``attribution`` and ``llm`` are zero-argument loaders, ``policy`` the
judge's config section."""


available = _EDITORS.available
"""The names ``build`` accepts."""


def build(
    cfg: EditorConfig,
    attribution: Callable[[], AttributionModel],
    llm: Callable[[], Any],
    llm_cfg: Any = None,
    policy: Any = None,
) -> Editor:
    """The editor of ``cfg.type``; models load lazily on first use; ``policy``: the judge's
    (``JudgeConfig``; its ``min_gain`` decides substitute's swaps)."""
    from editor.config import JudgeConfig

    return _EDITORS.get(cfg.type)(
        cfg, attribution=attribution, llm=llm, llm_cfg=llm_cfg, policy=policy or JudgeConfig()
    )
