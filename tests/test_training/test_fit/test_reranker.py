"""``purr train reranker`` end to end on pairs scored by the real teacher: a smaller int8
cross-encoder that ``rerank.model`` loads."""

import json

import numpy as np
import pytest
from helpers import run_purr

from retrieval.assets import resolve
from retrieval.config import RerankConfig
from retrieval.rerank import OnnxCrossEncoder, build_reranker
from training.fit.reranker import student_weights

# the CLI as a subprocess
pytestmark = pytest.mark.integration

QUERIES = ["Who designed the Eiffel Tower?", "When did Marie Curie win the chemistry prize?"]
PASSAGES = [
    "The Eiffel Tower was designed by the company of engineer Gustave Eiffel.",
    "Marie Curie won the Nobel Prize in Chemistry in 1911.",
    "Bananas are rich in potassium.",
    "Paris is the capital and most populous city of France.",
]


def test_a_distilled_student_is_written_and_loads_as_the_reranker(tmp_path):
    teacher = OnnxCrossEncoder(resolve("packaged:ms-marco-minilm-l12").path)
    pairs = [(q, p) for q in QUERIES for p in PASSAGES] * 3
    logits = teacher.pair_logits(pairs)
    rows = tmp_path / "pairs.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"query": q, "passage": p, "logit": float(x), "kind": "generated"}) + "\n"
            for (q, p), x in zip(pairs, logits, strict=True)
        )
    )
    out = tmp_path / "student"
    r = run_purr(
        "train", "reranker", "--pairs", str(rows), "--out", str(out), "--layers", "0,11",
        "--batch-size", "8", "--dev-share", "0.5", "--eval-every", "2", "--no-progress",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["layers"] == [0, 11] and metrics["rows"]["dev"] > 0
    assert -1 <= metrics["dev_int8"]["pearson"] <= 1 and metrics["pairs_per_s"]["student"] > 0
    assert (out / "fp32" / "model.onnx").exists()
    student = build_reranker(RerankConfig(model=str(out)))
    scores = student.scorer.pair_logits(pairs[:4])
    assert scores.shape == (4,) and np.isfinite(scores).all()


def test_student_weights_keep_and_renumber_the_chosen_layers():
    w = {f"bert.encoder.layer.{i}.w": np.full(1, i) for i in range(4)} | {"classifier.b": 0}
    kept = student_weights(w, [1, 3])
    assert sorted(kept) == ["bert.encoder.layer.0.w", "bert.encoder.layer.1.w", "classifier.b"]
    assert kept["bert.encoder.layer.1.w"][0] == 3
