"""The attribution stage's contract: the ``AttributionModel`` Protocol and its registry."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from editor.config import AttributionConfig
from editor.registry import Registry
from editor.types import EntailmentScores
from retrieval.settings import Settings

log = logging.getLogger(__name__)

CONTRADICTED_MIN = 0.7
"""P(contradicted) a judgement needs (above P(supported) too) to count as a contradiction when
no slot check names the span the evidence states otherwise: the agreement gate's default, the
report's ``contradicted`` verdict and ``purr eval slots``. At 0.5 the fused verifier called
20-22% of the supported claims of SciFact and SummEdits dev (first 120 rows each) contradicted;
at 0.7, 2.4% and 0%."""


@runtime_checkable
class AttributionModel(Protocol):
    """Scores whether a premise (evidence) attributes a hypothesis (a claim)."""

    def score(self, premise: str, hypothesis: str) -> EntailmentScores:
        """Scores of one pair."""
        ...

    def score_batch(self, pairs: Sequence[tuple[str, str]]) -> list[EntailmentScores]:
        """Scores of each (premise, hypothesis) pair, in input order."""
        ...


AttributionFactory = Callable[[AttributionConfig, Settings], AttributionModel]

_MODELS: Registry[AttributionFactory] = Registry("attribution model type", "attribution.type")

register = _MODELS.register
"""Make ``factory(cfg, settings)`` buildable as ``attribution.type=name``; refuses duplicates."""

available = _MODELS.available
"""The names ``build`` accepts."""


def build(cfg: AttributionConfig, settings: Settings | None = None) -> AttributionModel:
    """The attribution model of ``cfg.type`` (recalibrated by ``cfg.calibration`` when set).
    Nothing is loaded until the first score."""
    model = _MODELS.get(cfg.type)(cfg, settings or Settings())
    if cfg.gather:
        windows = getattr(model, "nli", model)  # a fused verifier reads through its NLI model
        if not hasattr(windows, "gather"):
            raise ValueError(
                f"attribution.gather needs a model that reads premises in windows; "
                f"{type(windows).__name__} does not: set attribution.gather=false"
            )
        windows.gather = True
    if cfg.calibration:
        from editor.attribution.recalibration import Recalibrated, Recalibration, verifier_of

        calibration = Recalibration.load(cfg.calibration)
        if calibration.verifier and calibration.verifier != verifier_of(cfg):
            log.warning(
                "attribution.calibration %s was fitted for %s, not %s: refit it with purr "
                "train calibration",
                cfg.calibration,
                calibration.verifier,
                verifier_of(cfg),
            )
        model = Recalibrated(model, calibration)
    return model
