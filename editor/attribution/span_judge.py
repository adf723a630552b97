"""The span judge: the three-head network (``span_model``) loaded from a folder, as a verifier
(``attribution.model=span``: its pair head, premises read in windows) and as what the span
judge's fixer (``editor.judge.span_fix``) and the citation locator ask: which words of a claim
the evidence contradicts or does not support, and which evidence words state the right value.

The folder is what ``training.fit.span_train`` writes: ``config.json``, fp16 shards of every
weight but the word embeddings, ``purr_base.json`` naming the base they come from (the
packaged MiniLM-L12), ``tokenizer.json``.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from editor.attribution.nli import ChunkedNLI
from editor.attribution.span_call import run
from editor.attribution.span_model import (
    TOKEN_TAGS,
    build_model,
    encode_batch,
    first_segment,
    layout,
    marked,
    pad,
)
from editor.llm.partial import MANIFEST
from editor.types import EntailmentScores
from editor.verdicts import CONTRADICTED, NOT_SUPPORTED
from retrieval.collector import collector_paused

SPAN_ARTEFACT = "purr-span-judge"
"""The shipped span judge, in ``editor/models/``."""

TRAINED_LENGTH = 160
"""Tokens per (claim, evidence) pair the shipped judge was trained with."""


@dataclass(frozen=True)
class FlaggedSpan:
    """Claim characters ``[start, end)`` the evidence contradicts (``contradicted``) or does
    not support (``not_supported``), the head's mean probability of the tag, and for a
    contradicted span the evidence characters that state the right value (None: none)."""

    start: int
    end: int
    kind: str
    score: float
    fix: tuple[int, int] | None = None


@dataclass(frozen=True)
class SpanJudgement:
    """The pair head's scores and the token head's spans of one (claim, evidence) pair."""

    scores: EntailmentScores
    spans: tuple[FlaggedSpan, ...]

    def contradicted_spans(self) -> list[FlaggedSpan]:
        return [s for s in self.spans if s.kind == CONTRADICTED]


def default_path() -> str:
    return str(Path(__file__).resolve().parents[1] / "models" / SPAN_ARTEFACT)


def _word_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` grown to whole words and stripped of edge punctuation.

    >>> t = "the Roman Empire."; _word_bounds(t, 5, 9)
    (4, 9)
    >>> t = "It has 2,093 patents."; t[slice(*_word_bounds(t, 7, 8))]
    '2,093'
    """

    def inside(i: int) -> bool:  # a word character, or a digit group's separator ("2,093")
        c = text[i]
        if c.isalnum() or c in "'-":
            return True
        return c in ",." and 0 < i < len(text) - 1 and (text[i - 1] + text[i + 1]).isdigit()

    while start > 0 and inside(start - 1):
        start -= 1
    while end < len(text) and inside(end):
        end += 1
    while start < end and not text[start].isalnum():
        start += 1
    while end > start and not text[end - 1].isalnum():
        end -= 1
    return start, end


def decode_spans(tags: np.ndarray, probs: np.ndarray, tokens, claim_at: int, claim: str):
    """Claim spans from the token head's tags (``tokens``: (index, start, end) of the first
    segment; offsets shifted by ``claim_at``, the question's length)."""
    out: list[list] = []
    for i, a, b in tokens:
        if a == b or a < claim_at:
            continue
        tag = TOKEN_TAGS[int(tags[i])]
        if tag == "O":
            continue
        kind = CONTRADICTED if tag.endswith("C") else NOT_SUPPORTED
        p = float(probs[i, int(tags[i])])
        a, b = a - claim_at, b - claim_at
        if (
            out
            and out[-1][2] == kind
            and (tag.startswith("I") or not claim[out[-1][1] : a].strip())
        ):
            out[-1][1] = b
            out[-1][3].append(p)
        else:
            out.append([a, b, kind, [p]])
    spans = []
    for a, b, kind, ps in out:
        a, b = _word_bounds(claim, a, b)
        if a < b:
            spans.append(FlaggedSpan(a, b, kind, float(np.mean(ps))))
    return spans


MAX_FIX_TOKENS = 12
"""The longest evidence span the pointer may return, in tokens."""


