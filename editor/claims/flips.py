"""Contradictions that change no slot's value: two names that trade places (a role swap) and a
negation added or dropped (a polarity flip)."""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Any

from editor.claims.slot_values import NAME_KINDS, bare_name, outermost
from editor.claims.slots import WORD_TOKEN, exchanged_spans, family, typed_spans

Span = tuple[int, int]


def swapped_names(claim_doc: Any, ev_doc: Any) -> tuple[Span, Span] | None:
    """The claim's spans of two names that both sentences state, in the other order, around
    the same words ("Mexico's independence from the Spanish Empire" / "the Spanish Empire's
    independence from Mexico"). The names come from both parses (NER misses a name on one side
    as often as not); the words between them must be the same words, so that a paraphrase that
    merely reorders ("Paris is the capital of France" / "France's capital is Paris") is not a
    swap."""
    if _passive(claim_doc) != _passive(ev_doc):  # "A beat B" / "B was beaten by A"
        return None
    exchanged = exchanged_spans(claim_doc.text, ev_doc.text)
    if exchanged is not None:
        return exchanged
    kinds: dict[str, tuple[str, str]] = {}  # name -> (surface form, kind)
    for doc in (claim_doc, ev_doc):  # the evidence's labels win: NER labels a swapped
        for sl in outermost(typed_spans(doc)):  # name in an odd place oddly
            if sl.kind in NAME_KINDS and bare_name(sl.text):
                surface = re.sub(r"^(?:the|The)\s+|['’]s$", "", sl.text.strip())
                kinds[bare_name(sl.text)] = (surface, sl.kind)
    found = []
    for name, (surface, kind) in kinds.items():
        c, e = _find_name(surface, claim_doc.text), _find_name(surface, ev_doc.text)
        if c is not None and e is not None:
            found.append((name, kind, c, e))
    found.sort(key=lambda f: f[2][0])  # claim order
    for i, (na, ka, ca, ea) in enumerate(found):
        for nb, kb, cb, eb in found[i + 1 :]:
            if family(ka) != family(kb) or f" {na} " in f" {nb} " or f" {nb} " in f" {na} ":
                continue
            if ca[1] > cb[0] or eb[0] >= ea[0] or eb[1] > ea[0]:
                continue  # overlapping, or the same order in the evidence
            between_claim = _between(claim_doc.text[ca[1] : cb[0]])
            between_ev = _between(ev_doc.text[eb[1] : ea[0]])
            if between_claim != between_ev:
                continue
            return ca, cb
    return None


def _passive(doc: Any) -> bool:
    return any(t.dep_ in {"nsubjpass", "auxpass", "agent"} for t in doc)


_ARTICLES = frozenset({"the", "a", "an"})


def _between(text: str) -> list[str]:
    """The words and marks between two names, articles left out ("the" goes with a name on one
    side and not the other: "Bahrain" / "the United Arab Emirates").

    >>> _between(", Iraq, and the "), _between("'s capital is")
    ([',', 'iraq', ',', 'and'], ["'", 's', 'capital', 'is'])
    """
    return [t for t in WORD_TOKEN.findall(text.lower()) if t not in _ARTICLES]


_NEGATIONS = frozenset({"not", "n't", "never", "no"})
_NEG_TOKEN = re.compile(r"\w+?(?=n't\b)|n't|\w+|[^\w\s]", re.I)


def negation_only(claim: str, evidence: str) -> tuple[bool, tuple[int, int] | None] | None:
    """Whether the claim differs from the evidence sentence only by negation words it adds
    (True, with the span of the first) or drops (False, None); None when anything else
    differs.

    >>> negation_only("It is not closely related, but not equal.", "It is closely related, but not equal.")
    (True, (6, 9))
    >>> negation_only("It is closely related.", "It isn't closely related.")
    (False, None)
    >>> negation_only("It is big.", "It is small.") is None
    True
    """
    a = [(m.group().lower(), m.start(), m.end()) for m in _NEG_TOKEN.finditer(claim)]
    b = [m.group().lower() for m in _NEG_TOKEN.finditer(evidence)]
    added: list[tuple[str, int, int]] = []
    dropped: list[str] = []
    ops = SequenceMatcher(None, [t for t, _, _ in a], b, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        if tag == "replace":
            return None
        added += a[i1:i2]
        dropped += b[j1:j2]
    words = {t for t, _, _ in added} | set(dropped)
    if bool(added) == bool(dropped) or not words <= _NEGATIONS:
        return None
    return (True, (added[0][1], added[0][2])) if added else (False, None)


def _find_name(name: str, text: str) -> tuple[int, int] | None:
    """Where a name (its surface form) first stands in ``text``: any punctuation between its
    words, a possessive after it; names of one or two letters ("N") must match case.

    >>> _find_name("the Spanish Empire", "from the Spanish Empire's rule")
    (5, 25)
    >>> _find_name("N", "it has symbol N and"), _find_name("N", "it is not")
    ((14, 15), None)
    """
    words = re.findall(r"\w+", name)
    if not words:
        return None
    pattern = r"(?<!\w)" + r"\W+".join(map(re.escape, words)) + r"(?:['’]s)?(?!\w)"
    m = re.search(pattern, text, 0 if len(name.strip()) <= 2 else re.I)
    return (m.start(), m.end()) if m else None
