"""What every attribution (NLI) model shares: label names, premise chunking, batching.

Models (``editor.nli_hf``) read (premise, hypothesis) pairs and return ``EntailmentScores``.
A premise longer than the model's window is cut into windows of consecutive sentences that fit
next to the hypothesis, consecutive windows sharing ``overlap`` sentences; each window is scored
and the scores are aggregated (max P(supported), max P(contradicted), min P(not_supported)),
so one supporting passage anywhere in a long document is enough. With ``gather``, one more window
joins the sentences that together cover the most of the hypothesis's content words
(``editor.text.words.gather``), for claims that only several scattered sentences support.
``ChunkedNLI`` holds that logic; a model class supplies token counting and the scoring of pairs
that fit.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from editor.scope import current
from editor.text.words import gather as gather_sentences
from editor.types import EntailmentScores
from editor.verdicts import CONTRADICTED, LABELS, NOT_SUPPORTED, SUPPORTED
from retrieval.sentences import split

T = TypeVar("T")


_SYNONYMS = {
    SUPPORTED: "entailment entailed entails entail supported supports support attributable "
    "consistent faithful grounded",
    CONTRADICTED: "contradiction contradicted contradicts contradict contradictory refuted "
    "refutes refute",
    NOT_SUPPORTED: "neutral notentailment nonentailment notentailed notsupported unsupported "
    "notenoughinfo notenoughinformation nei unverifiable notattributable nonattributable "
    "inconsistent unfaithful hallucinated hallucination partial",
}
_CANONICAL = {word: label for label, words in _SYNONYMS.items() for word in words.split()}


def canonical_label(name: str) -> str | None:
    """The canonical label a model's label name means, or None when it cannot tell.

    >>> [canonical_label(n) for n in ["ENTAILMENT", "not_entailment", "Refuted", "LABEL_0"]]
    ['supported', 'not_supported', 'contradicted', None]
    """
    return _CANONICAL.get(re.sub(r"[^a-z0-9]", "", str(name).lower()))


def infer_label_map(
    id2label: Mapping[int, str], override: Mapping[Any, str] | None = None
) -> dict[int, str]:
    """Map each output index of a classifier to ``supported | contradicted | not_supported``.

    Names in ``id2label`` are recognised in common spellings (entailment / neutral /
    contradiction, supported / refuted, not_entailment, ...). ``override`` maps label names or
    indices to labels and wins over the names; it is needed for ``LABEL_0``-style names.
    Several outputs may share a label (their probabilities add up).

    >>> infer_label_map({0: "entailment", 1: "neutral", 2: "contradiction"})
    {0: 'supported', 1: 'not_supported', 2: 'contradicted'}
    >>> infer_label_map({0: "LABEL_0", 1: "LABEL_1"}, {"LABEL_1": "supported", 0: "neutral"})
    {0: 'not_supported', 1: 'supported'}
    """
    by_key: dict[str, str] = {}
    for key, value in (override or {}).items():
        label = value if value in LABELS else canonical_label(value)
        if label is None:
            raise ValueError(
                f"label_map value {value!r} (for {key!r}) is not one of {', '.join(LABELS)}"
            )
        by_key[str(key)] = label
    known = {str(i) for i in id2label} | {str(n) for n in id2label.values()}
    unknown = sorted(set(by_key) - known)
    if unknown:
        raise ValueError(
            f"label_map keys {unknown} match no output of the model; its labels are "
            f"{dict(id2label)} (use these names or indices)"
        )
    mapping: dict[int, str] = {}
    for index in sorted(id2label):
        name = id2label[index]
        label = by_key.get(str(name), by_key.get(str(index))) or canonical_label(name)
        if label is None:
            example = {str(n): LABELS[min(i, 2)] for i, n in sorted(id2label.items())}
            raise ValueError(
                f"cannot tell what output {index} ({name!r}) of the NLI model means from "
                f"config.id2label {dict(id2label)}; pass label_map, e.g. {example} "
                f"(values: {', '.join(LABELS)})"
            )
        mapping[int(index)] = label
    if SUPPORTED not in mapping.values():
        raise ValueError(
            f"no output of the NLI model means 'supported' (labels {dict(id2label)} -> "
            f"{mapping}); attribution needs P(entailment): fix label_map"
        )
    if len(mapping) > 1 and set(mapping.values()) == {SUPPORTED}:
        raise ValueError(
            f"every output of the NLI model maps to 'supported' ({mapping}); fix label_map"
        )
    return mapping


def premise_windows(lengths: Sequence[int], budget: int, overlap: int = 1) -> list[tuple[int, int]]:
    """Windows ``(start, end)`` of consecutive units (sentences) whose token ``lengths`` sum to at
    most ``budget``; consecutive windows share ``overlap`` units. A unit longer than the budget
    is a window of its own (the tokenizer truncates it). Every unit is in some window.

    >>> premise_windows([3, 3, 3, 3], budget=6)
    [(0, 2), (1, 3), (2, 4)]
    >>> premise_windows([3, 3, 3, 3], budget=6, overlap=0)
    [(0, 2), (2, 4)]
    >>> premise_windows([10, 2, 2], budget=6)
    [(0, 1), (1, 3)]
    """
    if budget < 1:
        raise ValueError(f"budget must be >= 1 token, got {budget}")
    if overlap < 0:
        raise ValueError(f"overlap must be >= 0 sentences, got {overlap}")
    windows: list[tuple[int, int]] = []
    start, n = 0, len(lengths)
    while start < n:
        end, total = start + 1, lengths[start]
        while end < n and total + lengths[end] <= budget:
            total += lengths[end]
            end += 1
        windows.append((start, end))
        if end >= n:
            break
        start = max(start + 1, end - overlap)
    return windows


class ChunkedNLI:
    """Chunking, batching and aggregation shared by the NLI models (an ``AttributionModel``).

    Subclasses implement ``_token_lengths`` (tokens of texts, no special tokens),
    ``_overhead`` (tokens a pair adds besides premise and formatted hypothesis) and
    ``_pair_probabilities`` (one batch of pairs that fit -> (batch, 3) probabilities in
    ``LABELS`` order); ``_format_hypothesis`` if the hypothesis is wrapped in a template.
    """

    three_way = True
    """Whether ``contradicted`` is predicted (False: always 0.0)."""

    def __init__(
        self, max_length: int = 256, batch_size: int = 16, overlap: int = 1, gather: bool = False
    ) -> None:
        if max_length < 16:
            raise ValueError(f"max_length must be >= 16 tokens, got {max_length}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if overlap < 0:
            raise ValueError(f"overlap must be >= 0 sentences, got {overlap}")
        self.max_length = max_length
        self.batch_size = batch_size
        self.overlap = overlap
        self.gather = gather
        # A fast tokenizer keeps its padding and truncation settings between calls: requests
        # on other threads must not change them halfway through this one's.
        self.tokenizer_lock = threading.Lock()

    def score(self, premise: str, hypothesis: str) -> EntailmentScores:
        """Scores of one (premise, hypothesis) pair."""
        return self.score_batch([(premise, hypothesis)])[0]

    def score_batch(self, pairs: Sequence[tuple[str, str]]) -> list[EntailmentScores]:
        """Scores of each (premise, hypothesis) pair, in order; long premises are chunked."""
        for i, pair in enumerate(pairs):
            if len(pair) != 2 or not all(isinstance(t, str) for t in pair):
                raise ValueError(f"pair {i} must be (premise: str, hypothesis: str), got {pair!r}")
        if not pairs:
            return []
        windows = self._windows(pairs)
        flat: dict[tuple[str, str], int] = {}
        for (_, hypothesis), texts in zip(pairs, windows, strict=True):
            for text in texts:
                flat.setdefault((text, hypothesis), len(flat))
        probs = self._batched(list(flat))  # (n_unique_windows, 3)
        out = []
        for (_, hypothesis), texts in zip(pairs, windows, strict=True):
            rows = probs[[flat[(t, hypothesis)] for t in texts]]  # (n_windows, 3)
            out.append(
                EntailmentScores(
                    supported=float(rows[:, 0].max()),
                    contradicted=float(rows[:, 1].max()),
                    not_supported=float(rows[:, 2].min()),
                    chunks=len(texts),
                )
            )
        return out

    # -- chunking -------------------------------------------------------------------------

    def _windows(self, pairs: Sequence[tuple[str, str]]) -> list[list[str]]:
        """The premise windows to score for each pair (the whole premise when it fits)."""
        hypotheses = list(dict.fromkeys(self._format_hypothesis(h) for _, h in pairs))
        premises = list(dict.fromkeys(p for p, _ in pairs))
        hyp_len = dict(zip(hypotheses, self._token_lengths(hypotheses), strict=True))
        prem_len = dict(zip(premises, self._token_lengths(premises), strict=True))
        units: dict[str, tuple[list[str], list[int]]] = {}
        cache: dict[tuple[str, int], tuple[list[str], list[str], list[int]]] = {}
        out = []
        for premise, hypothesis in pairs:
            budget = self._budget(hyp_len[self._format_hypothesis(hypothesis)])
            if prem_len[premise] <= budget:
                out.append([premise])
                continue
            if premise not in units:
                sentences = split(premise) or [premise]
                units[premise] = (sentences, self._token_lengths(sentences))
            if (premise, budget) not in cache:
                cache[(premise, budget)] = _chunk(*units[premise], budget, self.overlap)
            windows, pieces, lengths = cache[(premise, budget)]
            if self.gather:
                picked = gather_sentences(pieces, hypothesis, lengths, budget)
                joined = " ".join(pieces[i] for i in picked)
                if picked and joined not in windows:
                    windows = [*windows, joined]
            out.append(windows)
        return out

    def _budget(self, hypothesis_tokens: int) -> int:
        """Premise tokens that fit beside the hypothesis (at least a quarter of the window)."""
        free = self.max_length - self._overhead() - hypothesis_tokens
        return max(free, self.max_length // 4)

    def _batched(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """``_pair_probabilities`` over batches of similar length; rows in input order. Inside
        an edit (``editor.scope``), a pair already scored there is not scored again."""
        out = np.zeros((len(pairs), 3), dtype=np.float64)
        scope = current()
        known = {} if scope is None else scope.pairs.setdefault(id(self), {})
        todo = [i for i, pair in enumerate(pairs) if pair not in known]
        for i, pair in enumerate(pairs):
            if pair in known:
                out[i] = known[pair]
        order = sorted(todo, key=lambda i: -len(pairs[i][0]) - len(pairs[i][1]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._pair_probabilities([pairs[i] for i in idx])
        out = np.clip(out, 0.0, 1.0)  # float32 softmax sums may overshoot 1 by ~1e-7
        if scope is not None:
            known.update((pairs[i], out[i].copy()) for i in todo)
        return out

    # -- model hooks ----------------------------------------------------------------------

    def _format_hypothesis(self, hypothesis: str) -> str:
        return hypothesis

    def _token_lengths(self, texts: list[str]) -> list[int]:
        raise NotImplementedError

    def _overhead(self) -> int:
        raise NotImplementedError

    def _pair_probabilities(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        raise NotImplementedError


def _chunk(
    sentences: list[str], lengths: list[int], budget: int, overlap: int
) -> tuple[list[str], list[str], list[int]]:
    """Windows of ``sentences`` within ``budget``, with the units they are made of and their
    lengths; sentences over budget are first cut by words (token counts estimated per word, the
    tokenizer truncates what an estimate misses)."""
    units: list[str] = []
    unit_lengths: list[int] = []
    for sentence, length in zip(sentences, lengths, strict=True):
        words = sentence.split()
        if length <= budget or len(words) < 2:
            units.append(sentence)
            unit_lengths.append(length)
            continue
        per_word = length / len(words)
        step = max(1, int(budget / per_word))
        for i in range(0, len(words), step):
            piece = words[i : i + step]
            units.append(" ".join(piece))
            unit_lengths.append(max(1, round(per_word * len(piece))))
    windows = [" ".join(units[a:b]) for a, b in premise_windows(unit_lengths, budget, overlap)]
    return windows, units, unit_lengths
