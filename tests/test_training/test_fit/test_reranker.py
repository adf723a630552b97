"""``purr train reranker`` end to end on pairs scored by the real teacher: a smaller int8
cross-encoder that ``rerank.model`` loads."""

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import run_purr

from retrieval.assets import resolve
from retrieval.config import RerankConfig
from retrieval.rerank import OnnxCrossEncoder, build_reranker
from training.fit.reranker import student_weights

ROOT = Path(__file__).resolve().parents[3]

# the CLI as a subprocess
pytestmark = pytest.mark.integration

QUERIES = ["Who designed the Eiffel Tower?", "When did Marie Curie win the chemistry prize?"]
PASSAGES = [
    "The Eiffel Tower was designed by the company of engineer Gustave Eiffel.",
    "Marie Curie won the Nobel Prize in Chemistry in 1911.",
    "Bananas are rich in potassium.",
    "Paris is the capital and most populous city of France.",
]


PAIRS = [(q, p) for q in QUERIES for p in PASSAGES] * 3
RECIPE = ["--layers", "0,11", "--batch-size", "8", "--dev-share", "0.5", "--eval-every", "2"]


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    """The pairs scored by the real teacher, as ``purr data rerank-pairs`` writes them."""
    teacher = OnnxCrossEncoder(resolve("packaged:ms-marco-minilm-l12").path)
    logits = teacher.pair_logits(PAIRS)
    path = tmp_path_factory.mktemp("pairs") / "pairs.jsonl"
    path.write_text(
        "".join(
            json.dumps({"query": q, "passage": p, "logit": float(x), "kind": "generated"}) + "\n"
            for (q, p), x in zip(PAIRS, logits, strict=True)
        )
    )
    return path


def test_a_distilled_student_is_written_and_loads_as_the_reranker(rows, tmp_path):
    pairs = PAIRS
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


