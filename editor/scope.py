"""One edit's state: what its stages compute once and read again, kept for that edit alone.

An edit's run (``editor.edit_run.EditRun``) holds its ``EditScope`` and makes it the current
one while it runs (``active``; ``Pipeline.check`` opens one with ``one_edit``); every stage of
the edit reads it:
the parse of each (text, context) (``editor.text.document.TextParser``), each model's
probabilities for a (premise, hypothesis) pair (``editor.attribution.nli``: the gate, the
editor's candidate checks and the report score half their pairs twice) and the span judge's
fix of a sentence (``editor.judge.span_fix``: the gate and the editor ask the same). When the
edit ends the scope is dropped: nothing is kept from one edit to the next, and nothing is
shared between two edits running at once, each in its own context. The stage runner's
threads copy the caller's context, so an edit's stages share its scope; outside an edit
nothing is kept.

What is kept across edits holds no edit's state: the loaded models, a pure function's
``functools`` cache (a date's or a unit's parse in ``editor.claims.slots``, an instruction's
parse in ``editor.text.instructions``: the same text always gives the same answer), the
research cache (``editor.research.cache``: evidence by query, its own expiry) and the slot
checker's spaCy docs (``SlotChecker``: by text, under a lock, safe across the service's
threads).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass
class EditScope:
    """The state of one edit (see the module doc)."""

    parses: dict[tuple[str, str | None], Any] = field(default_factory=dict)
    """(the spaCy pipeline's ``id``, text, context) -> its ``ParsedText``"""
    pairs: dict[int, dict[tuple[str, str], Any]] = field(default_factory=dict)
    """a model's ``id`` -> (premise, hypothesis) -> its probabilities"""
    fixes: dict[tuple, Any] = field(default_factory=dict)
    """(a fixer's ``id``, sentence, evidence, question) -> its ``SpanFix``"""
    lock: threading.Lock = field(default_factory=threading.Lock)

    @contextlib.contextmanager
    def active(self) -> Iterator[EditScope]:
        """This scope made the current one for the block; inside another edit's, the outer
        one stays current (one edit calling another shares its state)."""
        if _CURRENT.get() is not None:
            yield _CURRENT.get()  # type: ignore[misc]
            return
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)


_CURRENT: ContextVar[EditScope | None] = ContextVar("purr_edit_scope", default=None)


def current() -> EditScope | None:
    """The scope of the edit running in this context (None: outside any edit)."""
    return _CURRENT.get()


def one_edit(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` run in an ``EditScope`` of its own, dropped when it returns; a call inside
    another keeps the outer one.

    >>> @one_edit
    ... def edit():
    ...     current().parses["x"] = 1
    ...     return dict(current().parses)
    >>> edit(), current()
    ({'x': 1}, None)
    """

    @functools.wraps(fn)
    def scoped(*args: Any, **kwargs: Any) -> T:
        with EditScope().active():
            return fn(*args, **kwargs)

    return scoped
