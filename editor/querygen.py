"""Query generation (CQGen): the questions the research stage searches evidence for.

Three generators behind one Protocol, built from ``QueryGenConfig`` by ``build``:

- ``sentence``: one query per checkable sentence, decontextualised (RARR's strong baseline);
- ``entity``: one wh-question per named entity, date or number of each sentence;
- ``llm``: a few-shot prompted LLM sampled ``samples`` times, union of the questions (RARR);
- ``trained``: a small model distilled from ``llm`` by ``purr train querygen`` (PURR), one
  greedy pass over a short prompt (editor/querygen_trained.py).

Every generator returns de-duplicated queries, at most ``max_queries``, and ``[]`` for empty text.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from editor.config import QueryGenConfig
from editor.decontext import decontextualize_passage
from editor.llm.base import LLMBackend
from editor.nlp import get_nlp, is_claim
from editor.questions import (
    dedupe,
    entity_question,
    interleave,
    normalize_question,
    parse_questions,
)
from editor.registry import Registry
from editor.types import Query

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

logger = logging.getLogger(__name__)

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
DEFAULT_PROMPT = PROMPTS_DIR / "cqgen.txt"
STOP = ["\n\n", "Passage:"]


@runtime_checkable
class QueryGenerator(Protocol):
    """Questions about a passage (optionally given the dialogue ``context`` it answers)."""

    def generate(self, text: str, context: str | None = None) -> list[Query]: ...

    def generate_batch(
        self, texts: list[str], contexts: Sequence[str | None] | None = None
    ) -> list[list[Query]]: ...


def _contexts(texts: list[str], contexts: Sequence[str | None] | None) -> list[str | None]:
    out: list[str | None] = list(contexts) if contexts is not None else [None] * len(texts)
    if len(out) != len(texts):
        raise ValueError(
            f"got {len(texts)} texts but {len(out)} contexts; pass one context (or None) per text"
        )
    return out


def _finish(queries: list[Query], max_queries: int) -> list[Query]:
    return dedupe(queries, key=lambda q: normalize_question(q.text))[:max_queries]


class _Batched:
    """``generate_batch`` as a loop over ``generate`` (for generators with no batch speed-up)."""

    def generate(self, text: str, context: str | None = None) -> list[Query]:
        raise NotImplementedError

    def generate_batch(
        self, texts: list[str], contexts: Sequence[str | None] | None = None
    ) -> list[list[Query]]:
        return [self.generate(t, c) for t, c in zip(texts, _contexts(texts, contexts), strict=True)]


def _claim_sentences(text: str, context: str | None, nlp: Language) -> list[Doc]:
    """Parsed decontextualised sentences of ``text`` that state something checkable."""
    if not text or not text.strip():
        return []
    sentences = [d.decontextualized for d in decontextualize_passage(text, context, nlp=nlp)]
    return [doc for doc in nlp.pipe(sentences) if is_claim(doc)]


class SentenceQueryGenerator(_Batched):
    """One query per checkable sentence: the sentence itself, decontextualised.

    >>> [q.text for q in SentenceQueryGenerator().generate(
    ...     "Hello! Marie Curie was a physicist. She won two Nobel Prizes. Any questions?")]
    ['Marie Curie was a physicist.', 'Marie Curie won two Nobel Prizes.']
    """

    name = "sentence"

    def __init__(self, max_queries: int = 16, nlp: Language | None = None) -> None:
        if max_queries < 1:
            raise ValueError(f"max_queries must be >= 1, got {max_queries}")
        self.max_queries = max_queries
        self._nlp = nlp

    def generate(self, text: str, context: str | None = None) -> list[Query]:
        docs = _claim_sentences(text, context, self._nlp or get_nlp())
        queries = [Query(d.text, self.name, sentence=d.text) for d in docs]
        return _finish(queries, self.max_queries)


class PassageQueryGenerator(_Batched):
    """The whole passage as one query (the ablation RARR found poor).

    >>> [q.text for q in PassageQueryGenerator().generate("Paris is big. Rome is old.")]
    ['Paris is big. Rome is old.']
    """

    name = "passage"

    def generate(self, text: str, context: str | None = None) -> list[Query]:
        text = " ".join(text.split())
        return [Query(text, self.name, sentence=text)] if text else []


class EntityQueryGenerator(_Batched):
    """A wh-question per named entity, date or number of each checkable sentence; the sentence
    itself when it names none. Sentences take turns, so a cap still covers every sentence.

    >>> [q.text for q in EntityQueryGenerator().generate("Marie Curie was born in Warsaw.")]
    ['Who was born in Warsaw?', 'Marie Curie was born where?']
    """

    name = "entity"

    def __init__(self, max_queries: int = 16, nlp: Language | None = None) -> None:
        if max_queries < 1:
            raise ValueError(f"max_queries must be >= 1, got {max_queries}")
        self.max_queries = max_queries
        self._nlp = nlp

    def generate(self, text: str, context: str | None = None) -> list[Query]:
        per_sentence: list[list[Query]] = []
        for doc in _claim_sentences(text, context, self._nlp or get_nlp()):
            sentence = doc.text
            queries = [
                Query(entity_question(ent), self.name, sentence=sentence, focus=ent.text)
                for ent in doc.ents
                if ent.root.dep_ != "amod"  # "a Polish physicist": no question reads well
            ]
            per_sentence.append(queries or [Query(sentence, self.name, sentence=sentence)])
        return _finish(interleave(per_sentence), self.max_queries)


_WORD = re.compile(r"[a-z0-9]+")


def render_prompt(template: str, passage: str, context: str | None = None) -> str:
    r'''The few-shot prompt with ``passage`` (and ``context``) filled in as quoted data.

    >>> render_prompt("{{context}}Passage: {{passage}}", " Paris is big. ", "User: hi")
    'Conversation: """User: hi"""\nPassage: Paris is big.'
    '''

    def quote(text: str) -> str:
        return text.strip().replace('"""', "'''")

    block = f'Conversation: """{quote(context)}"""\n' if context and context.strip() else ""
    return template.replace("{{context}}", block).replace("{{passage}}", quote(passage))


