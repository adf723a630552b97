"""Retrieval evaluation and benchmark commands on tiny data (numbers are checked, not timed)."""

import json

import pytest
from helpers import run_purr as purr

from training.eval.retrieval import EvalQuery, evaluate, load_beir


def test_evaluate_on_tiny_index(tiny_index):
    queries = [
        EvalQuery(
            "q1", "When did Marie Curie win the Nobel Prize in Chemistry?", {"marie-curie": 1}
        ),
        EvalQuery("q2", "How long is the Amazon River?", {"amazon-river": 1}),
        EvalQuery("q3", "Who was the first person on the Moon?", {"moon-landing": 1}),
    ]
    report = evaluate(
        tiny_index, queries, ["bm25", "dense", "hybrid", "hybrid+rerank"], progress=False
    )
    for run in ("bm25", "dense", "hybrid", "hybrid+rerank"):
        assert report[run]["recall@5"] == 1.0 and report[run]["ndcg@10"] > 0.9
        assert report[run]["queries"] == 3
    wrong = evaluate(
        tiny_index,
        [EvalQuery("q", "Amazon River length", {"great-wall": 1})],
        ["bm25"],
        progress=False,
    )
    assert wrong["bm25"]["recall@1"] == 0.0


def test_load_beir_accepts_both_row_styles(tmp_path):
    (tmp_path / "q.jsonl").write_text('{"_id": "1", "text": "a"}\n{"_id": "2", "text": "b"}\n')
    (tmp_path / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n1\t 0 d1\t1\n2 0 \td2\t1\n2\td3\t2\n"
    )
    qs = {q.id: q.relevant for q in load_beir(tmp_path / "q.jsonl", tmp_path / "qrels.tsv")}
    assert qs == {"1": {"d1": 1}, "2": {"d2": 1, "d3": 2}}


@pytest.mark.integration
def test_eval_retrieval_command_writes_metrics_and_plot(tmp_path, built_index, resources):
    (tmp_path / "q.jsonl").write_text(json.dumps({"_id": "a", "text": "black tea oxidised"}) + "\n")
    (tmp_path / "qrels.tsv").write_text("a\tguide.md\t1\n")
    r = purr(
        "eval-retrieval",
        "--index",
        str(built_index),
        "--queries",
        str(tmp_path / "q.jsonl"),
        "--qrels",
        str(tmp_path / "qrels.tsv"),
        "--runs",
        "bm25,hybrid",
        "--out",
        str(tmp_path / "out"),
    )
    assert r.returncode == 0, r.stderr
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["runs"]["bm25"]["recall@1"] == 1.0
    assert (tmp_path / "out" / "retrieval.png").stat().st_size > 5000


@pytest.mark.integration
def test_bench_retrieval_command_small(tmp_path):
    r = purr(
        "bench",
        "retrieval",
        "--sizes",
        "500",
        "--queries",
        "5",
        "--repeats",
        "1",
        "--out",
        str(tmp_path),
    )
    assert r.returncode == 0, r.stderr
    report = json.loads((tmp_path / "bench_retrieval.json").read_text())
    row = report["sizes"]["500"]
    assert row["bm25"]["query_ms"]["p50"] > 0 and row["dense"]["index"] == "flat"
    assert row["dense"]["recall@10_vs_exact"] == 1.0  # exact search agrees with brute force
    assert "rank_bm25_query_ms" in row["bm25"]
    assert (tmp_path / "bench_retrieval.png").exists()
