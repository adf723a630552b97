"""A sentence's atomic parts, read from its dependency parse (FActScore-style decomposition
without an LLM): a long sentence carries several facts and is supported only when every one is.

Split off, each as a standalone statement:
- clause conjuncts ("born in Warsaw and raised in Paris"): the shared subject (and auxiliary)
  is restated, a pronoun subject ("..., and it was designed by ...") is replaced by the first
  clause's subject;
- comma-delimited appositions ("Marie Curie, a Polish physicist, ...") → "Marie Curie was a
  Polish physicist.";
- comma-delimited relative clauses whose pronoun is the subject ("The tower, which was
  completed in 1889, ...") → "The tower was completed in 1889.".
Restrictive relatives ("the film that won Best Picture") and object relatives identify the
subject and stay in the main part, as do conjoined nouns ("in 1903 and 1911"). A piece of fewer
than ``MIN_WORDS`` words is not split off. Each part keeps the character span of the words it
asserts, so a report can point at the part that fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

PartKind = Literal["main", "conjunct", "apposition", "relative"]
MIN_WORDS = 3
MAX_PARTS = 6
_SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
_AUX = frozenset({"aux", "auxpass", "neg"})
_PRONOUNS = frozenset({"it", "he", "she", "they", "this"})
_RELATIVE = frozenset({"who", "which", "that"})


@dataclass(frozen=True)
class Part:
    """One atomic statement of a sentence: its ``text`` (standalone), the ``start``/``end``
    character span in the sentence of the words it asserts, and how it was found."""

    text: str
    start: int
    end: int
    kind: PartKind


def sentence_parts(sent: Span | Doc) -> tuple[Part, ...]:
    """The atomic parts of one parsed sentence; the sentence itself when it has one.

    >>> from editor.text.nlp import get_nlp
    >>> doc = get_nlp()("The Eiffel Tower, which was completed in 1889, is located in Paris, "
    ...                 "and it was designed by Gustave Eiffel.")
    >>> [(p.kind, p.text) for p in sentence_parts(doc)]  # doctest: +NORMALIZE_WHITESPACE
    [('main', 'The Eiffel Tower is located in Paris.'),
     ('relative', 'The Eiffel Tower was completed in 1889.'),
     ('conjunct', 'The Eiffel Tower was designed by Gustave Eiffel.')]
    >>> [p.text for p in sentence_parts(get_nlp()("It was directed by Steven Spielberg."))]
    ['It was directed by Steven Spielberg.']
    """
    from spacy.tokens import Span

    whole = (Part(sent.text, 0, len(sent.text), "main"),)
    if not isinstance(sent, Span):
        sent = sent[:]  # a Doc as one span (a one-sentence doc)
    root = sent.root
    offset = sent.start_char
    taken: set[int] = set()  # tokens that belong to a part other than the main one
    found: list[tuple[PartKind, list[Token], list[Token]]] = []  # kind, prefix, body
    for tok in sent:
        for child in tok.children:
            if child.dep_ not in {"appos", "relcl"} or not _comma_before(child):
                continue
            body = list(child.subtree)
            if child.dep_ == "relcl":
                pron = [c for c in child.children if c.dep_ in _SUBJECTS]
                if not pron or pron[0].lower_ not in _RELATIVE:
                    continue  # an object relative ("which she founded") stays in place
                body = [t for t in body if t.i != pron[0].i]
            if _words(body) < MIN_WORDS - 1:
                continue
            kind: PartKind = "apposition" if child.dep_ == "appos" else "relative"
            found.append((kind, _head_phrase(tok), body))
            taken |= {t.i for t in child.subtree} | _commas_around(child)
    subject = next((c for c in root.children if c.dep_ in _SUBJECTS), None)
    subject_tokens = [t for t in subject.subtree if t.i not in taken] if subject else []
    aux = [c for c in root.children if c.dep_ in _AUX and c.i < root.i]
    for conj in (c for c in root.children if c.dep_ == "conj" and c.pos_ in {"VERB", "AUX"}):
        body = [t for t in conj.subtree if t.i not in taken]
        own = next((c for c in conj.children if c.dep_ in _SUBJECTS), None)
        prefix: list[Token] = []
        if own is None:
            if not subject_tokens:
                continue
            prefix = subject_tokens
            if not any(c.dep_ in _AUX for c in conj.children) and conj.tag_ == "VBN":
                prefix = prefix + aux
        elif own.lower_ in _PRONOUNS and subject_tokens and subject.pos_ != "PRON":
            body = [t for t in body if t.i != own.i]
            prefix = subject_tokens
        if _words(body) < MIN_WORDS - 1 or (not prefix and own is None):
            continue
        found.append(("conjunct", prefix, body))
        taken |= {t.i for t in conj.subtree}
        taken |= {c.i for c in root.children if c.dep_ == "cc" and c.i < conj.i}
        taken |= {t.i for t in sent if t.is_punct and t.i == conj.left_edge.i - 1}
        taken |= {c.i for c in root.children if c.dep_ == "cc" and c.i == conj.left_edge.i - 1}
    if not found:
        return whole
    main_tokens = [t for t in sent if t.i not in taken]
    if _words(main_tokens) < MIN_WORDS:
        return whole
    be = "was" if _past(root) else "is"
    parts = [Part(_join(main_tokens), 0, len(sent.text), "main")]
    for kind, prefix, body in found[: MAX_PARTS - 1]:
        glue = [be] if kind == "apposition" else []
        text = _join(prefix, glue, body)
        lo = min(t.idx for t in body) - offset
        hi = max(t.idx + len(t.text) for t in body) - offset
        parts.append(Part(text, lo, hi, kind))
    order = {"main": 0, "relative": 1, "apposition": 1, "conjunct": 2}
    return tuple(sorted(parts, key=lambda p: (order[p.kind], p.start)))


def _comma_before(child: Token) -> bool:
    """Whether the subtree of ``child`` follows a comma (a non-restrictive apposition or
    relative clause)."""
    i = child.left_edge.i - 1
    return i >= 0 and child.doc[i].text == ","


def _commas_around(child: Token) -> set[int]:
    """The commas that set ``child``'s subtree off (one before, one after when present)."""
    doc = child.doc
    out = {child.left_edge.i - 1}
    after = child.right_edge.i + 1
    if after < len(doc) and doc[after].text == ",":
        out.add(after)
    return out


