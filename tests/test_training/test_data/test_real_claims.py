"""Human-labelled real claims (WiCE, BEGIN, SummEdits) as edit dev sets, and their scores."""

from __future__ import annotations

import json

from helpers import run_purr

from training.data.real_claims import split_of
from training.eval.claims_metrics import claim_scores


def test_purr_data_real_claims_writes_labelled_rows_split_by_document(dev_data, tmp_path):
    out = tmp_path / "claims"
    done = run_purr("data", "real-claims", "--out", str(out), "--n", "3", "--data", str(dev_data))
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [
        json.loads(x)
        for s in ("dev", "test")
        for x in (out / f"{s}.jsonl").read_text().splitlines()
    ]
    kinds = {(r["dataset"], r["label"]) for r in rows}
    assert kinds == {
        ("wice", "partial"), ("wice", "supported"), ("begin", "supported"),
        ("summedits", "not_supported"), ("summedits", "supported"),
    }  # fmt: skip
    assert len(rows) == 5 * 2 * 3
    for r in rows:
        assert r["text"].strip() and r["evidence"].strip()
        if r["dataset"] == "summedits":
            assert r["split"] == split_of(r["evidence"])
            assert (r["label"] == "not_supported") == ("gold" in r)
        if r["label"] == "partial":
            assert r["unsupported"] and all(w in r["text"] for w in r["unsupported"])


def test_claim_scores_count_harm_to_supported_claims_and_edits_off_the_marked_words():
    rows = [
        {"original": "A won in 1990.", "revised": "A won in 1991.", "label": "supported",
         "dataset": "begin"},
        {"original": "A won in 1990.", "revised": "A won in 1990.", "label": "supported",
         "dataset": "wice"},
        {"original": "B lost in 1980 at home.", "revised": "C lost in 1980 at home.",
         "label": "partial", "unsupported": ["1980"], "dataset": "wice"},
        {"original": "It cost $5.", "revised": "It cost $9.", "label": "not_supported",
         "gold": "It cost $4.", "dataset": "summedits"},
    ]  # fmt: skip
    s = claim_scores(rows)
    assert s["supported_unchanged"] == 0.5
    assert s["edits_on_marked_words"] == 0.0  # it changed 'B', which nobody marked
    assert (s["gold_fixed"], s["gold_closer"], s["gold_further"]) == (0.0, 0.0, 0.0)
    assert s["by_dataset"]["wice"]["supported_unchanged"] == 1.0