def load_prompt(path: str | Path | None = None) -> str:
    """A prompt template (the packaged few-shot CQGen prompt by default)."""
    path = Path(path) if path else DEFAULT_PROMPT
    if not path.is_file():
        raise ValueError(f"prompt file {path} not found; set querygen.prompt to an existing file")
    template = path.read_text("utf-8")
    if "{{passage}}" not in template:
        raise ValueError(f"prompt file {path} has no {{{{passage}}}} placeholder; add one")
    return template


class LLMQueryGenerator:
    """RARR's CQGen: the few-shot prompt sampled ``samples`` times, union of the questions.

    Questions copied from the prompt's examples, or sharing no content word with the passage,
    are dropped. When nothing usable comes back, falls back to ``SentenceQueryGenerator`` with a
    warning. ``LLMError`` (server unreachable) propagates. ``use_chat`` sends the prompt as a
    user message (for chat-only servers).
    """

    name = "llm"

    def __init__(
        self,
        llm: LLMBackend,
        *,
        samples: int = 3,
        max_queries: int = 16,
        prompt: str | Path | None = None,
        temperature: float | None = None,
        max_new_tokens: int | None = None,
        use_chat: bool = False,
        nlp: Language | None = None,
    ) -> None:
        if samples < 1 or max_queries < 1:
            raise ValueError(f"samples and max_queries must be >= 1, got {samples}, {max_queries}")
        self.llm = llm
        self.samples = samples
        self.max_queries = max_queries
        self.template = load_prompt(prompt)
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens
        self.use_chat = use_chat
        self.fallback = SentenceQueryGenerator(max_queries, nlp)
        examples = self.template.replace("{{context}}", "").replace("{{passage}}", "")
        self._example_keys = {normalize_question(q) for q in parse_questions(examples)}

    def generate(self, text: str, context: str | None = None) -> list[Query]:
        return self.generate_batch([text], [context])[0]

    def generate_batch(
        self, texts: list[str], contexts: Sequence[str | None] | None = None
    ) -> list[list[Query]]:
        ctx = _contexts(texts, contexts)
        todo = [i for i, t in enumerate(texts) if t and t.strip()]
        results: list[list[Query]] = [[] for _ in texts]
        if not todo:
            return results
        prompts = [render_prompt(self.template, texts[i], ctx[i]) for i in todo]
        outputs = self._sample(prompts)
        for i, samples in zip(todo, outputs, strict=True):
            queries = self._queries(samples, texts[i], ctx[i])
            if not queries:
                logger.warning(
                    "the LLM returned no usable questions for a %d-character passage; "
                    "falling back to one query per sentence",
                    len(texts[i]),
                )
                queries = self.fallback.generate(texts[i], ctx[i])
            results[i] = queries
        return results

    def _sample(self, prompts: list[str]) -> list[list[str]]:
        if self.use_chat:
            conversations = [[{"role": "user", "content": p}] for p in prompts]
            return self.llm.chat(
                conversations,
                max_new_tokens=self.max_new_tokens,
                temperature=self.temperature,
                n=self.samples,
                stop=STOP,
            )
        return self.llm.complete(
            prompts,
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
            n=self.samples,
            stop=STOP,
        )

    def _queries(self, samples: list[str], text: str, context: str | None) -> list[Query]:
        questions = [q for sample in samples for q in parse_questions(sample)]
        kept = grounded(questions, text, context, self._example_keys)
        return _finish([Query(q, self.name) for q in kept], self.max_queries)


