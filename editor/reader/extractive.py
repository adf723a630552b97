"""The extractive reader: a cross-encoder over ``[CLS] question [SEP] evidence window [SEP]``
whose pointer gives the answer's first and last evidence token, or [CLS] for "no answer here".

The network is the span judge's (``editor.attribution.span_model``): its evidence pointer,
trained further on questions (``purr train reader``), is the reader's answer head, so the reader
loads, quantises and runs exactly as the judge does (int8 ONNX on the default path). A long
evidence is read in windows of ``max_length`` tokens overlapping by ``stride``; the answer is
the best span of any window, and "no answer" is as likely as the window that most believes the
evidence answers says.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from editor.reader.base import Answer, Reading

MAX_QUESTION_TOKENS = 48
MAX_ANSWER_TOKENS = 30
TOP_K = 8


def default_path() -> Path:
    return Path(__file__).resolve().parents[1] / "models" / "purr-reader"


def log_softmax(x: np.ndarray) -> np.ndarray:
    """Along the last axis, ignoring ``-inf``-like masked entries.

    >>> np.round(np.exp(log_softmax(np.array([0.0, 0.0]))), 2).tolist()
    [0.5, 0.5]
    """
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def window_spans(
    start: np.ndarray, end: np.ndarray, longest: int = MAX_ANSWER_TOKENS, k: int = TOP_K
) -> tuple[list[tuple[float, int, int]], float]:
    """The best ``(log p, s, e)`` spans of one window (``s <= e < s + longest``, both after
    [CLS]) and the log probability of "no answer" ([CLS] for both).

    >>> spans, null = window_spans(np.array([0.0, 5, -9e9]), np.array([0.0, 5, -9e9]))
    >>> spans[0][1:], null < spans[0][0]
    ((1, 1), True)
    """
    ls, le = log_softmax(start), log_softmax(end)
    null = float(ls[0] + le[0])
    starts = [int(i) for i in np.argsort(-ls)[: k + 1] if i > 0 and ls[i] > -1e3]
    ends = [int(i) for i in np.argsort(-le)[: k + 1] if i > 0 and le[i] > -1e3]
    spans = [(float(ls[s] + le[e]), s, e) for s in starts for e in ends if s <= e < s + longest]
    spans.sort(reverse=True)
    return spans[:k], null


class ExtractiveReader:
    """The trained reader in ``path`` (default: the shipped ``purr-reader``). Loads lazily, once;
    thread-safe."""

    def __init__(
        self,
        path: str | Path | None = None,
        max_length: int = 192,
        stride: int = 48,
        batch_size: int = 16,
        *,
        device: str = "cpu",
        quantize: str = "int8",
        network: Any = None,
        tokenizer: Any = None,
    ) -> None:
        if max_length < MAX_QUESTION_TOKENS + 32:
            raise ValueError(
                f"max_length must be at least {MAX_QUESTION_TOKENS + 32} tokens (a question and "
                f"a window), got {max_length}"
            )
        if not 0 <= stride < max_length // 2:
            raise ValueError(f"stride must be in [0, {max_length // 2}), got {stride}")
        self.path = Path(path) if path else default_path()
        self.max_length, self.stride, self.batch_size = max_length, stride, batch_size
        self.device, self.quantize = device, quantize
        self._network, self._tokenizer = network, tokenizer
        self._lock = threading.Lock()

    def load(self) -> None:
        with self._lock:
            if self._network is None:
                from editor.attribution.span_judge import load_network

                self._network, self._tokenizer = load_network(self.path, self.device, self.quantize)

    def _question(self, question: str) -> str:
        enc = self._tokenizer.encode(question, add_special_tokens=False)
        if len(enc.ids) <= MAX_QUESTION_TOKENS:
            return question
        return question[: enc.offsets[MAX_QUESTION_TOKENS - 1][1]]

    def windows(self, items: Sequence[tuple[str, str]]) -> list[tuple[int, Any]]:
        """``(item index, encoding)`` of every window of every (question, evidence)."""
        self.load()
        with self._lock:
            tok = self._tokenizer
            tok.no_padding()
            tok.enable_truncation(self.max_length, stride=self.stride, strategy="only_second")
            encs = tok.encode_batch([(self._question(q), e) for q, e in items])
        return [(i, w) for i, enc in enumerate(encs) for w in [enc, *enc.overflowing]]

    def logits(self, encs: Sequence[Any]) -> list[tuple[np.ndarray, np.ndarray]]:
        """The pointer's (start, end) logits of each window (masked outside the evidence)."""
        from editor.attribution.span_call import run
        from editor.attribution.span_model import layout, pad

        out = []
        for i in range(0, len(encs), self.batch_size):
            chunk = encs[i : i + self.batch_size]
            arrays = pad([np.array(e.ids) for e in chunk], [layout(e)[0] for e in chunk])
            _, _, starts, ends = run(self._network, *arrays)
            for k, e in enumerate(chunk):
                n = len(e.ids)
                out.append((starts[k, :n], ends[k, :n]))
        return out

    def read_batch(self, items: Sequence[tuple[str, str]]) -> list[Reading]:
        if not items:
            return []
        wins = self.windows(items)
        found: list[dict[tuple[int, int], float]] = [{} for _ in items]
        null = [0.0 for _ in items]
        seen = [False for _ in items]
        for (i, enc), (start, end) in zip(wins, self.logits([w for _, w in wins]), strict=True):
            spans, p_null = window_spans(start, end)
            null[i] = min(null[i], float(np.exp(p_null))) if seen[i] else float(np.exp(p_null))
            seen[i] = True
            for lp, s, e in spans:
                a, b = enc.offsets[s][0], enc.offsets[e][1]
                if b > a:
                    found[i][(a, b)] = max(found[i].get((a, b), 0.0), float(np.exp(lp)))
        out = []
        for (question, evidence), spans, p_null in zip(items, found, null, strict=True):
            best = sorted(spans.items(), key=lambda kv: -kv[1])[:TOP_K]
            answers = tuple(Answer(evidence[a:b], a, b, p) for (a, b), p in best)
            out.append(Reading(question, answers, p_null))
        return out

    def read(self, question: str, evidence: str) -> Reading:
        return self.read_batch([(question, evidence)])[0]
