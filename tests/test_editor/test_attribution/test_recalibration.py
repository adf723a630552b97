"""Recalibrating the verifier to one domain: the fit, its file, the wrapped model, the CLI."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from editor.attribution.base import build
from editor.attribution.recalibration import (
    Recalibrated,
    Recalibration,
    cross_fitted,
    fit_recalibration,
    fold_of,
    logit,
)
from editor.config import AttributionConfig
from editor.policy import VERBATIM_SUPPORTED
from editor.types import EntailmentScores
from retrieval.rerank import fit_platt
from training.eval.attribution_metrics import balanced_accuracy, expected_calibration_error


def _miscalibrated(n: int, seed: int = 0):
    """Gold labels drawn from a true probability q, and a verifier's p that is overconfident and
    shifted: p = sigmoid(2.5 * logit(q) + 3)."""
    rng = np.random.default_rng(seed)
    q = 1 / (1 + np.exp(-rng.normal(0, 1.5, n)))
    y = (rng.random(n) < q).astype(int)
    p = 1 / (1 + np.exp(-(2.5 * logit(q) + 3.0)))
    return p, y


def test_platt_recovers_a_known_scaling():
    rng = np.random.default_rng(1)
    x = rng.normal(0, 2, 6000)
    y = (rng.random(6000) < 1 / (1 + np.exp(-(0.5 * x - 1.0)))).astype(int)
    a, b = fit_platt(x, y, smooth=True)
    assert a == pytest.approx(0.5, abs=0.06)
    assert b == pytest.approx(-1.0, abs=0.1)


def test_cross_fitted_recalibration_lowers_ece_and_moves_the_threshold():
    p, y = _miscalibrated(600)
    groups = [f"doc{i}" for i in range(len(y))]
    recal = cross_fitted(p, y, groups, folds=5)
    assert expected_calibration_error(y, p) > 0.1
    assert expected_calibration_error(y, recal) < 0.05
    assert balanced_accuracy(y, recal) > balanced_accuracy(y, p) + 0.03
    # monotone within each fold: the ranking of the pairs one fit judges is unchanged
    fold = np.array([fold_of(g, 5) for g in groups])
    for k in range(5):
        order = np.argsort(p[fold == k])
        assert np.all(np.diff(recal[fold == k][order]) >= 0)


def test_each_fold_is_judged_by_a_fit_on_the_others():
    p, y = _miscalibrated(200, seed=3)
    groups = [f"doc{i // 2}" for i in range(len(y))]  # two pairs per document
    recal = cross_fitted(p, y, groups, folds=4)
    fold = np.array([fold_of(g, 4) for g in groups])
    held = fold == 2
    expected = fit_recalibration(p[~held], y[~held]).p_supported(p[held])
    assert recal[held] == pytest.approx(expected)
    assert not np.allclose(recal, fit_recalibration(p, y).p_supported(p))
    few = cross_fitted(p, y, groups, folds=4, pairs=30, seed=1)  # 30 of the others' pairs a fit
    assert np.array_equal(few, cross_fitted(p, y, groups, folds=4, pairs=30, seed=1))
    assert not np.allclose(few, recal) and not np.allclose(
        few, cross_fitted(p, y, groups, 4, pairs=30)
    )


def test_a_balanced_fit_puts_half_way_between_the_classes():
    p, y = _miscalibrated(800, seed=5)
    keep = (y == 1) | (np.arange(len(y)) % 4 == 0)  # few unsupported pairs
    p, y = p[keep], y[keep]
    prior, even = fit_recalibration(p, y), fit_recalibration(p, y, balanced=True)
    assert even.balanced and not prior.balanced
    assert balanced_accuracy(y, even.p_supported(p)) > balanced_accuracy(y, prior.p_supported(p))
    assert expected_calibration_error(y, prior.p_supported(p)) < 0.05


@pytest.mark.parametrize(
    "p, y, needle",
    [
        ([0.9] * 10, [1, 0] * 5, "at least 20"),
        ([0.9] * 30, [1] * 30, "both supported and unsupported"),
        (np.linspace(0.01, 0.99, 40), [1] * 20 + [0] * 20, "wrong way round"),
    ],
)
def test_a_fit_that_cannot_be_trusted_is_refused(p, y, needle):
    with pytest.raises(ValueError, match=needle):
        fit_recalibration(p, y)


def test_apply_never_raises_contradicted():
    r = Recalibration(1.0, -2.0)
    for s in (EntailmentScores(0.6, 0.3, 0.1), EntailmentScores(0.05, 0.9, 0.05)):
        out = r.apply(s)
        assert out.supported < s.supported
        assert out.contradicted == s.contradicted
        assert out.supported + out.contradicted + out.not_supported == pytest.approx(1.0)
    up = Recalibration(1.0, 3.0).apply(EntailmentScores(0.5, 0.45, 0.05))
    assert up.supported > 0.9 and up.contradicted <= 1 - up.supported + 1e-12


def test_the_file_round_trips_and_bad_files_say_what_to_do(tmp_path):
    r = Recalibration(0.8, -0.3, 40, 15, "purr:x")
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(r.to_json()))
    assert Recalibration.load(path) == r
    with pytest.raises(ValueError, match="no such file .*purr train calibration"):
        Recalibration.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not readable JSON"):
        Recalibration.load(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text(json.dumps({"scale": 1.0}))
    with pytest.raises(ValueError, match="not a recalibration"):
        Recalibration.load(tmp_path / "other.json")
    (tmp_path / "neg.json").write_text(json.dumps({**r.to_json(), "scale": -1.0}))
    with pytest.raises(ValueError, match="scale must be > 0"):
        Recalibration.load(tmp_path / "neg.json")


PAIRS = [
    ("The Eiffel Tower was completed in 1889 in Paris.", "The Eiffel Tower was completed in 1889."),
    ("The Eiffel Tower was completed in 1889 in Paris.", "The Eiffel Tower is in Berlin."),
    ("Marie Curie was born in Warsaw in 1867.", "Marie Curie was born in Warsaw."),
    ("Marie Curie was born in Warsaw in 1867.", "Marie Curie won an Olympic medal."),
]


def test_the_configured_verifier_is_recalibrated_and_keeps_its_verdicts(tmp_path, caplog):
    path = tmp_path / "cal.json"
    r = Recalibration(0.5, -1.0, 40, 12, "purr:another model")
    path.write_text(json.dumps(r.to_json()))
    plain = build(AttributionConfig())
    with caplog.at_level(logging.WARNING):
        recal = build(AttributionConfig(calibration=str(path)))
    assert isinstance(recal, Recalibrated)
    assert "fitted for purr:another model" in caplog.text
    before, after = plain.score_batch(PAIRS), recal.score_batch(PAIRS)
    for b, a in zip(before, after, strict=True):
        if (
            b.supported == VERBATIM_SUPPORTED
        ):  # the evidence states it word for word: kept as judged
            assert a == b
        else:
            assert a.supported == pytest.approx(float(r.p_supported(b.supported)), abs=1e-6)
        assert a.contradicted <= b.contradicted
    assert sum(b.supported == VERBATIM_SUPPORTED for b in before) == 2
    verdicts = recal.verify_batch(PAIRS)  # the fused verifier's verdicts, recalibrated
    assert [v.scores for v in verdicts] == after
    assert all(v.label in ("supported", "contradicted", "not_supported") for v in verdicts)
    assert type(recal.model) is type(plain) and recal.three_way  # the rest is the model's


def test_purr_train_calibration_writes_a_usable_file(tmp_path, capsys):
    from serve.cli import main

    rows = []
    for i in range(15):
        premise = f"Station {i} opened in {1900 + i} beside the river Ouse in town number {i}."
        for claim, label in (
            (f"Station {i} opened in {1900 + i}.", "supported"),
            (f"Station {i} has a bakery on its roof.", "not_supported"),
        ):
            rows.append({"premise": premise, "hypothesis": claim, "label": label, "doc_id": i})
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "mine.json"
    assert main(["train", "calibration", "--pairs", str(pairs), "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["pairs"] == 30 and summary["use"].endswith(str(out))
    saved = Recalibration.load(out)
    assert saved.pairs == 30 and saved.supported == 15 and saved.verifier.startswith("purr:")
    raw = json.loads(out.read_text())
    assert raw["cross_fitted"]["n"] == 30
    assert out.with_suffix(".png").stat().st_size > 1000
    even = tmp_path / "even.json"
    assert (
        main(["train", "calibration", "--pairs", str(pairs), "--out", str(even), "--balanced"]) == 0
    )
    assert json.loads(capsys.readouterr().out)["cross_fitted"]["ece_balanced"] is not None
    assert Recalibration.load(even).balanced and not saved.balanced
    missing = str(tmp_path / "none.jsonl")
    assert main(["train", "calibration", "--pairs", missing, "--out", str(out)]) == 2
    assert "no such NLI file" in capsys.readouterr().err


def test_edits_are_decided_by_the_verifier_as_trained(tmp_path):
    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline

    path = tmp_path / "cal.json"
    path.write_text(json.dumps(Recalibration(2.0, 1.5).to_json()))
    cfg = load_config("default", [f"attribution.calibration={path}"])
    pipe = Pipeline(Components(cfg, progress=False))
    assert isinstance(pipe.attribution, Recalibrated)  # the report, check and score read it
    assert pipe.reporter.attribution is pipe.attribution
    reviser = pipe.editor
    judge = reviser.judge
    gate = judge.gate
    while hasattr(gate, "inner"):  # the question and reader wrappers
        gate = gate.inner
    for stage in (judge.acceptance, gate):
        assert stage.attribution is pipe.attribution.model