def grounded(
    questions: list[str], text: str, context: str | None, exclude: set[str] | None = None
) -> list[str]:
    """The questions sharing a content word with the passage (or its context) and not in
    ``exclude`` (normalised questions, e.g. the prompt's own examples).

    >>> grounded(["Who built the tower?", "What is love?"], "The tower was built in 1889.", None)
    ['Who built the tower?']
    """
    source_words = set(_WORD.findall(f"{text} {context or ''}".lower())) - _stop_words()
    return [
        q
        for q in questions
        if normalize_question(q) not in (exclude or set())
        and source_words.intersection(_WORD.findall(q.lower()))
    ]


@functools.cache
def _stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


QueryGenFactory = Callable[[QueryGenConfig, LLMBackend | None], QueryGenerator]

_GENERATORS: Registry[QueryGenFactory] = Registry("query generator", "querygen.type")


def register(name: str, factory: QueryGenFactory) -> None:
    """Make ``factory(cfg, llm)`` buildable as ``querygen.type=name``; refuses duplicates."""
    _GENERATORS.register(name, factory)


def build(cfg: QueryGenConfig, llm: LLMBackend | None = None) -> QueryGenerator:
    """The generator named by ``cfg.type``; ``llm`` is required for ``type=llm``."""
    return _GENERATORS.get(cfg.type)(cfg, llm)


def _build_llm(cfg: QueryGenConfig, llm: LLMBackend | None) -> QueryGenerator:
    if llm is None:
        raise ValueError(
            "querygen.type=llm needs an LLM backend: pass editor.llm.build(cfg.llm), "
            "or set querygen.type=sentence (no LLM)"
        )
    return LLMQueryGenerator(
        llm, samples=cfg.samples, max_queries=cfg.max_queries, prompt=cfg.prompt
    )


register("sentence", lambda cfg, llm: SentenceQueryGenerator(cfg.max_queries))
register("entity", lambda cfg, llm: EntityQueryGenerator(cfg.max_queries))
register("llm", _build_llm)
register("passage", lambda cfg, llm: PassageQueryGenerator())


def _build_trained(cfg: QueryGenConfig, llm: LLMBackend | None) -> QueryGenerator:
    from editor.querygen_trained import TrainedQueryGenerator

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
    )


register("trained", _build_trained)
