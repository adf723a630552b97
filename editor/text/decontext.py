"""Decontextualisation: make a sentence interpretable on its own (AIS, RARR's auto-AIS).

A sentence like "She won two Nobel Prizes." cannot be checked without the passage before it.
We resolve subject and sentence-initial pronouns to the most recent salient entity of the
preceding passage (and the dialogue context, which comes before it), using spaCy's named
entities and noun chunks: he/she/his/her only to PERSON entities, it/its/this to singular
non-person mentions, they/their/these to plural or group mentions. Within a sentence the subject
is preferred. When nothing fits, the sentence is returned unchanged.

>>> decontextualize("She won two Nobel Prizes.", "Marie Curie was a physicist.").decontextualized
'Marie Curie won two Nobel Prizes.'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from editor.text.nlp import get_nlp
from retrieval.sentences import split

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
MAX_LOOKBACK = 6  # sentences of passage + context searched for an antecedent

_HE = frozenset({"he", "his", "him"})
_SHE = frozenset({"she", "her"})
_IT = frozenset({"it", "its", "this"})
_THEY = frozenset({"they", "their", "them", "these"})
_DEMONSTRATIVES = frozenset({"this", "these"})
_POSSESSIVES = frozenset({"his", "her", "its", "their"})
_ENTITY_LABELS = frozenset(
    "PERSON ORG GPE LOC FAC PRODUCT EVENT WORK_OF_ART LAW LANGUAGE NORP".split()
)
_GROUP_LABELS = frozenset({"NORP"})
_SPEAKER = re.compile(
    r"^[ \t]*(?:user|assistant|system|human|ai|bot|model|q|a)[ \t]*:[ \t]*", re.I | re.M
)


@dataclass(frozen=True)
class Substitution:
    """A pronoun at ``original[start:end]`` replaced by ``replacement`` (its antecedent)."""

    pronoun: str
    replacement: str
    start: int
    end: int
    antecedent_label: str


@dataclass(frozen=True)
class Decontextualized:
    """A sentence and its stand-alone version (equal when nothing needed resolving)."""

    original: str
    decontextualized: str
    substitutions: tuple[Substitution, ...] = ()

    @property
    def changed(self) -> bool:
        return self.decontextualized != self.original


@dataclass(frozen=True)
class _Mention:
    text: str
    label: str  # entity label, or "NOUN" for a plain noun chunk
    subject: bool
    plural: bool
    position: int


def decontextualize(
    sentence: str, preceding: str = "", context: str | None = None, *, nlp: Language | None = None
) -> Decontextualized:
    """``sentence`` made stand-alone against the ``preceding`` passage and dialogue ``context``.

    >>> d = decontextualize("It was completed in 1889.", "The Eiffel Tower is in Paris.")
    >>> d.decontextualized, [(s.pronoun, s.replacement) for s in d.substitutions]
    ('The Eiffel Tower was completed in 1889.', [('It', 'The Eiffel Tower')])
    >>> decontextualize("It rained.", "").decontextualized  # nothing to resolve against
    'It rained.'
    """
    return _run(_tail(context), [*_tail(preceding), sentence], nlp or get_nlp())[-1]


def decontextualize_passage(
    passage: str, context: str | None = None, *, nlp: Language | None = None
) -> list[Decontextualized]:
    """Every sentence of ``passage``, each made stand-alone against what comes before it.

    >>> for d in decontextualize_passage("Marie Curie was a physicist. She won two Nobel "
    ...                                  "Prizes. She died in 1934."):
    ...     print(d.decontextualized)
    Marie Curie was a physicist.
    Marie Curie won two Nobel Prizes.
    Marie Curie died in 1934.
    """
    sentences = split(passage)
    return _run(_tail(context), sentences, nlp or get_nlp()) if sentences else []


def decontextualize_sentences(
    sentences: list[str], context: str | None = None, *, nlp: Language | None = None
) -> list[Decontextualized]:
    """``decontextualize_passage`` for sentences already split (a cited text's claims).

    >>> [d.decontextualized for d in decontextualize_sentences(["Ada Lovelace wrote notes.",
    ...                                                         "She died in 1852."])]
    ['Ada Lovelace wrote notes.', 'Ada Lovelace died in 1852.']
    """
    return _run(_tail(context), list(sentences), nlp or get_nlp()) if sentences else []


def decontextualize_docs(
    sentences: list[str], context: str | None, nlp: Language
) -> tuple[list[Decontextualized], list[Doc]]:
    """``decontextualize_sentences`` with the parse of each sentence as written (one spaCy pass
    over the context's last sentences and ``sentences``; ``editor.text.document`` reuses it)."""
    if not sentences:
        return [], []
    return _run_docs(_tail(context), list(sentences), nlp)


def _run(context: list[str], sentences: list[str], nlp: Language) -> list[Decontextualized]:
    """Resolve each sentence against the context and the sentences before it."""
    return _run_docs(context, sentences, nlp)[0]


def _run_docs(
    context: list[str], sentences: list[str], nlp: Language
) -> tuple[list[Decontextualized], list[Doc]]:
    docs = list(nlp.pipe([*context, *sentences]))
    mentions = [_mentions(d) for d in docs[: len(context)]]
    genders: dict[str, str] = {}  # antecedent text -> "he" | "she", learnt from resolutions
    results: list[Decontextualized] = []
    for doc in docs[len(context) :]:
        result, resolved = _resolve(doc, mentions[-MAX_LOOKBACK:], genders)
        results.append(result)
        mentions.append(_mentions(doc) + [m for m, _ in resolved])
        genders.update({m.text: kind for m, kind in resolved if kind in {"he", "she"}})
    return results, docs[len(context) :]


def _tail(text: str | None) -> list[str]:
    """The last sentences of ``text``, without dialogue speaker labels ("User:")."""
    if not text or not text.strip():
        return []
    return split(_SPEAKER.sub("", text))[-MAX_LOOKBACK:]


def _mentions(doc: Doc) -> list[_Mention]:
    """Entities and definite noun chunks of a sentence, in order of appearance."""
    found: list[_Mention] = []
    covered: set[int] = set()
    for ent in doc.ents:
        if ent.label_ in _ENTITY_LABELS:
            span = ent
            if ent.label_ != "PERSON" and ent.start > 0 and doc[ent.start - 1].lower_ == "the":
                span = doc[ent.start - 1 : ent.end]  # "the Nile", not "Nile"
            found.append(_mention(span, ent.label_))
            covered.update(range(span.start, span.end))
    for chunk in doc.noun_chunks:
        root = chunk.root
        if covered.intersection(range(chunk.start, chunk.end)) or root.pos_ == "PRON":
            continue
        if root.dep_ == "attr" or chunk[0].lower_ in {"a", "an", "some", "any", "no", "every"}:
            continue  # predicates and indefinites do not introduce referents we can name
        if root.pos_ not in {"NOUN", "PROPN"}:
            continue
        found.append(_mention(chunk, "NOUN"))
    return sorted(found, key=lambda m: m.position)


def _mention(span: Span, label: str) -> _Mention:
    root = span.root
    text = span.text
    if text.endswith("'s") or text.endswith("’s"):
        text = text[:-2]
    plural = root.tag_ in {"NNS", "NNPS"} or label in _GROUP_LABELS
    return _Mention(text, label, root.dep_ in SUBJECT_DEPS, plural, span.start_char)


def _kind(token: Token) -> str | None:
    """Which antecedent a pronoun needs: 'he' | 'she' | 'it' | 'they', or None."""
    word = token.lower_
    if word in _DEMONSTRATIVES and (token.pos_ != "PRON" or token.i != token.sent.start):
        return None  # only sentence-initial demonstrative pronouns ("This was ...")
    if token.pos_ != "PRON" and token.tag_ not in {"PRP", "PRP$"}:
        return None
    for kind, words in (("he", _HE), ("she", _SHE), ("it", _IT), ("they", _THEY)):
        if word in words:
            return kind
    return None


def _eligible(token: Token) -> bool:
    """Subjects, sentence-initial pronouns, the possessive of a subject ("Its population") and
    the object of a verb ("built it")."""
    if token.dep_ in SUBJECT_DEPS or token.i == token.sent.start or _object(token):
        return True
    return token.tag_ == "PRP$" and token.dep_ == "poss" and token.head.dep_ in SUBJECT_DEPS


def _object(token: Token) -> bool:
    """A pronoun that is the direct object of a verb ("designed and built it")."""
    return token.dep_ == "dobj" and token.head.pos_ == "VERB" and token.lower_ in {"it", "them"}


def _clause_subjects(token: Token) -> set[int]:
    """Start offsets of the subjects of the pronoun's verb and of the verbs it is coordinated
    with: an object pronoun never refers to its own clause's subject ("the company built it")."""
    verb = token.head
    verbs = {verb, *verb.conjuncts}
    if verb.dep_ == "conj":
        verbs.add(verb.head)
    starts = set()
    for v in verbs:
        for child in v.children:
            if child.dep_ in SUBJECT_DEPS:
                starts.add(child.left_edge.idx)
    return starts


def _fits(kind: str, mention: _Mention, genders: dict[str, str]) -> bool:
    if kind in {"he", "she"}:
        known = genders.get(mention.text, kind)
        return mention.label == "PERSON" and not mention.plural and known == kind
    if kind == "it":
        return mention.label != "PERSON" and not mention.plural
    return mention.plural


def _find(kind: str, history: list[list[_Mention]], genders: dict[str, str]) -> _Mention | None:
    """In the most recent sentence with a fitting mention: one known to be referred to by this
    pronoun, else the subject, else the first mention."""
    for mentions in reversed(history):
        fitting = [m for m in mentions if _fits(kind, m, genders)]
        if fitting:
            return min(
                fitting, key=lambda m: (genders.get(m.text) != kind, not m.subject, m.position)
            )
    return None


def _resolve(
    doc: Doc, history: list[list[_Mention]], genders: dict[str, str]
) -> tuple[Decontextualized, list[tuple[_Mention, str]]]:
    """Substitute eligible pronouns of ``doc``; also return (antecedent-as-mention, pronoun kind)
    pairs, so later sentences can follow the chain."""
    own = _mentions(doc)
    substitutions: list[Substitution] = []
    resolved: list[tuple[_Mention, str]] = []
    done: set[str] = set()
    for token in doc:
        kind = _kind(token)
        if kind is None or kind in done or not _eligible(token):
            continue
        done.add(kind)  # later pronouns of the same kind read fine once the first is resolved
        bound = _clause_subjects(token) if _object(token) else set()
        if any(
            _fits(kind, m, genders) and m.position < token.idx and m.position not in bound
            for m in own
        ):
            continue  # antecedent in the same sentence: already interpretable
        antecedent = _find(kind, history, genders)
        if antecedent is None:
            continue
        end = token.idx + len(token.text)
        replacement = _surface(antecedent, token)
        substitutions.append(
            Substitution(token.text, replacement, token.idx, end, antecedent.label)
        )
        subject = token.dep_ in SUBJECT_DEPS
        chained = _Mention(antecedent.text, antecedent.label, subject, antecedent.plural, token.idx)
        resolved.append((chained, kind))
    text = _apply(doc.text, substitutions)
    return Decontextualized(doc.text, text, tuple(substitutions)), resolved


def _surface(antecedent: _Mention, token: Token) -> str:
    """The antecedent as it should read in the pronoun's place (case, possessive)."""
    text = antecedent.text
    first, _, rest = text.partition(" ")
    if token.i == token.sent.start:
        text = text[:1].upper() + text[1:]
    elif first in {"The", "A", "An", "This", "These"} and rest:
        text = f"{first.lower()} {rest}"
    if token.lower_ in _POSSESSIVES and token.tag_ == "PRP$":
        text += "'" if antecedent.plural and text.endswith("s") else "'s"
    return text


def _apply(text: str, substitutions: Iterable[Substitution]) -> str:
    """Splice the replacements into ``text`` (right to left, so offsets stay valid)."""
    for sub in sorted(substitutions, key=lambda s: s.start, reverse=True):
        text = text[: sub.start] + sub.replacement + text[sub.end :]
    return text