def test_the_device_kit_trains_without_purr_and_its_weights_export_here(rows, tmp_path):
    kit, back = tmp_path / "kit", tmp_path / "back"
    built = subprocess.run(
        [sys.executable, "-m", "training.fit.reranker_kit", "--pairs", str(rows), "--out", str(kit),
         *RECIPE, "--epochs", "1", "--loss", "listwise", "--temperature", "2"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["pairs"] == len(PAIRS)
    settings = json.loads((kit / "d" / "settings.json").read_text())
    assert (settings["loss"], settings["temperature"]) == ("listwise", 2.0)
    # the kit's run, as on a machine without purr: its own copies of the modules, nothing else
    run = (
        "import runpy, sys; sys.argv = ['x', '--kit', 'd', '--out', sys.argv[1], '--device', "
        "'cpu']; runpy.run_module('training.fit.reranker_fit', run_name='__main__'); "
        "own = {m.split('.')[0] for m in sys.modules}; "
        "assert not own & {'editor', 'retrieval', 'serve', 'pydantic', 'spacy'}, own"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", run, str(back)], capture_output=True, text=True, cwd=kit, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    curve = json.loads((back / "curve.json").read_text())["curve"]
    assert sorted(p.name for p in back.glob("trained-*")) == ["trained-0.safetensors"]
    out = tmp_path / "student"
    r = run_purr(
        "train", "reranker", "--pairs", str(rows), "--out", str(out), *RECIPE,
        "--trained", str(back), "--no-progress",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    # the device's weights, read back here: the same held-out ranking as the device measured
    assert metrics["dev_torch"]["step"] == "device"
    assert metrics["dev_torch"]["top1"] == curve[-1]["top1"]
    assert abs(metrics["dev_torch"]["pearson"] - curve[-1]["pearson"]) < 0.01
    scores = build_reranker(RerankConfig(model=str(out))).scorer.pair_logits(PAIRS[:4])
    assert np.isfinite(scores).all()
    gone = run_purr("train", "reranker", "--pairs", str(rows), "--out", str(tmp_path / "x"),
                    *RECIPE, "--trained", str(tmp_path))  # fmt: skip
    assert gone.returncode != 0 and "curve.json" in gone.stderr
    other = run_purr("train", "reranker", "--pairs", str(rows), "--out", str(tmp_path / "y"),
                     *RECIPE, "--layers", "0,5", "--trained", str(back))  # fmt: skip
    assert other.returncode != 0 and "kept layers [0, 11]" in other.stderr


def test_the_listwise_loss_is_kl_from_the_teacher_per_query_and_ignores_a_shift():
    import torch

    from training.fit.reranker_fit import distil_loss

    target, w = torch.tensor([3.0, 1.0, -2.0, 0.5]), torch.ones(4)
    queries = ["q", "q", "p", "p"]
    out = torch.tensor([0.0, 1.0, 2.0, 0.0])

    def kl(t, s):  # KL(teacher || student) of two softmaxes, by hand
        pt, ps = torch.softmax(t, 0), torch.softmax(s, 0)
        return float((pt * (pt.log() - ps.log())).sum())

    for temperature in (1.0, 2.0):
        a = SimpleNamespace(loss="listwise", temperature=temperature, mse_weight=0.0)
        t = temperature
        want = t * t * (kl(target[:2] / t, out[:2] / t) + kl(target[2:] / t, out[2:] / t)) / 2
        assert float(distil_loss(out, target, w, queries, a)) == pytest.approx(want, rel=1e-5)
    a = SimpleNamespace(loss="listwise", temperature=1.0, mse_weight=0.0)
    assert float(distil_loss(target + 4.0, target, w, queries, a)) == pytest.approx(0, abs=1e-6)
    mse = distil_loss(target + 4.0, target, w, queries, SimpleNamespace(loss="mse"))
    assert float(mse) == pytest.approx(16.0)


def test_training_continues_from_a_saved_student(rows, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    fast = [*RECIPE, "--loss", "listwise", "--lr", "2e-3", "--no-progress"]
    r = run_purr("train", "reranker", "--pairs", str(rows), "--out", str(first), *fast,
                 "--epochs", "3", "--save-trained")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in first.glob("trained*")) == [
        "trained-0.safetensors",
        "trained.json",
    ]
    curve = json.loads((first / "metrics.json").read_text())["curve"]
    assert abs(curve[-1]["pearson"] - curve[0]["pearson"]) > 0.01  # training moved it
    r = run_purr("train", "reranker", "--pairs", str(rows), "--out", str(second), *fast,
                 "--epochs", "1", "--init", str(first))  # fmt: skip
    assert r.returncode == 0, r.stderr
    after = json.loads((second / "metrics.json").read_text())["curve"][0]
    # the second run starts where the first ended, not from the cut teacher
    assert after["step"] == 0 and after["pearson"] == pytest.approx(curve[-1]["pearson"], abs=2e-3)
    from training.data.rerank_pairs import read_pairs
    from training.fit.reranker_fit import split_by_query

    def held(seed):
        return {r.query for r in split_by_query(read_pairs(rows), 0.5, seed)[1]}

    seed = next(s for s in range(1, 50) if held(s) != held(0))  # other held-out queries
    other = run_purr("train", "reranker", "--pairs", str(rows), "--out", str(tmp_path / "o"),
                     *fast, "--seed", str(seed), "--init", str(first))  # fmt: skip
    assert other.returncode != 0 and "held out other queries" in other.stderr
    both = run_purr("train", "reranker", "--pairs", str(rows), "--out", str(tmp_path / "b"),
                    *fast, "--init", str(first), "--trained", str(first))  # fmt: skip
    assert both.returncode != 0 and "--trained" in both.stderr


def test_init_is_refused_without_its_record_or_with_other_layers_and_the_kit_refuses_it(
    rows, tmp_path
):
    from training.fit.reranker import _check_init, pair_rows

    with pytest.raises(ValueError, match="no trained.json"):
        _check_init(tmp_path, [0, 11], "x")
    (tmp_path / "trained.json").write_text(json.dumps({"layers": "0,5", "held_out": "x"}))
    with pytest.raises(ValueError, match="kept layers"):
        _check_init(tmp_path, [0, 11], "x")
    _check_init(tmp_path, [0, 5], "x")  # the same layers and held-out queries: accepted
    a = SimpleNamespace(pairs=str(rows), limit=5, seed=0, whole_queries=True)
    drawn = pair_rows(a)
    per_query = {q: sum(r.query == q for r in drawn) for q in {r.query for r in drawn}}
    assert all(n == len(PASSAGES) * 3 for n in per_query.values())  # every window of a query
    assert [r.query for r in pair_rows(a)] == [r.query for r in drawn]  # the same draw
    kit = subprocess.run(
        [sys.executable, "-m", "training.fit.reranker_kit", "--pairs", str(rows), "--out",
         str(tmp_path / "k"), "--init", str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert kit.returncode != 0 and "no --init" in kit.stderr
