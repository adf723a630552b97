"""The verifier recalibrated to one domain (``attribution.calibration``).

The verifier's probabilities are calibrated on its training mix. On any one domain they are off
(on the shared dev sets the expected calibration error of P(supported) runs from 0.06 to 0.22),
and 0.5, the threshold the report and ``purr check`` use, is not that domain's best threshold.
A recalibration is Platt scaling of P(supported), ``sigmoid(scale * logit(P) + bias)``, fitted
on labelled (evidence, claim) pairs of the domain (50 to 100 are enough) by the fit the
reranker's relevance uses (``retrieval.rerank.fit_platt``), with smoothed targets:

    purr train calibration --pairs my-pairs.jsonl --out my-domain.json
    purr check TEXT --source ... --set attribution.calibration=my-domain.json

It is monotone, so the verifier's ranking of pairs is unchanged; what moves is where 0.5 falls
and how far each probability can be trusted. P(contradicted) is never raised: a recalibration
cannot make the contradiction rule edit what it would not have edited; it is lowered only where
the new P(supported) leaves it no room.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from editor.types import EntailmentScores
from editor.verdicts import SUPPORTED
from retrieval.rerank import fit_platt

log = logging.getLogger(__name__)

MIN_PAIRS = 20
"""Fewest labelled pairs a recalibration is fitted on."""
_EPS = 1e-6


def logit(p: np.ndarray | float) -> np.ndarray:
    """Log-odds of probabilities, clipped away from 0 and 1.

    >>> logit(np.array([0.5, 1.0])).round(2).tolist()
    [0.0, 13.82]
    """
    q = np.clip(np.asarray(p, dtype=np.float64), _EPS, 1 - _EPS)
    return np.log(q / (1 - q))


@dataclass(frozen=True)
class Recalibration:
    """Platt scaling of P(supported) for one domain, and what it was fitted on."""

    scale: float
    bias: float
    pairs: int = 0
    supported: int = 0
    """how many of the ``pairs`` were labelled supported"""
    verifier: str = ""
    """the verifier it was fitted for (``verifier_of``)"""
    balanced: bool = False
    """fitted with both classes weighed equally (``fit_recalibration``)"""

    def __post_init__(self) -> None:
        if not (math.isfinite(self.scale) and math.isfinite(self.bias)):
            raise ValueError(f"recalibration scale and bias must be finite numbers, got {self}")
        if self.scale <= 0:
            raise ValueError(
                f"recalibration scale must be > 0, got {self.scale:.3g}: the verifier orders "
                "these pairs the wrong way round, so rescaling would invert its judgement; check "
                "the labels (1 or 'supported' = the evidence supports the claim)"
            )

    def p_supported(self, p: np.ndarray | float) -> np.ndarray:
        """Recalibrated P(supported) of the verifier's ``p``."""
        z = np.clip(self.scale * logit(p) + self.bias, -60, 60)
        return 1 / (1 + np.exp(-z))

    def apply(self, scores: EntailmentScores) -> EntailmentScores:
        """``scores`` with P(supported) recalibrated; P(contradicted) kept (lowered only to fit
        beside it), P(not supported) the rest.

        >>> r = Recalibration(1.0, -1.0)
        >>> s = r.apply(EntailmentScores(0.5, 0.2, 0.3))
        >>> round(s.supported, 3), s.contradicted, round(s.not_supported, 3)
        (0.269, 0.2, 0.531)
        """
        p = float(self.p_supported(scores.supported))
        contradicted = min(scores.contradicted, 1.0 - p)
        rest = max(0.0, 1.0 - p - contradicted)
        return replace(scores, supported=p, contradicted=contradicted, not_supported=rest)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "purr-recalibration",
            "scale": self.scale,
            "bias": self.bias,
            "pairs": self.pairs,
            SUPPORTED: self.supported,
            "verifier": self.verifier,
            "balanced": self.balanced,
        }

    @classmethod
    def from_json(cls, raw: Any, where: str = "recalibration") -> Recalibration:
        if not isinstance(raw, dict) or raw.get("kind") != "purr-recalibration":
            raise ValueError(
                f"{where}: not a recalibration (a JSON object with kind 'purr-recalibration'); "
                "make one with purr train calibration --pairs PAIRS --out FILE.json"
            )
        try:
            scale, bias = float(raw["scale"]), float(raw["bias"])
            counts = int(raw.get("pairs", 0)), int(raw.get(SUPPORTED, 0))
            verifier, balanced = str(raw.get("verifier", "")), bool(raw.get("balanced", False))
            return cls(scale, bias, *counts, verifier, balanced)
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{where}: bad recalibration ({e})") from None

    @classmethod
    def load(cls, path: str | Path) -> Recalibration:
        path = Path(path).expanduser()
        if not path.is_file():
            raise ValueError(
                f"attribution.calibration: no such file {path}; fit one with "
                "purr train calibration --pairs PAIRS --out FILE.json, or unset it"
            )
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"attribution.calibration {path}: not readable JSON ({e})") from None
        return cls.from_json(raw, f"attribution.calibration {path}")