def best_span(start: np.ndarray, end: np.ndarray, longest: int = MAX_FIX_TOKENS):
    """The pointer's answer: ``(s, e)`` with ``s <= e < s + longest`` maximising
    ``start[s] + end[e]``, or ``(0, 0)`` ("none", [CLS]) when that scores higher.

    >>> best_span(np.array([2.0, 1, 4, 0]), np.array([2.0, 0, 1, 4]))
    (2, 3)
    >>> best_span(np.array([9.0, 1, 4, 0]), np.array([9.0, 0, 1, 4]))
    (0, 0)
    """
    n = len(start)
    best, at = start[0] + end[0], (0, 0)
    for s in range(1, n):
        if start[s] < -1e30:
            continue
        e = s + int(np.argmax(end[s : min(n, s + longest)]))
        if start[s] + end[e] > best:
            best, at = start[s] + end[e], (s, e)
    return at


class SpanJudge(ChunkedNLI):
    """The span judge (see the module doc). Loads lazily, once."""

    def __init__(
        self,
        path: str | None = None,
        max_length: int = TRAINED_LENGTH,
        batch_size: int = 32,
        *,
        overlap: int = 1,
        device: str = "cpu",
        quantize: str = "none",
    ) -> None:
        super().__init__(max_length, batch_size, overlap)
        if quantize not in {"none", "int8"}:
            raise ValueError(f"quantize must be 'none' or 'int8', got {quantize!r}")
        if quantize == "int8" and not device.startswith("cpu"):
            raise ValueError(
                f"the int8 span judge runs on CPU only, not on {device}: set quantize: none, "
                "or device: cpu"
            )
        self.path = Path(path or default_path())
        self.device = device
        self.quantize = quantize
        self._lock = threading.Lock()
        self._model: Any = None
        self._tokenizer: Any = None

    three_way = True

    @functools.cached_property
    def reads_questions(self) -> bool:
        """Whether this judge was trained with questions as context (``purr_reads_questions``
        in its config.json); one that was not reads the claim alone."""
        try:
            config = json.loads((self.path / "config.json").read_text("utf-8"))
        except (OSError, ValueError):
            return False
        return bool(config.get("purr_reads_questions", False))

    def load(self) -> None:
        with self._lock:
            if self._model is None:
                with collector_paused():
                    if self.quantize == "int8":
                        self._model, self._tokenizer = _load_int8(self.path)
                    else:
                        self._model, self._tokenizer = _load(self.path, self.device)

    # -- ChunkedNLI (the pair head as a verifier) ----------------------------------------
    def _overhead(self) -> int:
        return 3

    def _token_lengths(self, texts: list[str]) -> list[int]:
        self.load()
        with self.tokenizer_lock:
            self._tokenizer.no_truncation()
            return [len(e.ids) - 2 for e in self._tokenizer.encode_batch(texts)]

    def _pair_probabilities(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        out = self._forward([h for _, h in pairs], [p for p, _ in pairs])
        return out[0].astype(np.float64)

    # -- the span API ---------------------------------------------------------------------
    def _forward(self, firsts: list[str], evidences: list[str], pointers: bool = False):
        """Pair probabilities (n, 3), token probabilities, the pointer's spans (only when
        ``pointers``: a search over every start) and encodings of the pairs."""
        self.load()
        with self.tokenizer_lock:
            encs = encode_batch(self._tokenizer, firsts, evidences, self.max_length)
        pair_p, tok_p, ptr = [], [], []
        for i in range(0, len(encs), self.batch_size):
            chunk = encs[i : i + self.batch_size]
            arrays = pad([np.array(e.ids) for e in chunk], [layout(e)[0] for e in chunk])
            pair, tok, starts, ends = run(self._model, *arrays)
            pair_p.append(_softmax(pair))
            tp = _softmax(tok)
            for k in range(len(chunk)):
                tok_p.append(tp[k])
                ptr.append(best_span(starts[k], ends[k]) if pointers else (0, 0))
        return np.concatenate(pair_p) if pair_p else np.zeros((0, 3)), tok_p, ptr, encs

    def judge_batch(
        self, items: Sequence[tuple[str, str]], question: str = ""
    ) -> list[SpanJudgement]:
        """The judgement of each (claim, evidence) pair; the evidence is read as the first
        ``max_length`` tokens beside the claim (pass a window, not a document)."""
        if not items:
            return []
        firsts = [first_segment(c, question) for c, _ in items]
        forward = self._forward([f for f, _ in firsts], [e for _, e in items])
        return self._judgements(items, firsts, forward)

    def _judgements(
        self,
        items: Sequence[tuple[str, str]],
        firsts: Sequence[tuple[str, int]],
        forward: tuple[Any, Any, Any, Any],
    ) -> list[SpanJudgement]:
        """``judge_batch``'s judgements from one ``_forward`` over ``firsts`` (each claim's
        first segment and where the claim starts in it)."""
        probs, tok_p, _, encs = forward
        out = []
        for (claim, _evidence), (_, at), p, tp, enc in zip(
            items, firsts, probs, tok_p, encs, strict=True
        ):
            _, fs, _ = layout(enc)
            spans = decode_spans(tp.argmax(-1), tp, fs, at, claim)
            scores = EntailmentScores(float(p[0]), float(p[1]), float(p[2]))
            out.append(SpanJudgement(scores, tuple(spans)))
        return out

    def point_batch(
        self, items: Sequence[tuple[str, tuple[int, int], str]], question: str = ""
    ) -> list[tuple[int, int] | None]:
        """For each (claim, contradicted span, evidence): the evidence characters stating the
        right value for the marked span, or None when the pointer says the evidence does not."""
        if not items:
            return []
        texts = [first_segment(marked(c, a, b)[0], question)[0] for c, (a, b), _ in items]
        _, _, ptr, encs = self._forward(texts, [e for _, _, e in items], pointers=True)
        out: list[tuple[int, int] | None] = []
        for (s, e), enc in zip(ptr, encs, strict=True):
            if s <= 0 or e < s or enc.sequence_ids[s] != 1 or enc.sequence_ids[e] != 1:
                out.append(None)
                continue
            a, b = enc.offsets[s][0], enc.offsets[e][1]
            out.append((a, b) if b > a else None)
        return out


def _softmax(x: np.ndarray) -> np.ndarray:
    """Along the last axis, in float32 like ``torch.softmax`` of the float logits."""
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def load_network(path: Path, device: str = "cpu", quantize: str = "none"):
    """The span network in ``path`` (the judge's, or a reader trained from it) and its
    tokenizer: the int8 ONNX graph (built into the cache on first use) or the torch one."""
    return _load_int8(path) if quantize == "int8" else _load(path, device)


def _load_int8(path: Path):
    """The int8 ONNX network (``span_onnx``, built into the cache on first use) and the
    tokenizer."""
    from tokenizers import Tokenizer

    from editor.attribution.span_onnx import OnnxSpanNetwork, cached_model
    from retrieval.settings import Settings

    if not (path / MANIFEST).is_file():
        _load(path, "cpu")  # its error names what is missing
    model_file = cached_model(path, Settings().cache_dir)
    network = OnnxSpanNetwork(model_file)
    return network, Tokenizer.from_file(str(path / "tokenizer.json"))


def _load(path: Path, device: str):
    from safetensors import safe_open
    from safetensors.torch import load_file
    from tokenizers import Tokenizer

    from editor.attribution.hf import _base_folder

    if not (path / MANIFEST).is_file():
        raise FileNotFoundError(
            f"{path}: no span judge here ({MANIFEST} missing); train one with "
            "python -m training.fit.span_train or use the shipped one (leave the path unset)"
        )
    manifest = json.loads((path / MANIFEST).read_text("utf-8"))
    config = json.loads((path / "config.json").read_text("utf-8"))
    model = build_model({k: v for k, v in config.items() if k != "architectures"})
    state = {}
    for name in manifest["shards"]:
        state.update({k: v.float() for k, v in load_file(str(path / name)).items()})
    base = Path(_base_folder(manifest["base"])) / "model.safetensors"
    with safe_open(str(base), "pt") as f:
        for name in manifest["frozen"]:
            state[name] = f.get_tensor(name).float()
    missing, unexpected = model.load_state_dict(state, strict=False)
    if [k for k in missing if "position_ids" not in k] or unexpected:
        raise ValueError(
            f"{path} does not fit the span judge: missing {missing[:4]}, "
            f"unexpected {unexpected[:4]}"
        )
    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    return model.to(device).eval(), tokenizer
