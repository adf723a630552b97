"""Independent proof of an edit: the rule that flagged a span may not be what proves its
replacement right.

An edit's revised sentence can be shown supported three ways, each its own judge:

- ``nli``: the NLI model alone (not the fused verdict, which already counts the slot check)
  rates the revision supported, at least ``min_supported`` and more than the original;
- ``slot``: the slot check finds the revision's values in the evidence (or the whole revision
  word for word);
- ``statement``: an evidence sentence states the same fact: it holds every word the edit put in
  and most of the revision's other content words.

Acceptance asks for the ``statement`` proof on every edit: it is no gate rule, so the check
that flagged a span is never all that approves its replacement. The NLI model and the slot check
alone are not enough: both rate "Einstein was born in 1921" supported by an article saying he
received the 1921 Nobel Prize (P(supported) 0.90 and "2 slots match"); only the sentence that
holds 1921 says what 1921 is the year of. ``independent_proofs`` lists, of the proofs found,
those whose judge differs from the rule that opened the gate (``Step.verified_by``).
"""

from __future__ import annotations

import re

from editor.text.words import WORD, content_words, word_changes
from editor.types import EntailmentScores

RULE_JUDGE = {
    "slot": "slot",
    "role": "slot",
    "negation": "slot",
    "question": "slot",
    "nli": "nli",
}
"""The judge behind each gate rule (``Step.rule``); rules not listed judge nothing here."""

STATEMENT_MIN_SHARE = 0.5
"""The share of the content words around the edit an evidence sentence must hold."""

STATEMENT_WINDOW = 3
"""How many content words either side of the edit's own are its context."""


_POSSESSIVE = re.compile(r"['’]s\b")


def _edit_context(before: str, after: str) -> tuple[set[str], set[str]]:
    """The content words ``after`` has where ``before`` had others or none, and the content
    words within ``STATEMENT_WINDOW`` of them (what the new value is said of).

    >>> new, near = _edit_context("Einstein was born in 1900 in Ulm.", "Einstein was born in 1879 in Ulm.")
    >>> sorted(new), sorted(near)
    (['1879'], ['born', 'einstein', 'ulm'])
    >>> sorted(_edit_context("Built by Edison's firm.", "Built by Gustave Eiffel's firm.")[0])
    ['eiffel', 'gustave']
    """
    before, after = _POSSESSIVE.sub("", before), _POSSESSIVE.sub("", after)
    new: set[str] = set()
    for _, run in word_changes(before, after, ("replace", "insert")):
        new |= content_words(" ".join(run))
    keep = content_words(after)
    order = [w for w in WORD.findall(after.lower()) if w in keep]
    at = [i for i, w in enumerate(order) if w in new]
    near = {
        w
        for i in at
        for w in order[max(0, i - STATEMENT_WINDOW) : i + STATEMENT_WINDOW + 1]
        if w not in new
    }
    return new, near


def stated_by(evidence: str, before: str, after: str) -> str | None:
    """The evidence sentence that states the revision's fact, or None: it holds every content
    word the edit put in and, with the sentence before it (where its pronouns' names are), at
    least ``STATEMENT_MIN_SHARE`` of the content words around them in the revision (of all its
    content words, where the edit only drops words).

    >>> ev = "The tower was built from 1887 to 1889. It stands in Paris, France."
    >>> stated_by(ev, "The tower stands in Rome.", "The tower stands in Paris.")
    'It stands in Paris, France.'
    >>> stated_by(ev, "The tower was designed in 1890 by Koechlin.", "The tower was designed in 1889 by Koechlin.") is None
    True
    >>> stated_by(ev, "It does not stand in Paris.", "It does stand in Paris.")
    'It stands in Paris, France.'

    """
    from retrieval.sentences import split

    new, near = _edit_context(before, after)
    if not new:  # words only dropped: a sentence must state most of what is left
        near = content_words(after)
    sentences = split(evidence)
    for i, sentence in enumerate(sentences):
        words = content_words(sentence)
        if not new <= words:
            continue
        around = words | (content_words(sentences[i - 1]) if i else set())
        if not near or len(near & around) >= STATEMENT_MIN_SHARE * len(near):
            return sentence
    return None


def proofs(
    nli_old: EntailmentScores,
    nli_new: EntailmentScores,
    slot_new,
    evidence: str,
    before: str,
    after: str,
    min_supported: float,
) -> list[str]:
    """The judges that find the revision ``after`` (of ``before``) supported by ``evidence``
    (see the module doc); ``slot_new`` is the slot verdict on the revision (None without a
    slot check)."""
    out = []
    if nli_new.supported >= min_supported and nli_new.supported > nli_old.supported:
        out.append("nli")
    if slot_new is not None and (slot_new.verbatim or slot_new.found == "matches"):
        out.append("slot")
    if stated_by(evidence, before, after) is not None:
        out.append("statement")
    return out


def independent_proofs(found: list[str], rule: str | None) -> list[str]:
    """``found`` without the proof of the judge that opened the gate (``rule``).

    >>> independent_proofs(["nli", "slot", "statement"], "slot")
    ['nli', 'statement']
    >>> independent_proofs(["nli"], "nli"), independent_proofs(["nli"], None)
    ([], ['nli'])
    """
    judge = RULE_JUDGE.get(rule or "")
    return [p for p in found if p != judge]
