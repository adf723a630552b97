"""The form guards of the span editor's acceptance, each by name (``GUARDS``): no pronoun put
for a name, no copy of the evidence's own voice ("I"), a word put for a verb or a common noun
keeps its grammatical form, the edit keeps the sentence's form (no question made of an answer,
no name doubled, nothing added that replaces nothing), and the new value is the same kind of
thing (an ordinal for an ordinal, a name for a name). Each one stays because it stops harmful
edits the judge lets through and no right one (``purr eval spans --ablate-guards`` on the
statements suites and SummEdits dev, and the real-claims dev set through the pipeline; the
figures are in docs/pages/results/spans.md). The negation and value checks of the default
acceptance are not among them: they stopped no edit on any of those sets (the span editor writes
only the evidence's own words).
"""

from __future__ import annotations

from editor.judge.acceptance import form_problem, type_problem

_PRONOUNS = frozenset("it its he she his her they them their this that these those".split())
_VOICE = frozenset("i me my we us our you your".split())
"""The evidence's own voice: an article's "I" or "we" is its author, never the text's subject."""


def pronoun_problem(before: str, after: str, evidence: str = "") -> str | None:
    """A pronoun put where the text named something."""
    from editor.text.words import word_changes

    for old, new in word_changes(before, after, ("replace",)):
        if (
            new
            and all(w.lower() in _PRONOUNS for w in new)
            and not all(w.lower() in _PRONOUNS for w in old)
        ):
            return f"the edit puts a pronoun, '{' '.join(new)}', where the text named something"
    return None


def voice_problem(before: str, after: str, evidence: str = "") -> str | None:
    """The evidence's own voice copied ("he lives" -> "I lives")."""
    from editor.text.words import word_changes

    for _, new in word_changes(before, after, ("replace",)):
        if new and all(w.lower() in _VOICE for w in new):
            return f"the edit copies the evidence's own voice, '{' '.join(new)}'"
    return None


GUARDS = {
    "pronoun": pronoun_problem,
    "voice": voice_problem,
    "inflection": lambda before, after, evidence: inflection_problem(before, after),
    "form": lambda before, after, evidence: form_problem(before, after, None, evidence),
    "type": lambda before, after, evidence: type_problem(before, after),
}
"""Each guard by name, in the order ``edit_guard`` asks them (``purr eval spans
--ablate-guards`` measures each one alone)."""


def objections(before: str, after: str, evidence: str) -> dict[str, str]:
    """What each guard objects to in the edit (only the guards that object)."""
    out = {}
    for name, check in GUARDS.items():
        if why := check(before, after, evidence):
            out[name] = why
    return out


def edit_guard(before: str, after: str, evidence: str) -> str | None:
    """Why an edit of ``before`` into ``after`` must not stand (None when it may): the first
    guard that objects.

    >>> edit_guard("The Mississippi is long.", "It is long.", "It is long.")
    "the edit puts a pronoun, 'It', where the text named something"
    """
    for check in GUARDS.values():
        if why := check(before, after, evidence):
            return why
    return None


def inflection_problem(before: str, after: str) -> str | None:
    """Why a one-word replacement breaks the grammar: a verb put in another form ("reducing"
    -> "fall": the evidence's word copied in its own inflection), or a common noun in another
    number. Names, numbers and adjectives are not checked (spaCy's tags, shared pipeline).

    >>> inflection_problem("They plan on reducing net debt.", "They plan on fall net debt.")
    "the edit puts 'fall' (NN) for 'reducing' (VBG): another form of the word"
    >>> inflection_problem("He was a Catholic priest.", "He was a Baptist priest.") is None
    True
    """
    from editor.text.nlp import get_nlp
    from editor.text.words import word_changes

    single = [
        (old[0], new[0])
        for old, new in word_changes(before, after, ("replace",))
        if len(old) == 1 and len(new) == 1
    ]
    if not single:
        return None
    nlp = get_nlp()
    was, now = nlp(before), nlp(after)
    for old, new in single:
        a = next((t for t in was if t.text == old), None)
        b = next((t for t in now if t.text == new), None)
        if a is None or b is None or a.tag_ == b.tag_:
            continue
        if a.tag_.startswith("VB") or {a.tag_, b.tag_} == {"NN", "NNS"}:
            return (
                f"the edit puts {new!r} ({b.tag_}) for {old!r} ({a.tag_}): another form of the word"
            )
    return None
