"""The verifier: the NLI model, the slot checks and coverage fused into one calibrated verdict.

``FusedVerifier`` wraps any attribution model. For each (evidence, claim) pair it reads the
NLI scores, the slot check (``editor.claims.slot_check``) and the claim's coverage by the
evidence, and turns them into calibrated probabilities with a fitted ``Fusion``. It is itself an
``AttributionModel`` (``score_batch`` returns the calibrated scores, which sum to 1), so the
agreement gate, edit acceptance, auto-AIS, ``purr data make``'s filter, ``purr score`` and
``/v1/score`` all judge with it once it is built; ``verify_batch`` adds the label and the
reason ("'1895' vs '1887 to 1889'").

One rule of the judge's policy stands above the fusion: evidence that contains the claim word
for word (``editor.policy.states_verbatim``: at least ``VERBATIM_MIN_WORDS`` content words)
supports it, P(supported) at least ``VERBATIM_SUPPORTED``.
The NLI model reads a long window holding the very sentence as a contradiction more often than
chance (its synthetic contradictions are that sentence with one slot changed); string
containment settles the question without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from editor.attribution.base import AttributionModel
from editor.attribution.fusion import Fusion, feature_row
from editor.claims.slot_check import SlotChecker, SlotObservation
from editor.policy import VERBATIM_SUPPORTED
from editor.policy import states_verbatim as _states_verbatim
from editor.text.words import content_words
from editor.types import EntailmentScores
from editor.verdicts import CONTRADICTED, SUPPORTED


@dataclass(frozen=True)
class Verdict:
    """The verifier's judgement of one claim against its evidence, with the reason."""

    label: str
    scores: EntailmentScores
    nli: EntailmentScores
    slot: SlotObservation
    reason: str


class FusedVerifier:
    """``nli`` + slot checks + coverage -> ``fusion`` (see the module doc). Without a fusion
    (``None``) it only computes ``features``, which is what fitting one needs."""

    def __init__(
        self, nli: AttributionModel, fusion: Fusion | None, slots: SlotChecker | None = None
    ) -> None:
        self.nli = nli
        self.fusion = fusion
        self.slots = slots or SlotChecker()

    @property
    def three_way(self) -> bool:
        return True

    def load(self) -> None:
        """Load the NLI model and the slot checks' spaCy pipeline now (first-use work; the
        slot checks' date and unit tables load when a claim first needs them)."""
        load = getattr(self.nli, "load", None)
        if load is not None:
            load()
        self.slots.warm_up()

    def feature_matrix(
        self,
        pairs: Sequence[tuple[str, str]],
        batch: int = 64,
        progress: bool = False,
        desc: str = "fusion features",
    ) -> np.ndarray:
        """``features`` of many pairs, ``batch`` at a time (a progress bar when asked): the
        fusion's (n, features) rows, as fitting and evaluating it read them."""
        from tqdm.auto import tqdm

        from editor.attribution.fusion import FEATURES

        parts = [
            self.features(pairs[i : i + batch])[0]
            for i in tqdm(range(0, len(pairs), batch), desc=desc, disable=not progress, leave=False)
        ]
        return np.concatenate(parts) if parts else np.zeros((0, len(FEATURES)))

    def features(
        self, pairs: Sequence[tuple[str, str]]
    ) -> tuple[np.ndarray, list[EntailmentScores], list[SlotObservation]]:
        """Feature rows (n, features), the NLI scores and the slot verdicts of ``pairs``
        ((premise, hypothesis), as ``score_batch`` takes them)."""
        nli = self.nli.score_batch(pairs) if pairs else []
        verdicts = self.slots.check_batch([(h, p) for p, h in pairs])
        rows = []
        for (premise, hypothesis), s, slot in zip(pairs, nli, verdicts, strict=True):
            words, slots = self.slots.coverage(hypothesis, premise)
            rows.append(
                feature_row(s.supported, s.contradicted, s.not_supported, slot.found, words, slots)
            )
        X = np.asarray(rows, dtype=float).reshape(len(rows), -1)
        return X, nli, verdicts

    def verify_batch(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        """One verdict per (premise, hypothesis) pair, in input order."""
        pairs = list(pairs)
        if not pairs:
            return []
        if self.fusion is None:
            raise ValueError("this verifier has no fusion yet; fit one with purr train fusion")
        X, nli, slots = self.features(pairs)
        P = self.fusion.probabilities(X)
        out = []
        for (_, hypothesis), p, s, slot in zip(pairs, P, nli, slots, strict=True):
            if states_verbatim(slot, hypothesis):
                p = _at_least_supported(p, VERBATIM_SUPPORTED)
            scores = EntailmentScores(
                supported=float(p[0]),
                contradicted=float(p[1]),
                not_supported=float(p[2]),
                chunks=s.chunks,
            )
            label = self.fusion.labels[int(np.argmax(p))]
            out.append(Verdict(label, scores, s, slot, _reason(label, scores, s, slot)))
        return out

    def verify(self, premise: str, hypothesis: str) -> Verdict:
        return self.verify_batch([(premise, hypothesis)])[0]

    def score_batch(self, pairs: Sequence[tuple[str, str]]) -> list[EntailmentScores]:
        return [v.scores for v in self.verify_batch(pairs)]

    def score(self, premise: str, hypothesis: str) -> EntailmentScores:
        return self.verify(premise, hypothesis).scores


def states_verbatim(slot: SlotObservation, hypothesis: str) -> bool:
    """The evidence states the claim word for word, and the claim is long enough for that to
    settle it: such a verdict is supported whatever the NLI model says."""
    return _states_verbatim(bool(slot.verbatim), len(content_words(hypothesis)))


def judge_batch(
    model: AttributionModel, pairs: Sequence[tuple[str, str]]
) -> tuple[list[EntailmentScores], list[SlotObservation | None]]:
    """The scores of (premise, hypothesis) ``pairs`` and, when ``model`` is the verifier, the
    slot verdicts behind them (None for any other attribution model)."""
    pairs = list(pairs)
    if not pairs:
        return [], []
    verify = getattr(model, "verify_batch", None)
    if verify is not None:
        verdicts = verify(pairs)
        return [v.scores for v in verdicts], [v.slot for v in verdicts]
    return list(model.score_batch(pairs)), [None] * len(pairs)


def _at_least_supported(p: np.ndarray, floor: float) -> np.ndarray:
    """``p`` (supported, contradicted, not supported) with P(supported) raised to ``floor``,
    the other two scaled down in proportion.

    >>> _at_least_supported(np.array([0.2, 0.6, 0.2]), 0.96).round(2).tolist()
    [0.96, 0.03, 0.01]
    """
    if p[0] >= floor:
        return p
    rest = p[1:] * ((1.0 - floor) / max(float(p[1:].sum()), 1e-12))
    return np.concatenate([[floor], rest])


def _reason(label: str, p: EntailmentScores, nli: EntailmentScores, slot: SlotObservation) -> str:
    """Why the verdict is what it is, in one line."""
    if label == CONTRADICTED and slot.found == "differs":
        return f"the evidence states otherwise: {slot.reason}"
    if label == CONTRADICTED:
        return f"the NLI model reads the evidence as contradicting it (P={p.contradicted:.2f})"
    if label == SUPPORTED and slot.verbatim:
        return "the evidence states it word for word"
    if label == SUPPORTED:
        extra = f"; {slot.reason}" if slot.found == "matches" else ""
        return f"the evidence entails it (P={p.supported:.2f}){extra}"
    if slot.found == "differs":
        return f"not supported; the slot check disagrees ({slot.reason})"
    return f"the evidence does not state it (P(supported)={p.supported:.2f})"
