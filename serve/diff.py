"""A word diff of an edit, for people and for programs: ``word_changes`` (the aligned pieces),
``diff_markup`` (``[-old-]{+new+}`` or Rich markup) and ``changes`` (each change with its offsets
in the original), read the same by ``purr edit``, the MCP tools and the web page's JSON.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\s+|\S+")


def word_changes(before: str, after: str) -> list[tuple[str, str]]:
    """``(old, new)`` pieces of a word-level diff: equal text as ``(same, same)``, a change as
    its old and new words. Words split at whitespace, as git's word diff does, and changes
    separated only by whitespace are one change, so a changed phrase reads as one.

    >>> word_changes("by Thomas Edison's company.", "by Gustave Eiffel's company.")
    [('by ', 'by '), ("Thomas Edison's", "Gustave Eiffel's"), (' company.', ' company.')]
    """
    a, b = _TOKEN.findall(before), _TOKEN.findall(after)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    pieces = [("".join(a[i1:i2]), "".join(b[j1:j2]), op != "equal") for op, i1, i2, j1, j2 in ops]
    out: list[list] = []
    for k, (old, new, changed) in enumerate(pieces):
        after_change = bool(out) and out[-1][2]
        bridge = not old.strip() and k + 1 < len(pieces) and pieces[k + 1][2]
        if after_change and (changed or bridge):  # one change across whitespace
            out[-1][0] += old
            out[-1][1] += new
            continue
        out.append([old, new, changed])
    return [(old, new) for old, new, _ in out]


def diff_markup(before: str, after: str, plain: bool = False) -> str:
    """A word diff of ``before`` and ``after``: Rich markup (deletions red and struck through,
    insertions green), or with ``plain`` git's word-diff markers ``[-old-]{+new+}``, which read
    without colour (a pipe, a file, ``NO_COLOR``).

    >>> diff_markup("Built in 1887.", "Built in 1889.")
    'Built in [red strike]1887.[/][green]1889.[/]'
    >>> diff_markup("by Thomas Edison's company", "by Gustave Eiffel's company", plain=True)
    "by [-Thomas Edison's-]{+Gustave Eiffel's+} company"
    """
    from rich.markup import escape

    out = []
    for old, new in word_changes(before, after):
        if old == new:
            out.append(old if plain else escape(old))
            continue
        if plain:
            out.append((f"[-{old}-]" if old else "") + (f"{{+{new}+}}" if new else ""))
            continue
        if old:
            out.append(f"[red strike]{escape(old)}[/]")
        if new:
            out.append(f"[green]{escape(new)}[/]")
    return "".join(out)


@dataclass(frozen=True)
class Change:
    """One change of an edit: ``original[start:end]`` (``old``) became ``new``, which stands at
    ``[new_start, new_end)`` of the revision."""

    start: int
    end: int
    old: str
    new: str
    new_start: int
    new_end: int


def changes(before: str, after: str) -> list[Change]:
    """The changes of ``after`` over ``before`` with their offsets; replacing each
    ``before[start:end]`` by ``new`` (from the last to the first) gives ``after``.

    >>> [(c.start, c.end, c.old, c.new) for c in changes("Built in 1887.", "Built in 1889.")]
    [(9, 14, '1887.', '1889.')]
    """
    out: list[Change] = []
    i = j = 0
    for old, new in word_changes(before, after):
        if old != new:
            out.append(Change(i, i + len(old), old, new, j, j + len(new)))
        i, j = i + len(old), j + len(new)
    return out
