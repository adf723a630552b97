"""A passage parsed once: its sentences with their spans, each made stand-alone against what
comes before it (``editor.text.decontext``), with the spaCy parse of that stand-alone sentence
and whether it states something checkable (``is_claim``).

``TextParser.parse(text, context)`` makes a ``ParsedText`` in one spaCy pass over the context's
last sentences and the passage's sentences (plus one over the few sentences decontextualisation
rewrote) and keeps it for the edit (``editor.scope``). ``Pipeline`` parses the text at input
and builds every stage that reads the passage's sentences (query generation, the agreement
gate, edit acceptance, the report) with the same parser, so each of them gets that one
``ParsedText`` instead of splitting and parsing the text again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from editor.scope import current
from editor.text.decontext import Decontextualized, decontextualize_docs
from editor.text.nlp import get_nlp, is_claim
from retrieval.sentences import split_spans

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc


@dataclass(frozen=True)
class ParsedSentence:
    """A sentence at ``text[start:end]`` of its passage, its stand-alone form and the parse of
    that form (what ``is_claim``, claim parts and slot checks read)."""

    start: int
    end: int
    standalone: Decontextualized
    doc: Doc
    claim: bool

    @property
    def text(self) -> str:
        """The sentence as written."""
        return self.standalone.original


@dataclass(frozen=True)
class ParsedText:
    """A passage (and the dialogue context it was read in) split and parsed once."""

    text: str
    context: str | None
    sentences: tuple[ParsedSentence, ...]

    @property
    def spans(self) -> list[tuple[int, int]]:
        """Each sentence's ``(start, end)`` in ``text``."""
        return [(s.start, s.end) for s in self.sentences]

    @property
    def decontextualized(self) -> list[Decontextualized]:
        """Each sentence and its stand-alone form, in order."""
        return [s.standalone for s in self.sentences]

    def standalone(self, sentence: str) -> str:
        """The stand-alone form of the first sentence written as ``sentence`` (itself if the
        passage has no such sentence)."""
        wanted = sentence.strip()
        return next(
            (s.standalone.decontextualized for s in self.sentences if s.text == wanted), wanted
        )


class TextParser:
    """Parses passages into ``ParsedText``s. Within one edit (``editor.scope``) it parses a
    (text, context) once and every stage that reads through it gets that parse; outside an
    edit it parses each time. ``nlp`` defaults to the shared pipeline.

    >>> from editor.scope import one_edit
    >>> parser = TextParser()
    >>> p = parser.parse("Marie Curie was a physicist. She won two Nobel Prizes. Any questions?")
    >>> [(s.standalone.decontextualized, s.claim) for s in p.sentences]
    [('Marie Curie was a physicist.', True), ('Marie Curie won two Nobel Prizes.', True), \
('Any questions?', False)]
    >>> one_edit(lambda: parser.parse(p.text) is parser.parse(p.text))()
    True
    """

    def __init__(self, nlp: Language | None = None) -> None:
        self._nlp = nlp

    @property
    def nlp(self) -> Language:
        return self._nlp or get_nlp()

    def parse(self, text: str, context: str | None = None) -> ParsedText:
        """``text`` split, decontextualised against ``context`` and what precedes each
        sentence, and parsed; within one edit, the same object for the same text and context."""
        scope = current()
        if scope is None:
            return parse_text(text, context, self.nlp)
        key = (id(self.nlp), text, context or None)  # the same pipeline reads it the same
        with scope.lock:
            kept = scope.parses.get(key)
        if kept is None:
            kept = parse_text(text, context, self.nlp)
            with scope.lock:
                kept = scope.parses.setdefault(key, kept)
        return kept


def parse_text(text: str, context: str | None, nlp: Language) -> ParsedText:
    """``TextParser.parse`` without keeping: one spaCy pass over context and sentences, one more
    over the sentences decontextualisation rewrote."""
    spans = split_spans(text)
    results, docs = standalone_docs([text[a:b] for a, b in spans], context, nlp)
    sentences = tuple(
        ParsedSentence(a, b, r, doc, is_claim(doc))
        for (a, b), r, doc in zip(spans, results, docs, strict=True)
    )
    return ParsedText(text, context or None, sentences)


def standalone_docs(
    sentences: list[str], context: str | None, nlp: Language
) -> tuple[list[Decontextualized], list[Doc]]:
    """Each sentence made stand-alone, and the parse of that stand-alone form: the parse made
    for decontextualisation where nothing was rewritten, one more pass over the rest."""
    results, docs = decontextualize_docs(sentences, context, nlp)
    rewritten = [i for i, r in enumerate(results) if r.changed]
    again = nlp.pipe([results[i].decontextualized for i in rewritten])
    for i, doc in zip(rewritten, again, strict=True):
        docs[i] = doc
    return results, docs
