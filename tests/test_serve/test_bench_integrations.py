"""``purr bench integrations`` as a user runs it: the wrappers against ``Pipeline.edit``."""

from __future__ import annotations

import json

import pytest
from helpers import run_purr

pytest.importorskip(
    "langchain_core", reason="the LangChain extra: pip install 'purr-edit[langchain]'"
)
pytest.importorskip(
    "llama_index.core", reason="the LlamaIndex extra: pip install 'purr-edit[llamaindex]'"
)

pytestmark = pytest.mark.integration  # the CLI as a subprocess

ROWS = [
    {
        "sentence": "The Porter X2 can lift 300 kilograms.",
        "evidence": ["The Porter X2, Acme's flagship robot, can lift 150 kilograms."],
    },
    {
        "sentence": "Acme Robotics was founded in 2011 by Maria Lopez.",
        "evidence": "Acme Robotics was founded in 2011 by Maria Lopez in Austin, Texas.",
    },
]


def test_the_bench_reports_each_wrapper_against_the_direct_call(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    out = tmp_path / "bench"
    done = run_purr("bench", "integrations", "--data", str(data), "--runs", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "bench_integrations.json").read_text(encoding="utf-8"))
    assert (out / "bench_integrations.png").stat().st_size > 0
    assert report["rows"] == 2 and report["runs"] == 2
    assert set(report["p50_vs_direct"]) == {"direct", "langchain", "llamaindex"}
    assert report["p50_vs_direct"]["direct"] == 1.0
    assert all(r > 0 for r in report["paired_ratio_p50"].values())
    assert report["rows_edited"] == 1  # the planted figure, not the right sentence
    assert report["rows_whose_result_differs"] == 0


def test_rows_without_evidence_are_a_clear_error(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"text": "No evidence here."}) + "\n", encoding="utf-8")
    done = run_purr("bench", "integrations", "--data", str(data))
    assert done.returncode != 0
    assert "no rows with an answer" in done.stderr