def _head_phrase(tok: Token) -> list[Token]:
    """The noun phrase a clause attaches to: the head and the words before it ("The Eiffel
    Tower"), without its appositions and relatives."""
    return list(tok.doc[tok.left_edge.i : tok.i + 1])


def _past(root: Token) -> bool:
    return root.tag_ in {"VBD", "VBN"} and (
        root.tag_ == "VBD" or any(c.lower_ in {"was", "were", "had"} for c in root.children)
    )


def _words(tokens: Iterable[Token]) -> int:
    return sum(not t.is_punct for t in tokens)


def _join(*pieces: list[Token] | list[str]) -> str:
    """One statement from token runs and glue words: original spacing between neighbouring
    tokens, one space elsewhere, dangling commas dropped, first letter capitalised, one final
    full stop."""
    out = ""
    prev: Token | None = None
    for piece in pieces:
        items = (
            sorted(piece, key=lambda t: t.i) if piece and not isinstance(piece[0], str) else piece
        )
        for item in items:
            if isinstance(item, str):
                out += (" " if out else "") + item
                prev = None
            elif prev is not None and item.i == prev.i + 1:
                out += prev.whitespace_ + item.text
                prev = item
            else:
                out += (" " if out and not item.is_punct else "") + item.text
                prev = item
    out = re.sub(r"\s*,(\s*,)+", ",", out)
    out = re.sub(r"\s+([,.;:!?])", r"\1", out).strip(" ,;:")
    out = re.sub(r"[.!?]+$", "", out).rstrip(" ,;:") + "."
    return out[:1].upper() + out[1:]
