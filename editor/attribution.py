"""Attribution: the NLI model interface, its registry, and auto-AIS over a passage.

auto-AIS (RARR, after Rashkin et al.'s AIS): Attr(y, A) = mean over the sentences s of y of
max over evidence e in A of P(e entails s). Sentences are decontextualised against the passage
and the dialogue context first (``editor.decontext``), and sentences that state nothing
checkable (questions, greetings, remarks about the conversation; ``editor.nlp.is_claim``) are
not applicable: they are reported but left out of the mean.

Models (``editor.nli_hf``, built on ``editor.nli.ChunkedNLI``): ``hf`` (any sequence-
classification NLI model), ``t5-true`` (TRUE-style seq2seq) and ``purr`` (purr's own trained
model, a local folder loaded as ``hf``).

>>> class Overlap:  # a toy model: P(supported) = share of hypothesis words in the premise
...     def score(self, premise, hypothesis):
...         return self.score_batch([(premise, hypothesis)])[0]
...     def score_batch(self, pairs):
...         out = []
...         for p, h in pairs:
...             words = h.lower().strip(".").split()
...             s = sum(w in p.lower() for w in words) / len(words)
...             out.append(EntailmentScores(s, 0.0, 1.0 - s))
...         return out
>>> r = auto_ais("Marie Curie was a physicist. She won two Nobel Prizes. Any questions?",
...              ["Marie Curie was a physicist and chemist.", "Curie won two Nobel Prizes."],
...              Overlap())
>>> for s in r.sentences:
...     print(s.decontextualized, s.applicable, s.attribution and round(s.attribution, 3),
...           s.evidence_index)
Marie Curie was a physicist. True 1.0 0
Marie Curie won two Nobel Prizes. True 0.833 1
Any questions? False None None
>>> round(r.attribution, 4)  # (1.0 + 0.833) / 2; the question is left out
0.9167
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from editor.config import AttributionConfig
from editor.decontext import Decontextualized, decontextualize, decontextualize_passage
from editor.nli import LABELS, ChunkedNLI, canonical_label, infer_label_map, premise_windows
from editor.nli_hf import HFSequenceClassificationNLI, T5TrueNLI
from editor.nlp import get_nlp, is_claim
from editor.registry import Registry
from editor.types import EntailmentScores, Evidence, PassageAttribution, SentenceAttribution
from retrieval.assets import AssetNotFoundError
from retrieval.settings import Settings

if TYPE_CHECKING:
    from spacy.language import Language

__all__ = [
    "LABELS",
    "AttributionModel",
    "ChunkedNLI",
    "EntailmentScores",
    "HFSequenceClassificationNLI",
    "PassageAttribution",
    "SentenceAttribution",
    "T5TrueNLI",
    "auto_ais",
    "available",
    "build",
    "canonical_label",
    "default_purr_path",
    "infer_label_map",
    "premise_windows",
    "register",
]

logger = logging.getLogger(__name__)

PURR_ARTEFACT = "purr-attribution"
"""Folder name of the shipped attribution model (``editor/models/purr-attribution``: a LoRA
adapter and head over the packaged all-MiniLM-L6-v2, with its model card)."""

SHIPPED_MODELS = Path(__file__).resolve().parent / "models"
"""Where the shipped artefacts live; ``attribution.model`` may name one of them by folder name
(``purr-attribution-summaries``: the adapter continued on SummEdits contrast pairs)."""


@runtime_checkable
class AttributionModel(Protocol):
    """Scores whether a premise (evidence) attributes a hypothesis (a claim)."""

    def score(self, premise: str, hypothesis: str) -> EntailmentScores:
        """Scores of one pair."""
        ...

    def score_batch(self, pairs: Sequence[tuple[str, str]]) -> list[EntailmentScores]:
        """Scores of each (premise, hypothesis) pair, in input order."""
        ...


# -- registry ---------------------------------------------------------------------------------

AttributionFactory = Callable[[AttributionConfig, Settings], AttributionModel]

_MODELS: Registry[AttributionFactory] = Registry("attribution model type", "attribution.type")


def register(name: str, factory: AttributionFactory) -> None:
    """Make ``factory(cfg, settings)`` buildable as ``attribution.type=name``; refuses duplicates."""
    _MODELS.register(name, factory)


def available() -> list[str]:
    """Types that ``build`` accepts."""
    return _MODELS.available()


def build(cfg: AttributionConfig, settings: Settings | None = None) -> AttributionModel:
    """The attribution model of ``cfg.type``. Nothing is loaded until the first score."""
    return _MODELS.get(cfg.type)(cfg, settings or Settings())


def default_purr_path(settings: Settings | None = None) -> Path:
    """The attribution model used when ``attribution.model`` is unset: the one shipped with
    purr. (``settings`` is accepted for symmetry with the other factories.)"""
    return SHIPPED_MODELS / PURR_ARTEFACT


def _hf(cfg: AttributionConfig, settings: Settings) -> AttributionModel:
    assert cfg.model is not None  # AttributionConfig refuses type=hf without a model
    return HFSequenceClassificationNLI(
        cfg.model,
        label_map=cfg.label_map,
        max_length=cfg.max_length,
        batch_size=cfg.batch_size,
        overlap=cfg.overlap,
        device=cfg.device,
        local_files_only=settings.offline,
        quantize=cfg.quantize,
    )


def _t5_true(cfg: AttributionConfig, settings: Settings) -> AttributionModel:
    assert cfg.model is not None  # AttributionConfig refuses type=t5-true without a model
    return T5TrueNLI(
        cfg.model,
        max_length=cfg.max_length,
        batch_size=cfg.batch_size,
        overlap=cfg.overlap,
        device=cfg.device,
        local_files_only=settings.offline,
    )


def _purr(cfg: AttributionConfig, settings: Settings) -> AttributionModel:
    path = Path(cfg.model).expanduser() if cfg.model else default_purr_path(settings)
    if not path.exists() and (SHIPPED_MODELS / path / "config.json").is_file():
        path = SHIPPED_MODELS / path  # a shipped artefact by name: purr-attribution-summaries
    if not (path / "config.json").is_file():
        raise AssetNotFoundError(
            f"the trained attribution model is not at {path} (no config.json); train it with the "
            "attribution trainer in training/, set attribution.model to the folder it wrote, or "
            "use attribution.type=hf / t5-true with attribution.model=HUB_ID_OR_PATH"
        )
    return HFSequenceClassificationNLI(
        str(path),
        label_map=cfg.label_map,
        max_length=cfg.max_length,
        batch_size=cfg.batch_size,
        overlap=cfg.overlap,
        device=cfg.device,
        local_files_only=True,
        quantize=cfg.quantize,
    )


register("hf", _hf)
register("t5-true", _t5_true)
register("purr", _purr)


# -- auto-AIS ---------------------------------------------------------------------------------


def auto_ais(
    passage: str | Sequence[str],
    evidence: Sequence[str | Evidence],
    model: AttributionModel,
    *,
    context: str | None = None,
    threshold: float = 0.5,
    nlp: Language | None = None,
) -> PassageAttribution:
    """auto-AIS of ``passage`` (a text, or its sentences) against ``evidence``.

    Each sentence is decontextualised against the sentences before it and the dialogue
    ``context``; applicable sentences (``is_claim``) get max over the evidence of
    P(supported), the others are reported with ``attribution=None``. The passage score is
    the mean over applicable sentences, None when there are none. With no evidence every
    applicable sentence scores 0.0. All (evidence, sentence) pairs go to
    ``model.score_batch`` in one call; the model batches them.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    nlp = nlp or get_nlp()
    if isinstance(passage, str):
        decon = decontextualize_passage(passage, context, nlp=nlp)
    else:
        decon = _decontextualize_sentences(list(passage), context, nlp)
    applicable = [is_claim(doc) for doc in nlp.pipe([d.original for d in decon])]
    texts = [e if isinstance(e, str) else e.text for e in evidence]
    claims = [d.decontextualized for d, ok in zip(decon, applicable, strict=True) if ok]
    pairs = [(e, claim) for claim in claims for e in texts]
    scores = model.score_batch(pairs) if pairs else []
    if len(scores) != len(pairs):
        raise ValueError(f"model returned {len(scores)} scores for {len(pairs)} pairs")
    records: list[SentenceAttribution] = []
    k = 0  # index of the current claim's first pair in ``scores``
    for d, ok in zip(decon, applicable, strict=True):
        if not ok:
            records.append(SentenceAttribution(d.original, d.decontextualized, False, None, None))
            continue
        supported = [s.supported for s in scores[k : k + len(texts)]]
        k += len(texts)
        best = max(range(len(supported)), key=supported.__getitem__) if supported else None
        value = supported[best] if best is not None else 0.0
        records.append(
            SentenceAttribution(
                d.original, d.decontextualized, True, value, best, value >= threshold
            )
        )
    values = [r.attribution for r in records if r.attribution is not None]
    passage_score = sum(values) / len(values) if values else None
    return PassageAttribution(tuple(records), passage_score, threshold)


def _decontextualize_sentences(
    sentences: list[str], context: str | None, nlp: Language
) -> list[Decontextualized]:
    """Sentences given one by one, each decontextualised against those before it."""
    for i, s in enumerate(sentences):
        if not isinstance(s, str):
            raise ValueError(f"sentence {i} must be a str, got {type(s).__name__}")
    return [
        decontextualize(s, " ".join(sentences[:i]), context, nlp=nlp)
        for i, s in enumerate(sentences)
    ]
