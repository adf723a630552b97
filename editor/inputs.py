"""What ``Pipeline`` accepts: the input limits (``limits.*``) and the sources of a cited text,
checked before any stage runs; ``InputError`` says what is wrong and what to do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from editor.citations.sources import Source, read_sources
from editor.config import LimitsConfig
from retrieval.sentences import split


class InputError(ValueError):
    """The caller's input breaks a limit or a type; the message says what to do.
    ``too_large``: it is over a size limit (HTTP 413) rather than malformed (422)."""

    def __init__(self, message: str, too_large: bool = False) -> None:
        super().__init__(message)
        self.too_large = too_large


def check_input(lim: LimitsConfig, text: Any, context: Any = None, evidence: Any = None) -> None:
    """Raise ``InputError`` saying what is wrong with the input and what to do."""
    if not isinstance(text, str):
        raise InputError(f"text must be a string, got {type(text).__name__}")
    if not text.strip():
        raise InputError("text is empty; pass the passage to edit")
    if len(text) > lim.max_chars:
        raise InputError(
            f"text has {len(text):,} characters, over the limit of {lim.max_chars:,}; "
            "split it into smaller passages or raise limits.max_chars",
            too_large=True,
        )
    n = len(split(text))
    if n > lim.max_sentences:
        raise InputError(
            f"text has {n} sentences, over the limit of {lim.max_sentences}; split it or "
            "raise limits.max_sentences",
            too_large=True,
        )
    if context is not None:
        if not isinstance(context, str):
            raise InputError(f"context must be a string, got {type(context).__name__}")
        if len(context) > lim.max_context_chars:
            raise InputError(
                f"context has {len(context):,} characters, over the limit of "
                f"{lim.max_context_chars:,}; pass the last turns only or raise "
                "limits.max_context_chars",
                too_large=True,
            )
    if evidence is not None and not (
        isinstance(evidence, (list, tuple)) and all(isinstance(e, str) for e in evidence)
    ):
        raise InputError("evidence must be a list of strings")


def given_sources(sources: Sequence[Any]) -> list[Source]:
    """The sources of a cited text as ``Source``s (given as such or as ``{id, text, title?,
    url?}``); ``InputError`` when they are not a non-empty list of either."""
    if not isinstance(sources, (list, tuple)):
        raise InputError(
            f"sources must be a list of {{id, text}} objects, got {type(sources).__name__}"
        )
    try:
        given = list(sources)
        if not all(isinstance(s, Source) for s in given):
            given = read_sources(given)
    except (ValueError, TypeError) as e:
        raise InputError(str(e)) from None
    if not given:
        raise InputError("sources is empty; pass the documents the text cites")
    return given
