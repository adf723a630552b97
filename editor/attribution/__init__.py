"""The attribution stage (the verifier): NLI models behind one Protocol and their registry
(auto-AIS over a passage, a metric of their scores, is ``editor.report.auto_ais``; the claims
they read, slots, places and answers, are ``editor.claims``).

Contract: ``base.py``. Models: ``nli.py`` (``ChunkedNLI``, long premises in windows), ``hf.py``
(``hf`` and ``t5-true``), ``minicheck.py`` (``minicheck-t5``, ``llm-check``, ``llm-check-vllm``),
``factories.py`` (building them by name).
"""

from __future__ import annotations

from editor.attribution.base import AttributionModel, adjust_every, available, build, register
from editor.attribution.factories import (
    PURR_ARTEFACT,
    SHIPPED_MODELS,
    _hf,
    _llm_check_transformers,
    _llm_check_vllm,
    _minicheck_t5,
    _purr,
    _t5_true,
    default_purr_path,
)
from editor.attribution.hf import HFSequenceClassificationNLI, T5TrueNLI
from editor.attribution.nli import (
    LABELS,
    ChunkedNLI,
    canonical_label,
    infer_label_map,
    premise_windows,
)
from editor.attribution.recalibration import recalibrate
from editor.types import EntailmentScores, PassageAttribution, SentenceAttribution

register("hf", _hf)
register("t5-true", _t5_true)
register("purr", _purr)
register("minicheck-t5", _minicheck_t5)
register("llm-check", _llm_check_transformers)
register("llm-check-vllm", _llm_check_vllm)
adjust_every(recalibrate)

__all__ = [
    "LABELS",
    "PURR_ARTEFACT",
    "SHIPPED_MODELS",
    "AttributionModel",
    "ChunkedNLI",
    "EntailmentScores",
    "HFSequenceClassificationNLI",
    "PassageAttribution",
    "SentenceAttribution",
    "T5TrueNLI",
    "available",
    "build",
    "canonical_label",
    "default_purr_path",
    "infer_label_map",
    "premise_windows",
    "register",
]
