"""Query generation (CQGen): the questions the research stage searches evidence for.

Three generators behind one Protocol, built from ``QueryGenConfig`` by ``build``:

- ``sentence``: one query per checkable sentence, decontextualised (RARR's strong baseline);
- ``entity``: one wh-question per named entity, date or number of each sentence;
- ``llm``: a few-shot prompted LLM sampled ``samples`` times, union of the questions (RARR);
- ``trained``: a small model distilled from ``llm`` by ``purr train querygen`` (PURR), one
  greedy pass over a short prompt (``trained.py``).

Every generator returns de-duplicated queries, at most ``max_queries``, and ``[]`` for empty text.

Contract: ``base.py``; ``simple.py`` (sentence, entity, passage), ``llm.py`` and ``trained.py``
are registered here.
"""

from __future__ import annotations

from editor.config import QueryGenConfig
from editor.llm.base import LLMBackend
from editor.research.querygen.base import QueryGenerator, available, build, register
from editor.research.querygen.llm import LLMQueryGenerator, grounded, load_prompt, render_prompt
from editor.research.querygen.simple import (
    EntityQueryGenerator,
    PassageQueryGenerator,
    SentenceQueryGenerator,
)
from editor.text.document import TextParser

__all__ = [
    "EntityQueryGenerator",
    "LLMQueryGenerator",
    "PassageQueryGenerator",
    "QueryGenerator",
    "SentenceQueryGenerator",
    "available",
    "build",
    "grounded",
    "load_prompt",
    "register",
    "render_prompt",
]


def _build_llm(cfg: QueryGenConfig, llm: LLMBackend | None, parser: TextParser) -> QueryGenerator:
    if llm is None:
        raise ValueError(
            "querygen.type=llm needs an LLM backend: pass editor.llm.build(cfg.llm), "
            "or set querygen.type=sentence (no LLM)"
        )
    return LLMQueryGenerator(
        llm, samples=cfg.samples, max_queries=cfg.max_queries, prompt=cfg.prompt, parser=parser
    )


def _build_trained(
    cfg: QueryGenConfig, llm: LLMBackend | None, parser: TextParser
) -> QueryGenerator:
    from editor.research.querygen.trained import TrainedQueryGenerator

    if cfg.adapter is None and cfg.model is None:
        raise ValueError(
            "querygen.type=trained needs querygen.adapter (a folder written by "
            "`purr train querygen`) or querygen.model (a fully trained model folder)"
        )
    return TrainedQueryGenerator(
        cfg.model or "packaged:gemma-3-270m",
        adapter=cfg.adapter,
        max_queries=cfg.max_queries,
        prompt=cfg.prompt,
        parser=parser,
    )


register(
    "sentence", lambda cfg, llm, parser: SentenceQueryGenerator(cfg.max_queries, parser=parser)
)
register("entity", lambda cfg, llm, parser: EntityQueryGenerator(cfg.max_queries, parser=parser))
register("llm", _build_llm)
register("passage", lambda cfg, llm, parser: PassageQueryGenerator())
register("trained", _build_trained)
