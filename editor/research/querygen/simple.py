"""The query generators without a model: ``sentence``, ``entity`` and ``passage``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from editor.research.querygen.base import BatchedGenerator, finish
from editor.research.querygen.questions import (
    entity_question,
    interleave,
)
from editor.text.document import TextParser
from editor.types import Query

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc


class _PerSentence(BatchedGenerator):
    """A generator over the checkable sentences of a passage, at most ``max_queries`` queries."""

    def __init__(
        self, max_queries: int = 16, nlp: Language | None = None, parser: TextParser | None = None
    ) -> None:
        if max_queries < 1:
            raise ValueError(f"max_queries must be >= 1, got {max_queries}")
        self.max_queries = max_queries
        self.parser = parser or TextParser(nlp)

    def claims(self, text: str, context: str | None) -> list[Doc]:
        """Parsed decontextualised sentences of ``text`` that state something checkable (from
        the shared parser's one parse of the text)."""
        if not text or not text.strip():
            return []
        return [s.doc for s in self.parser.parse(text, context).sentences if s.claim]


class SentenceQueryGenerator(_PerSentence):
    """One query per checkable sentence: the sentence itself, decontextualised.

    >>> [q.text for q in SentenceQueryGenerator().generate(
    ...     "Hello! Marie Curie was a physicist. She won two Nobel Prizes. Any questions?")]
    ['Marie Curie was a physicist.', 'Marie Curie won two Nobel Prizes.']
    """

    name = "sentence"

    def generate(self, text: str, context: str | None = None) -> list[Query]:
        docs = self.claims(text, context)
        queries = [Query(d.text, self.name, sentence=d.text) for d in docs]
        return finish(queries, self.max_queries)


class PassageQueryGenerator(BatchedGenerator):
    """The whole passage as one query (the ablation RARR found poor).

    >>> [q.text for q in PassageQueryGenerator().generate("Paris is big. Rome is old.")]
    ['Paris is big. Rome is old.']
    """

    name = "passage"

    def generate(self, text: str, context: str | None = None) -> list[Query]:
        text = " ".join(text.split())
        return [Query(text, self.name, sentence=text)] if text else []


class EntityQueryGenerator(_PerSentence):
    """A wh-question per named entity, date or number of each checkable sentence; the sentence
    itself when it names none. Sentences take turns, so a cap still covers every sentence.

    >>> [q.text for q in EntityQueryGenerator().generate("Marie Curie was born in Warsaw.")]
    ['Who was born in Warsaw?', 'Marie Curie was born where?']
    """

    name = "entity"

    def generate(self, text: str, context: str | None = None) -> list[Query]:
        per_sentence: list[list[Query]] = []
        for doc in self.claims(text, context):
            sentence = doc.text
            queries = [
                Query(entity_question(ent), self.name, sentence=sentence, focus=ent.text)
                for ent in doc.ents
                if ent.root.dep_ != "amod"  # "a Polish physicist": no question reads well
            ]
            per_sentence.append(queries or [Query(sentence, self.name, sentence=sentence)])
        return finish(interleave(per_sentence), self.max_queries)
