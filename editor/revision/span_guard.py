"""The form guards of edit acceptance (``editor.revision.acceptance``) as one check for the span
editor: the edit keeps the sentence's form (no question made of an answer, no name doubled,
nothing added that replaces nothing), an added or dropped negation is stated by the evidence,
the new value is the same kind of thing (an ordinal for an ordinal, a date for a date) and the
values it writes are the evidence's. Kept where the ablation on real-error data shows they
stop harmful edits the judge lets through (``purr eval spans --guards``).
"""

from __future__ import annotations

from editor.revision.acceptance import form_problem, negation_problem, type_problem
from editor.revision.values import value_problem

_PRONOUNS = frozenset("it its he she his her they them their this that these those".split())


def edit_guard(before: str, after: str, evidence: str) -> str | None:
    """Why an edit of ``before`` into ``after`` must not stand (None when it may).

    >>> edit_guard("The Mississippi is long.", "It is long.", "It is long.")
    "the edit puts a pronoun, 'It', where the text named something"
    """
    from editor.text.words import word_changes

    for old, new in word_changes(before, after, ("replace",)):
        if (
            new
            and all(w.lower() in _PRONOUNS for w in new)
            and not all(w.lower() in _PRONOUNS for w in old)
        ):
            return f"the edit puts a pronoun, '{' '.join(new)}', where the text named something"
    return (
        form_problem(before, after, None, evidence)
        or negation_problem(before, after, evidence)
        or type_problem(before, after)
        or value_problem(before, after, evidence)
    )
