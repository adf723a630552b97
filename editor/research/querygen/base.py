"""The query generator's contract: the ``QueryGenerator`` Protocol, its registry and the helpers
every generator shares.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from editor.config import QueryGenConfig
from editor.llm.base import LLMBackend
from editor.registry import Registry
from editor.research.querygen.questions import (
    dedupe,
    normalize_question,
)
from editor.text.document import TextParser
from editor.types import Query

log = logging.getLogger(__name__)


@runtime_checkable
class QueryGenerator(Protocol):
    """Questions about a passage (optionally given the dialogue ``context`` it answers)."""

    def generate(self, text: str, context: str | None = None) -> list[Query]: ...

    def generate_batch(
        self, texts: list[str], contexts: Sequence[str | None] | None = None
    ) -> list[list[Query]]: ...


def contexts_for(texts: list[str], contexts: Sequence[str | None] | None) -> list[str | None]:
    out: list[str | None] = list(contexts) if contexts is not None else [None] * len(texts)
    if len(out) != len(texts):
        raise ValueError(
            f"got {len(texts)} texts but {len(out)} contexts; pass one context (or None) per text"
        )
    return out


def finish(queries: list[Query], max_queries: int) -> list[Query]:
    return dedupe(queries, key=lambda q: normalize_question(q.text))[:max_queries]


class WritingGenerator:
    """``generate`` and ``generate_batch`` of a generator whose model writes the questions
    (``_write``: every non-empty text in one batch, already parsed and grounded). A text left
    with none falls back to ``self.fallback``, with ``no_questions`` logged (``%d``: its length).
    Subclasses set ``name``, ``max_queries``, ``fallback`` and ``no_questions``."""

    name: str
    max_queries: int
    fallback: QueryGenerator
    no_questions: str

    def _write(self, texts: list[str], contexts: list[str | None]) -> list[list[str]]:
        raise NotImplementedError

    def generate(self, text: str, context: str | None = None) -> list[Query]:
        return self.generate_batch([text], [context])[0]

    def generate_batch(
        self, texts: list[str], contexts: Sequence[str | None] | None = None
    ) -> list[list[Query]]:
        ctx = contexts_for(texts, contexts)
        todo = [i for i, t in enumerate(texts) if t and t.strip()]
        results: list[list[Query]] = [[] for _ in texts]
        if not todo:
            return results
        written = self._write([texts[i] for i in todo], [ctx[i] for i in todo])
        for i, questions in zip(todo, written, strict=True):
            if questions:
                results[i] = finish([Query(q, self.name) for q in questions], self.max_queries)
            else:
                log.warning(self.no_questions, len(texts[i]))
                results[i] = self.fallback.generate(texts[i], ctx[i])
        return results


class BatchedGenerator:
    """``generate_batch`` as a loop over ``generate`` (for generators with no batch speed-up)."""

    def generate(self, text: str, context: str | None = None) -> list[Query]:
        raise NotImplementedError

    def generate_batch(
        self, texts: list[str], contexts: Sequence[str | None] | None = None
    ) -> list[list[Query]]:
        return [
            self.generate(t, c) for t, c in zip(texts, contexts_for(texts, contexts), strict=True)
        ]


QueryGenFactory = Callable[[QueryGenConfig, LLMBackend | None, TextParser], QueryGenerator]

_GENERATORS: Registry[QueryGenFactory] = Registry("query generator", "querygen.type")

register = _GENERATORS.register
"""Make ``factory(cfg, llm, parser)`` buildable as ``querygen.type=name`` (``parser``: the
pipeline's one parser of passages); refuses duplicates."""

available = _GENERATORS.available
"""The names ``build`` accepts."""


def build(
    cfg: QueryGenConfig, llm: LLMBackend | None = None, parser: TextParser | None = None
) -> QueryGenerator:
    """The generator named by ``cfg.type``, reading passages through ``parser``; ``llm`` is
    required for ``type=llm``."""
    return _GENERATORS.get(cfg.type)(cfg, llm, parser or TextParser())
