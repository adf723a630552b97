"""``purr eval paraphrase`` with the shipped verifier on real dev rows."""

from __future__ import annotations

import json

import pytest
from helpers import run_on_rte

from training.eval.paraphrase import run


def test_written_and_reworded_claims_are_scored_against_the_same_evidence(dev_data, tmp_path):
    report = run_on_rte(run, tmp_path, dev_data)
    m = report["metrics"]
    assert m["all/n"] == m["rte/n"] > 0
    assert 0.0 <= m["all/verdict_flip_rate"] <= 1.0
    assert m["all/mean_abs_change"] >= abs(m["all/mean_change"])
    pairs = [json.loads(line) for line in (tmp_path / "pairs.jsonl").read_text().splitlines()]
    assert len(pairs) == m["all/n"]
    assert all(p["written"] != p["rewritten"] and p["source"] == "rte" for p in pairs)
    flips = sum((p["p_written"] >= 0.5) != (p["p_rewritten"] >= 0.5) for p in pairs)
    assert flips / len(pairs) == pytest.approx(m["all/verdict_flip_rate"])
    assert (tmp_path / "metrics.png").stat().st_size > 1000
