"""``purr eval calibration`` with the shipped verifier on real dev rows."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import run_on_rte

from training.eval.calibration import recalibration_metrics, run


def test_metrics_compare_given_and_cross_fitted_probabilities():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    p = np.clip(0.35 + 0.6 * y + rng.normal(0, 0.2, 300), 0.01, 0.99)  # shifted up
    m, recal = recalibration_metrics(p, y, [str(i) for i in range(300)], folds=3)
    assert m["n"] == 300 and m["supported"] == y.sum()
    assert m["ece_recalibrated"] < m["ece_given"]
    assert m["roc_auc_recalibrated"] == pytest.approx(m["roc_auc_given"], abs=0.02)
    assert m["balanced_accuracy_balanced"] >= m["balanced_accuracy_recalibrated"] - 0.02
    for q in recal.values():
        assert q.shape == p.shape and ((q > 0) & (q < 1)).all()


def test_each_set_is_recalibrated_by_fits_on_its_other_documents(dev_data, tmp_path):
    report = run_on_rte(run, tmp_path, dev_data, folds=4)
    m = report["metrics"]
    assert report["sources"] == ["rte"] and m["rte/n"] == 80
    for key in ("ece", "balanced_accuracy", "roc_auc"):
        assert 0.0 <= m[f"rte/{key}_recalibrated"] <= 1.0
        assert m[f"mean/{key}_given"] == m[f"rte/{key}_given"]
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["primary"] == "mean/ece_recalibrated" and saved["folds"] == 4
    assert (tmp_path / "reliability.png").stat().st_size > 1000
    rows = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert len(rows) == 80 and {"p_given", "p_recalibrated", "p_balanced"} <= set(rows[0])
    assert 0.0 <= m["rte/ece_recalibrated_n20"] <= 1.0
