"""The attribution stage's contract: the ``AttributionModel`` Protocol and its registry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from editor.config import AttributionConfig
from editor.registry import Registry
from editor.types import EntailmentScores
from retrieval.settings import Settings


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

_ADJUSTMENTS: list[Callable[[AttributionModel, AttributionConfig], AttributionModel]] = []


def adjust_every(fn: Callable[[AttributionModel, AttributionConfig], AttributionModel]) -> None:
    """Have ``build`` pass every model it makes through ``fn(model, cfg)`` (registered by the
    package, as the model types are)."""
    if fn not in _ADJUSTMENTS:
        _ADJUSTMENTS.append(fn)


def build(cfg: AttributionConfig, settings: Settings | None = None) -> AttributionModel:
    """The attribution model of ``cfg.type``, through every ``adjust_every`` function (the
    recalibration of ``cfg.calibration``). Nothing is loaded until the first score."""
    model = _MODELS.get(cfg.type)(cfg, settings or Settings())
    if cfg.gather:
        windows = getattr(model, "nli", model)  # a fused verifier reads through its NLI model
        if not hasattr(windows, "gather"):
            raise ValueError(
                f"attribution.gather needs a model that reads premises in windows; "
                f"{type(windows).__name__} does not: set attribution.gather=false"
            )
        windows.gather = True
    for adjust in _ADJUSTMENTS:  # e.g. the domain recalibration (attribution.calibration)
        model = adjust(model, cfg)
    return model