def fit_recalibration(
    p: Sequence[float] | np.ndarray, y: Sequence[int] | np.ndarray, balanced: bool = False
) -> Recalibration:
    """The recalibration of the verifier's P(supported) ``p`` to gold ``y`` (1 = supported);
    ``balanced``: to a domain where half the claims are supported, so that 0.5 weighs missed
    support and false support alike (higher balanced accuracy at 0.5 where the domain's
    supported share is far from a half, at the cost of probabilities that match its rate)."""
    p, y = np.asarray(p, dtype=np.float64), np.asarray(y, dtype=np.int64)
    if len(p) != len(y):
        raise ValueError(f"{len(p)} scores but {len(y)} labels")
    positives = int(y.sum())
    if len(y) < MIN_PAIRS or positives == 0 or positives == len(y):
        raise ValueError(
            f"a recalibration needs at least {MIN_PAIRS} labelled pairs with both supported and "
            f"unsupported claims; got {len(y)} pairs, {positives} supported"
        )
    scale, bias = fit_platt(logit(p), y, smooth=True, balanced=balanced)
    return Recalibration(scale, bias, len(y), positives, balanced=balanced)


def verifier_of(cfg: Any) -> str:
    """The verifier an attribution config builds, as a recalibration records it.

    >>> from editor.config import AttributionConfig
    >>> verifier_of(AttributionConfig())
    'purr:packaged default, fusion'
    """
    fused = ", fusion" if getattr(cfg, "fusion", False) and cfg.type == "purr" else ""
    return f"{cfg.type}:{cfg.model or 'packaged default'}{fused}"


def fold_of(group: str, folds: int) -> int:
    """The cross-fitting fold of a split group (a document): stable across runs.

    >>> fold_of("wice:doc:1", 5) == fold_of("wice:doc:1", 5)
    True
    """
    return int(hashlib.sha1(group.encode("utf-8")).hexdigest(), 16) % folds


def cross_fitted(
    p: Sequence[float] | np.ndarray,
    y: Sequence[int] | np.ndarray,
    groups: Sequence[str],
    folds: int = 5,
    balanced: bool = False,
    pairs: int | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Each row's recalibrated P(supported) from a recalibration fitted on the other folds (by
    document, so no document is both fitted and judged): an honest estimate of what a
    recalibration does to pairs it has not seen. ``pairs``: each fit sees only that many of
    the other folds' pairs, drawn at random (``seed``), as a user with fewer labels would."""
    p, y = np.asarray(p, dtype=np.float64), np.asarray(y, dtype=np.int64)
    if folds < 2:
        raise ValueError(f"cross-fitting needs at least 2 folds, got {folds}")
    fold = np.array([fold_of(g, folds) for g in groups])
    rng = np.random.default_rng(seed)
    out = np.empty_like(p)
    for k in range(folds):
        held = fold == k
        if not held.any():
            continue
        fit_on = np.flatnonzero(~held)
        if pairs is not None and pairs < len(fit_on):
            fit_on = rng.choice(fit_on, pairs, replace=False)
        cal = fit_recalibration(p[fit_on], y[fit_on], balanced)
        out[held] = cal.p_supported(p[held])
    return out


def recalibrate(model: Any, cfg: Any) -> Any:
    """``model`` recalibrated by ``cfg.calibration`` (an attribution config), when it names
    one; ``build`` passes every model it makes through this."""
    if not getattr(cfg, "calibration", None):
        return model
    calibration = Recalibration.load(cfg.calibration)
    if calibration.verifier and calibration.verifier != verifier_of(cfg):
        log.warning(
            "attribution.calibration %s was fitted for %s, not %s: refit it with purr train "
            "calibration",
            cfg.calibration,
            calibration.verifier,
            verifier_of(cfg),
        )
    return Recalibrated(model, calibration)


class Recalibrated:
    """An attribution model whose P(supported) goes through a ``Recalibration``. Everything
    else (loading, the NLI model behind a fused verifier, its slot verdicts) is the model's."""

    def __init__(self, model: Any, calibration: Recalibration) -> None:  # an AttributionModel
        self.model = model
        self.calibration = calibration
        if callable(getattr(model, "verify_batch", None)):
            self.verify_batch = self._verify_batch  # the verifier's verdicts, recalibrated

    def __getattr__(self, name: str) -> Any:
        if name == "model":  # not yet set: no recursion
            raise AttributeError(name)
        return getattr(self.model, name)

    def score_batch(self, pairs: Sequence[tuple[str, str]]) -> list[EntailmentScores]:
        if hasattr(self, "verify_batch"):  # the verifier's scores, as its verdicts carry them
            return [v.scores for v in self.verify_batch(pairs)]
        return [self.calibration.apply(s) for s in self.model.score_batch(pairs)]

    def score(self, premise: str, hypothesis: str) -> EntailmentScores:
        return self.score_batch([(premise, hypothesis)])[0]

    def _verify_batch(self, pairs: Sequence[tuple[str, str]]) -> list:
        from editor.attribution.nli import LABELS
        from editor.attribution.verifier import _reason, states_verbatim

        out = []
        for (_, claim), v in zip(pairs, self.model.verify_batch(pairs), strict=True):
            if states_verbatim(v.slot, claim):
                out.append(v)  # the evidence states it word for word: kept as judged
                continue
            s = self.calibration.apply(v.scores)
            label = LABELS[int(np.argmax([s.supported, s.contradicted, s.not_supported]))]
            out.append(replace(v, label=label, scores=s, reason=_reason(label, s, v.nli, v.slot)))
        return out
