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

import difflib
import random
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from editor.text.nlp import ner_only
from training.data.planted import _plant

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
        self._off = ner_only(nlp)

    def entities(self, text: str) -> list[tuple[str, int, int, str]]:
        """``(text, start, end, label)`` of the named entities in ``text``; the last few
        hundred texts are remembered (variants of one seed share their NER)."""
        if text not in self._ner:
            if len(self._ner) > 256:
                self._ner.clear()
            doc = self.nlp(text, disable=self._off)
            self._ner[text] = [(e.text, e.start_char, e.end_char, e.label_) for e in doc.ents]
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

    def corrupt_batch(
        self, items: Sequence[tuple[str, Sequence[str], random.Random]]
    ) -> list[Corruption | None]:
        return [self.corrupt(clean, negatives, rng) for clean, negatives, rng in items]


class LLMCorruptor:
    """An LLM asked to introduce the given kinds of factual error (few-shot prompt file).

    Small models often make another kind of error than the one asked for, so a row's types are
    read from the edit itself (``edit_types``), not from the request."""

    name = "llm"

    def __init__(
        self,
        llm: Any,
        prompt: str | Path | None = None,
        max_new_tokens: int = 96,
        nlp: Any = None,
    ):
        self.llm = llm
        self.template = Path(prompt or PROMPTS / "corrupt.txt").read_text(encoding="utf-8")
        self.max_new_tokens = max_new_tokens
        self.nlp = nlp

    def corrupt(
        self, clean: str, negatives: Sequence[str], rng: random.Random
    ) -> Corruption | None:
        [got] = self.corrupt_batch([(clean, negatives, rng)])
        return got

    def corrupt_batch(
        self, items: Sequence[tuple[str, Sequence[str], random.Random]]
    ) -> list[Corruption | None]:
        """One LLM call for every item (the backend batches the prompts)."""
        if not items:
            return []
        kinds = [
            rng.sample(CORRUPTION_TYPES[:4], 2 if rng.random() < 0.3 else 1) for *_, rng in items
        ]
        prompts = [
            self.template.replace("{{types}}", ", ".join(k)).replace("{{text}}", clean)
            for (clean, _, _), k in zip(items, kinds, strict=True)
        ]
        answers = self.llm.complete(
            prompts, max_new_tokens=self.max_new_tokens, temperature=0.7, stop=["\n"]
        )
        out: list[Corruption | None] = []
        for (clean, _, _), asked, [answer] in zip(items, kinds, answers, strict=True):
            answer = answer.strip().strip('"').strip()
            if not answer or answer == clean or len(answer) > 2 * len(clean) + 20:
                out.append(None)
                continue
            types = edit_types(clean, answer, self.nlp) if self.nlp is not None else tuple(asked)
            out.append(Corruption(answer, types))
        return out


_NUM = re.compile(r"\d")
_YEARISH = re.compile(r"^(1[0-9]{3}|20[0-9]{2}|[0-9]{1,2}(st|nd|rd|th))\W*$")


def edit_types(clean: str, corrupted: str, nlp: Any) -> tuple[str, ...]:
    """The kinds of error an edit made, read from the words it changed: ``negation`` (a "not"
    added or removed), ``date`` / ``number`` (changed words with digits; years and ordinals are
    dates), ``role`` (the same names in another order), ``entity`` (a changed word inside a named
    entity), else ``other`` (a rewording, a deletion).

    >>> nlp = __import__("editor.text.nlp", fromlist=["get_nlp"]).get_nlp()
    >>> edit_types("Paris is in France.", "Paris is not in France.", nlp)
    ('negation',)
    >>> edit_types("It opened in 1889 in Paris.", "It opened in 1901 in Lyon.", nlp)
    ('date', 'entity')
    """

    def words(text: str) -> list[str]:
        return [w for w in (w.strip(".,;:!?\"'()[]") for w in text.split()) if w]

    a, b = words(clean), words(corrupted)
    removed: list[str] = []
    added: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            removed += a[i1:i2]
            added += b[j1:j2]
    types: list[str] = []
    if ("not" in added) != ("not" in removed) or ("n't" in " ".join(added)) != (
        "n't" in " ".join(removed)
    ):
        types.append("negation")
    changed = [w for w in removed + added if w not in ("not",)]
    digits = [w for w in changed if _NUM.search(w)]
    if any(_YEARISH.match(w) for w in digits):
        types.append("date")
    if any(not _YEARISH.match(w) for w in digits):
        types.append("number")
    off = ner_only(nlp)
    ents_a = [e.text for e in nlp(clean, disable=off).ents]
    ents_b = [e.text for e in nlp(corrupted, disable=off).ents]
    if ents_a != ents_b and sorted(ents_a) == sorted(ents_b):
        types.append("role")
    elif set(changed) & {w for e in ents_a + ents_b for w in words(e) if not _NUM.search(w)}:
        types.append("entity")
    return tuple(types) or ("other",)


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
