"""Pipeline (identity editor) and `purr eval` on the tiny index with a tiny NLI model."""

import json

import numpy as np
import pytest
from helpers import CONTRACT_KEYS, save_tiny_bert_nli
from helpers import run_purr as purr

from editor.config import load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from editor.report.selection import coverage, select_evidence


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory):
    return save_tiny_bert_nli(
        tmp_path_factory.mktemp("nli") / "tiny", {0: "entailment", 1: "neutral", 2: "contradiction"}
    )


def _pipeline(tiny_nli, index):
    cfg = load_config("default", ["attribution.type=hf", f"attribution.model={tiny_nli}"])
    return Pipeline(Components(cfg, index_path=index, progress=False))


def test_identity_pipeline_fills_the_result_contract(tiny_nli, built_index):
    pipe = _pipeline(tiny_nli, built_index)
    text = (
        "Marie Curie won the Nobel Prize in Chemistry in 1921. The Eiffel Tower is 330 metres tall."
    )
    result = pipe.edit(text, context="User: tell me two facts")
    data = result.to_json()
    assert set(data) == CONTRACT_KEYS
    assert data["status"] == "unchanged" and data["revised"] == text and len(data["queries"]) == 2
    report = data["report"]
    assert 1 <= len(report["evidence_ids"]) <= 5 and set(report["evidence_ids"]) <= {
        e["id"] for e in data["evidence"]
    }
    assert (
        report["preservation"] == 1.0
        and report["attribution_before"] == report["attribution_after"]
    )
    assert [s["applicable"] for s in report["sentences"]] == [True, True]
    assert all(s["evidence_id"] in report["evidence_ids"] for s in report["sentences"])
    assert set(data["timings_ms"]) == {"prepare", "parse", "research", "revision", "report"}


def test_given_evidence_replaces_research(tiny_nli, built_index):
    result = _pipeline(tiny_nli, built_index).edit(
        "The Amazon is long.", evidence=["The Amazon River is about 6,400 km long."]
    )
    assert [e.id for e in result.evidence] == ["given-0"] and result.report.evidence_ids == (
        "given-0",
    )


def test_missing_index_degrades_with_the_fix(tiny_nli, tmp_path):
    result = _pipeline(tiny_nli, tmp_path / "no-index").edit("The Eiffel Tower is in Paris.")
    assert result.status == "degraded" and result.revised == result.original
    assert "purr index" in result.warnings[0]


def test_evidence_selection_maximises_coverage():
    rng = np.random.default_rng(0)
    rel = rng.random((4, 9))
    best = select_evidence(rel, 3)
    assert len(best) == 3
    from itertools import combinations

    assert coverage(rel, best) == max(coverage(rel, s) for s in combinations(range(9), 3))


@pytest.mark.integration
def test_eval_command_identity_and_oracle_resumable(tiny_nli, built_index, tmp_path):
    rows = [
        {
            "id": "r1",
            "source": "x",
            "original": "The tower was finished in 1899.",
            "gold": "The tower was finished in 1889.",
            "evidence": "The Eiffel Tower was built from 1887 to 1889.",
        },
        {
            "id": "r2",
            "text": "Everest is 8,849 metres high.",
            "reference": "Everest is 8,849 metres high.",
            "evidence": ["Mount Everest's elevation is 8,849 metres."],
        },
        {"id": "r3", "text": "   "},
    ]
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    sets = [
        "--set",
        "attribution.type=hf",
        "--set",
        f"attribution.model={tiny_nli}",
        "--index",
        str(built_index),
    ]
    for editor in ("identity", "oracle"):
        out = tmp_path / editor
        r = purr("eval", str(data), "--out", str(out), "--editor", editor, *sets)
        assert r.returncode == 0, r.stderr
        metrics = json.loads((out / "metrics.json").read_text())
        assert (
            metrics["rows"] == 2 and metrics["primary"] == "f1_ap" and len(metrics["bad_rows"]) == 1
        )
        assert "line 3" in metrics["bad_rows"][0]
        results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
        assert results[0]["source"] == "x"  # other fields carried through
        assert (out / "attribution_vs_preservation.png").exists() and (
            out / "edit_categories.png"
        ).exists()
        if editor == "identity":
            assert metrics["preservation"] == 1.0 and metrics["reference"]["closer_relative"] == 0.0
            assert "attribution_gain" not in metrics  # nothing changed, no gain to report
        else:
            gain = metrics["attribution_gain"]  # over the one changed row
            report = results[0]["report"]
            assert gain["rows"] == 1 and gain["mean"] == pytest.approx(
                report["attribution_after"] - report["attribution_before"], abs=1e-4
            )
            assert (
                results[0]["revised"].endswith("1889.")
                and metrics["reference"]["closer_relative"] == 0.5
            )
            assert metrics["edit_categories"]["unchanged"] == 0.5
            # QA-based factuality: "1899" answered "1889" by the evidence, then fixed
            qa = metrics["mafe"]
            assert qa["rows"] == 2 and qa["precision_after"] > qa["precision_before"]
            assert qa["recall_after"] > qa["recall_before"]
        r = purr(
            "eval", str(data), "--out", str(out), "--editor", editor, *sets
        )  # resume: nothing redone
        assert len((out / "results.jsonl").read_text().splitlines()) == 2
        r = purr(
            "eval", str(data), "--out", str(out), "--editor", editor, *sets,
            "--set", "revision.max_steps=3",
        )  # fmt: skip
        assert r.returncode != 0 and "another configuration" in r.stderr, r.stderr[-800:]
