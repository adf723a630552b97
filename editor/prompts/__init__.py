"""Prompt templates (the ``*.txt`` files in this folder): one loader, one way to quote data into
them. Evidence, passages and conversations always enter a prompt as quoted data."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

PROMPT_DIR = Path(__file__).resolve().parent
"""Where the packaged templates live."""


def quote(text: str) -> str:
    """Text made safe to sit inside a triple-quoted block of a prompt (its triple double quotes
    become triple single quotes).

    >>> quote(" Paris. ")
    'Paris.'
    >>> quote('say ' + '"' * 3 + 'hi' + '"' * 3) == "say '''hi'''"
    True
    """
    return text.strip().replace('"""', "'''")


def conversation_block(context: str | None) -> str:
    r'''The ``{{context}}`` block of a template: the dialogue as quoted data, or nothing.

    >>> conversation_block("User: hi"), conversation_block("  ")
    ('Conversation: """User: hi"""\n', '')
    '''
    return f'Conversation: """{quote(context)}"""\n' if context and context.strip() else ""


def load_template(
    name_or_path: str | Path | None,
    default: str,
    placeholders: Sequence[str] = (),
    setting: str = "the prompt setting",
) -> str:
    """A prompt template file (the packaged ``default`` when None), checked for its
    placeholders; ``setting`` names the config field to fix in the error."""
    path = Path(name_or_path) if name_or_path else PROMPT_DIR / default
    if not path.is_file():
        raise ValueError(f"prompt file {path} not found; point {setting} at an existing file")
    template = path.read_text("utf-8")
    missing = [p for p in placeholders if "{{" + p + "}}" not in template]
    if missing:
        raise ValueError(f"prompt file {path} lacks placeholders {missing}; add them")
    return template
