"""The calibrated verifier: fusion maths, its file, and the fused verdicts over real slot checks
(the NLI side is a small stub with fixed scores, so the fusion's effect is what is tested)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from editor.attribution.fusion import FEATURES, Fusion, feature_row
from editor.attribution.verifier import FusedVerifier
from editor.types import EntailmentScores
from training.eval.attribution_metrics import expected_calibration_error
from training.fit.fusion import fit_temperature, fit_weights


class FixedNLI:
    """Every pair gets the same NLI scores: only the slot checks and coverage differ."""

    def __init__(self, supported: float = 0.6) -> None:
        self.s = EntailmentScores(supported, (1 - supported) / 2, (1 - supported) / 2)

    def score_batch(self, pairs):
        return [self.s for _ in pairs]

    def score(self, premise, hypothesis):
        return self.s


def _slot_trusting_fusion() -> Fusion:
    """Weights that follow the slot verdict and the NLI's P(supported)."""
    W = np.zeros((3, len(FEATURES)))
    W[0, FEATURES.index("logit_supported")] = 2.0
    W[0, FEATURES.index("slot_consistent")] = 2.0
    W[1, FEATURES.index("slot_contradicted")] = 6.0
    W[2, FEATURES.index("word_coverage")] = -2.0
    return Fusion(W=W.tolist(), b=[0.0, -1.0, 0.0])


EVIDENCE = "The company of Gustave Eiffel designed and built the tower from 1887 to 1889."


def test_a_refuted_year_is_contradicted_with_the_spans_in_the_reason():
    v = FusedVerifier(FixedNLI(0.86), _slot_trusting_fusion())
    bad, good = v.verify_batch(
        [
            (EVIDENCE, "Eiffel's company designed and built the tower from 1887 to 1895."),
            (EVIDENCE, "Eiffel's company designed and built the tower from 1887 to 1889."),
        ]
    )
    assert bad.label == "contradicted" and "1895" in bad.reason and "1889" in bad.reason
    assert bad.slot.names_a_difference and not good.slot.names_a_difference
    assert bad.scores.contradicted > 0.7 > bad.scores.supported
    assert good.label == "supported"
    for s in (bad.scores, good.scores):
        assert s.supported + s.contradicted + s.not_supported == pytest.approx(1.0)
    assert v.score_batch([]) == []


def test_fusion_file_round_trip_and_refusals(tmp_path):
    f = _slot_trusting_fusion()
    path = f.save(tmp_path / "fusion.json")
    g = Fusion.load(path)
    X = [feature_row(0.7, 0.2, 0.1, "unsaid", 0.5, 1.0)]
    assert np.allclose(f.probabilities(X), g.probabilities(X))
    raw = json.loads(path.read_text())
    raw["features"] = raw["features"][:-1]
    path.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="refit it"):
        Fusion.load(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not a fusion file"):
        Fusion.load(path)
    with pytest.raises(ValueError, match="temperature"):
        Fusion(W=f.W, b=f.b, temperature=0.0)


def test_fitting_recovers_a_separable_rule_and_temperature_calibrates():
    rng = np.random.default_rng(0)
    n = 600
    y = rng.integers(0, 3, n)
    X = rng.normal(0, 1, (n, len(FEATURES)))
    X[:, FEATURES.index("slot_contradicted")] = (y == 1).astype(float)
    X[:, 0] += 2.0 * (y == 0)
    W, b, mean, scale = fit_weights(X, y, steps=800)
    fusion = Fusion(W=W.tolist(), b=b.tolist(), mean=mean.tolist(), scale=scale.tolist())
    P = fusion.probabilities(X)
    assert (P.argmax(axis=1) == y).mean() > 0.75
    # overconfident logits: temperature > 1 brings the probabilities back in line
    logits = fusion.logits(X) * 5.0
    t = fit_temperature(logits, y)
    assert t > 1.5
    target = (y == 0).astype(int)
    before = expected_calibration_error(target, np.exp(logits[:, 0]) / np.exp(logits).sum(1))
    z = logits / t
    after = expected_calibration_error(target, np.exp(z[:, 0]) / np.exp(z).sum(1))
    assert after < before


def test_evidence_that_states_the_claim_word_for_word_supports_it():
    # an NLI model that reads the window holding the very sentence as a contradiction
    v = FusedVerifier(FixedNLI(0.05), _slot_trusting_fusion())
    claim = "It is named after the engineer Gustave Eiffel."
    evidence = "The Eiffel Tower is in Paris. It is named after the engineer Gustave Eiffel."
    stated, short, paraphrase = v.verify_batch(
        [
            (evidence, claim),
            ("It was. It is. It was built.", "It was built."),  # too few words to say
            (evidence, "The tower bears the name of the engineer Gustave Eiffel."),
        ]
    )
    assert stated.label == "supported" and stated.scores.supported >= 0.97
    assert stated.reason == "the evidence states it word for word"
    assert sum(
        (stated.scores.supported, stated.scores.contradicted, stated.scores.not_supported)
    ) == pytest.approx(1.0)
    assert short.slot.verbatim and short.scores.supported < 0.97
    assert paraphrase.scores.supported < 0.97 and not paraphrase.slot.verbatim
