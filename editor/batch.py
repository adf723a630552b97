"""``Pipeline.edit_batch``: one edit per row, in order, a row's bad input kept as its outcome
instead of stopping the batch."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tqdm.auto import tqdm

from editor.inputs import InputError
from editor.result import EditResult

Edit = Callable[[str, str | None, Sequence[str] | None, Sequence[Any] | None], EditResult]
"""``Pipeline.edit``: (text, context, evidence, sources) -> result."""


@dataclass(frozen=True)
class BatchOutcome:
    """One row of ``edit_batch``: its ``result``, or the ``error`` that kept it from being edited
    (exactly one of the two is set)."""

    result: EditResult | None
    error: InputError | None = None


def edit_batch(
    edit: Edit,
    texts: Sequence[str],
    contexts: Sequence[str | None] | None = None,
    evidence: Sequence[Sequence[str] | None] | None = None,
    progress: bool = False,
    sources: Sequence[Sequence[Any] | None] | None = None,
) -> list[BatchOutcome]:
    """``edit`` over many passages, in order: one ``BatchOutcome`` per row, with the result,
    or the ``InputError`` of a row with bad input (which does not stop the batch)."""
    contexts = contexts if contexts is not None else [None] * len(texts)
    evidence = evidence if evidence is not None else [None] * len(texts)
    sources = sources if sources is not None else [None] * len(texts)
    if not (len(texts) == len(contexts) == len(evidence) == len(sources)):
        raise InputError("texts, contexts, evidence and sources must have the same length")
    out: list[BatchOutcome] = []
    for text, ctx, ev, src in tqdm(
        list(zip(texts, contexts, evidence, sources, strict=True)),
        desc="edit",
        disable=not progress,
    ):
        try:
            out.append(BatchOutcome(edit(text, ctx, ev, src)))
        except InputError as e:
            out.append(BatchOutcome(None, e))
    return out
