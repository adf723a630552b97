"""Corruptors for PURR's denoising data: a clean statement ``y`` in, a corrupted ``x`` out.

- ``RuleCorruptor`` (no LLM): one or two of ``date`` / ``number`` (a year or quantity moved),
  ``entity`` (a name swapped for one of the same spaCy type, preferably one the hard-negative
  evidence mentions, else one from the corpus), ``role`` (two same-type names trade places) and
  ``negation`` ("was" -> "was not", "not" removed).
- ``LLMCorruptor``: an LLM prompted with the corruption types (``prompts/corrupt.txt``), more
  varied than rules; the answer must differ from ``y`` and stay short.

Both return ``Corruption(text, types)`` or None when nothing applies.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from training.planted import _plant

CORRUPTION_TYPES = ("date", "number", "entity", "role", "negation")
PROMPTS = Path(__file__).parent / "prompts"

_AUX = re.compile(r"\b(is|was|are|were|has|had|can|could|will|would|does|did)\b( not\b)?")


@dataclass(frozen=True)
class Corruption:
    text: str
    types: tuple[str, ...]


def negate(sentence: str) -> str | None:
    """Flip the polarity of the first auxiliary verb, or None without one.

    >>> negate("Paris is the capital of France.")
    'Paris is not the capital of France.'
    >>> negate("It was not built in 1889.")
    'It was built in 1889.'
    >>> negate("Birds fly.") is None
    True
    """
    m = _AUX.search(sentence)
    if not m:
        return None
    if m.group(2):
        return sentence[: m.start()] + m.group(1) + sentence[m.end() :]
    return sentence[: m.end()] + " not" + sentence[m.end() :]


class RuleCorruptor:
    """Rule-based corruptions drawing replacements from hard negatives and a corpus pool."""

    name = "rules"

    def __init__(
        self,
        nlp: Any,
        pool: Mapping[str, Sequence[str]],
        two_errors: float = 0.2,
        negation_first: float = 0.1,
    ):
        self.nlp = nlp
        self.pool = pool
        self.two_errors = two_errors
        self.negation_first = negation_first
        self._ner: dict[str, list[tuple[str, int, int, str]]] = {}

    def entities(self, text: str) -> list[tuple[str, int, int, str]]:
        """``(text, start, end, label)`` of the named entities in ``text``; the last few
        hundred texts are remembered (variants of one seed share their NER)."""
        if text not in self._ner:
            if len(self._ner) > 256:
                self._ner.clear()
            self._ner[text] = [
                (e.text, e.start_char, e.end_char, e.label_) for e in self.nlp(text).ents
            ]
        return self._ner[text]

    def corrupt(
        self, clean: str, negatives: Sequence[str], rng: random.Random
    ) -> Corruption | None:
        hard: dict[str, list[str]] = defaultdict(list)
        for n in negatives:
            for e in self.entities(n[:600]):
                hard[e[3]].append(e[0])
        pool = {**self.pool, **hard}  # names of the hard negatives first, else the corpus
        wanted = 2 if rng.random() < self.two_errors else 1
        kinds = list(CORRUPTION_TYPES[:4])
        rng.shuffle(kinds)
        # negation applies to almost any sentence: tried first only now and then, else last
        kinds.insert(0 if rng.random() < self.negation_first else len(kinds), "negation")
        text, done = clean, list[str]()
        for kind in kinds:
            if len(done) == wanted:
                break
            if kind == "negation":
                new = negate(text)
            else:
                ents = self.entities(text)
                got = _plant(text, ents, pool, rng, kind) if ents else None
                new = got[0] if got else None
            if new and new != text:
                text, done = new, [*done, kind]
        return Corruption(text, tuple(done)) if done else None


class LLMCorruptor:
    """An LLM asked to introduce the given kinds of factual error (few-shot prompt file)."""

    name = "llm"

    def __init__(self, llm: Any, prompt: str | Path | None = None, max_new_tokens: int = 96):
        self.llm = llm
        self.template = Path(prompt or PROMPTS / "corrupt.txt").read_text(encoding="utf-8")
        self.max_new_tokens = max_new_tokens

    def corrupt(
        self, clean: str, negatives: Sequence[str], rng: random.Random
    ) -> Corruption | None:
        kinds = rng.sample(CORRUPTION_TYPES[:4], 2 if rng.random() < 0.3 else 1)
        prompt = self.template.replace("{{types}}", ", ".join(kinds)).replace("{{text}}", clean)
        [[answer]] = self.llm.complete(
            [prompt], max_new_tokens=self.max_new_tokens, temperature=0.7, stop=["\n"]
        )
        answer = answer.strip().strip('"').strip()
        if not answer or answer == clean or len(answer) > 2 * len(clean) + 20:
            return None
        return Corruption(answer, tuple(kinds))


class LLMSummarizer:
    """The clean statement ``y``: an LLM's one-sentence summary of the gold evidence E+."""

    def __init__(self, llm: Any, prompt: str | Path | None = None, max_new_tokens: int = 80):
        self.llm = llm
        self.template = Path(prompt or PROMPTS / "summarize.txt").read_text(encoding="utf-8")
        self.max_new_tokens = max_new_tokens

    def summarize(self, query: str, evidence: Sequence[str]) -> str | None:
        snippets = "\n".join(f"[{i}] {' '.join(e.split())}" for i, e in enumerate(evidence, 1))
        prompt = self.template.replace("{{query}}", query).replace("{{evidence}}", snippets)
        [[answer]] = self.llm.complete(
            [prompt], max_new_tokens=self.max_new_tokens, temperature=0.0, stop=["\n"]
        )
        answer = answer.strip()
        return answer if 5 <= len(answer.split()) <= 60 else None
