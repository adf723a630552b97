"""The ``llm`` query generator: RARR's CQGen, a few-shot prompt sampled several times."""

from __future__ import annotations

import functools
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

from editor.llm.base import LLMBackend
from editor.prompts import PROMPT_DIR, conversation_block, load_template, quote
from editor.research.querygen.base import WritingGenerator
from editor.research.querygen.questions import (
    normalize_question,
    parse_questions,
)
from editor.research.querygen.simple import SentenceQueryGenerator

if TYPE_CHECKING:
    from spacy.language import Language

    from editor.text.document import TextParser

logger = logging.getLogger(__name__)

DEFAULT_PROMPT = PROMPT_DIR / "cqgen.txt"
STOP = ["\n\n", "Passage:"]
_WORD = re.compile(r"[a-z0-9]+")


def render_prompt(template: str, passage: str, context: str | None = None) -> str:
    r'''The few-shot prompt with ``passage`` (and ``context``) filled in as quoted data.

    >>> render_prompt("{{context}}Passage: {{passage}}", " Paris is big. ", "User: hi")
    'Conversation: """User: hi"""\nPassage: Paris is big.'
    '''
    block = conversation_block(context)
    return template.replace("{{context}}", block).replace("{{passage}}", quote(passage))


def load_prompt(path: str | Path | None = None) -> str:
    """A prompt template (the packaged few-shot CQGen prompt by default)."""
    return load_template(path, DEFAULT_PROMPT.name, ["passage"], "querygen.prompt")


class LLMQueryGenerator(WritingGenerator):
    """RARR's CQGen: the few-shot prompt sampled ``samples`` times, union of the questions.

    Questions copied from the prompt's examples, or sharing no content word with the passage,
    are dropped. When nothing usable comes back, falls back to ``SentenceQueryGenerator`` with a
    warning. ``LLMError`` (server unreachable) propagates. ``use_chat`` sends the prompt as a
    user message (for chat-only servers).
    """

    name = "llm"
    no_questions = (
        "the LLM returned no usable questions for a %d-character passage; "
        "falling back to one query per sentence"
    )

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
        parser: TextParser | None = None,
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
        self.fallback = SentenceQueryGenerator(max_queries, nlp, parser)
        examples = self.template.replace("{{context}}", "").replace("{{passage}}", "")
        self._example_keys = {normalize_question(q) for q in parse_questions(examples)}

    def _write(self, texts: list[str], contexts: list[str | None]) -> list[list[str]]:
        prompts = [render_prompt(self.template, t, c) for t, c in zip(texts, contexts, strict=True)]
        return [
            grounded(
                [q for sample in samples for q in parse_questions(sample)], t, c, self._example_keys
            )
            for samples, t, c in zip(self._sample(prompts), texts, contexts, strict=True)
        ]

    def _sample(self, prompts: list[str]) -> list[list[str]]:
        sampling = {
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "n": self.samples,
            "stop": STOP,
        }
        if self.use_chat:
            conversations = [[{"role": "user", "content": p}] for p in prompts]
            return self.llm.chat(conversations, **sampling)
        return self.llm.complete(prompts, **sampling)


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
