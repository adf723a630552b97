"""Attribution-model training: a tiny run (full and LoRA) whose output the attribution loader
reads, evaluation, the CLI, continuing a saved adapter, and the real shared data."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
from helpers import EVIDENCE

from training.data.nli import (
    NLIExample,
    load_nli_sets,
)


def _tiny_cfg(tiny_base, out, **kw):
    from training.fit.attribution import TrainAttributionConfig

    settings = dict(max_length=64, batch_size=4, max_steps=4, eval_every=2, wiki_articles=0)
    settings |= dict(progress=False, device="cpu") | kw
    return TrainAttributionConfig(out=str(out), base=str(tiny_base), **settings)


def _splits(data_dir):
    from training.data.nli import NLISplits

    sets = load_nli_sets(data_dir, max_length=64)
    rows = [r for rows in sets.values() for r in rows]
    return NLISplits(rows[::2], rows[1::2][:24])


def _check_loads(out: Path) -> list[float]:
    from editor.attribution import HFSequenceClassificationNLI

    model = HFSequenceClassificationNLI(str(out), max_length=64)
    scores = model.score_batch([(EVIDENCE, "The tower was completed in 1889."), ("A.", "B.")])
    assert model.label_map == {0: "supported", 1: "contradicted", 2: "not_supported"}
    for s in scores:
        assert s.supported + s.contradicted + s.not_supported == pytest.approx(1.0, abs=1e-5)
    return [s.supported for s in scores]


def test_tiny_full_training_writes_a_loadable_model(tiny_base, data_dir, tmp_path):
    from training.fit.attribution import train_attribution

    result = train_attribution(_tiny_cfg(tiny_base, tmp_path / "full"), _splits(data_dir))
    out = result.out
    assert result.steps == 4 and result.best_step in (2, 4)
    for name in (
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "training_config.json",
        "metrics.json",
    ):
        assert (out / name).is_file(), name
    metrics = json.loads((out / "metrics.json").read_text())
    assert [h["step"] for h in metrics["history"]] == [2, 4]
    assert 0.0 <= metrics["dev"]["mean_balanced_accuracy"] <= 1.0
    assert json.loads((out / "training_config.json").read_text())["lr"] == 3e-5
    _check_loads(out)


def test_tiny_frozen_embedding_training_saves_a_partial_folder(tiny_base, data_dir, tmp_path):
    from editor.attribution import HFSequenceClassificationNLI
    from training.fit.attribution import train_attribution

    cfg = _tiny_cfg(tiny_base, tmp_path / "partial", freeze_embeddings=True)
    result = train_attribution(cfg, _splits(data_dir))
    manifest = json.loads((result.out / "purr_base.json").read_text())
    assert manifest["base"] == str(tiny_base)
    assert manifest["frozen"] == ["bert.embeddings.word_embeddings.weight"]
    assert not (result.out / "model.safetensors").exists()
    model = HFSequenceClassificationNLI(str(result.out), max_length=64)
    s = model.score_batch([(EVIDENCE, "The tower was completed in 1889.")])[0]
    assert s.supported + s.contradicted + s.not_supported == pytest.approx(1.0, abs=1e-5)


def test_tiny_lora_training_saves_small_adapter_folder(tiny_base, data_dir, tmp_path):
    from editor.attribution.base import build
    from editor.config import AttributionConfig
    from training.fit.attribution import train_attribution

    out = train_attribution(
        _tiny_cfg(tiny_base, tmp_path / "lora", lora=True, lora_r=4), _splits(data_dir)
    ).out
    assert (out / "adapter_config.json").is_file() and not (out / "model.safetensors").exists()
    assert all(p.stat().st_size < 20 * 1024 * 1024 for p in out.iterdir())
    first = _check_loads(out)
    assert _check_loads(out) == first  # the head comes from the adapter, not a fresh init
    model = build(AttributionConfig(type="purr", model=str(out), max_length=64))
    assert model.score("A.", "B.").supported == pytest.approx(first[1], abs=1e-6)


def test_eval_writes_metrics_and_chart(tiny_base, data_dir, tmp_path):
    from training.eval.attribution import run_eval
    from training.fit.attribution import train_attribution

    out = train_attribution(_tiny_cfg(tiny_base, tmp_path / "m"), _splits(data_dir)).out
    report = run_eval(
        str(out),
        tmp_path / "eval",
        data_dir=data_dir,
        limit=6,
        max_length=64,
        device="cpu",
        progress=False,
    )
    metrics = report["metrics"]
    assert 0.0 <= metrics["mean/balanced_accuracy"] <= 1.0
    assert metrics["throughput/pairs_per_s"] > 0
    assert (tmp_path / "eval" / "metrics.json").is_file()
    assert (tmp_path / "eval" / "metrics.png").stat().st_size > 1000


def test_cli_parser_and_errors(tmp_path):
    from serve.cli.common import add_common
    from serve.cli.train import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command", required=True), add_common)
    args = parser.parse_args(
        [
            "train",
            "attribution",
            "--out",
            str(tmp_path),
            "--lora",
            "--max-steps",
            "3",
            "--data-dir",
            str(tmp_path / "none"),
        ]
    )
    assert args.lora and args.max_steps == 3 and args.base == "packaged:all-minilm-l6-v2"
    with pytest.raises(ValueError, match="--data-dir"):
        args.handler(args)
    from serve.cli import build_parser

    args = build_parser().parse_args(
        ["eval", "attribution", "--model", "nothing-here", "--out", "x"]
    )
    with pytest.raises(ValueError, match="--model"):
        args.handler(args)
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "attribution", "--out", "x", "--max-steps", "0"])


def _continue_splits():
    from training.data.nli import NLISplits

    labels = ("supported", "contradicted", "not_supported")
    rows = [
        NLIExample(f"r{i}", "scifact", EVIDENCE, f"Claim {i}.", labels[i % 3], f"g{i}")
        for i in range(12)
    ]
    return NLISplits(rows[:8], rows[8:])


def test_init_adapter_continues_from_the_saved_weights(tiny_base, tmp_path):
    from editor.attribution.hf import HFSequenceClassificationNLI
    from training.fit.attribution import train_attribution

    def scores(out):
        model = HFSequenceClassificationNLI(str(out), max_length=64)
        return model._batched([(EVIDENCE, "It dates from 1889.")])

    lora = dict(lora=True, lora_r=4)
    first = train_attribution(_tiny_cfg(tiny_base, tmp_path / "a", **lora), _continue_splits()).out
    # lr tiny: the continued model must start where the saved one ended, not from scratch
    cont = _tiny_cfg(tiny_base, tmp_path / "b", init_adapter=str(first), lr=1e-9, **lora)
    second = train_attribution(cont, _continue_splits()).out
    assert np.abs(scores(second) - scores(first)).max() < 1e-3
    fresh = _tiny_cfg(tiny_base, tmp_path / "c", lr=1e-9, seed=5, **lora)
    other = train_attribution(fresh, _continue_splits()).out
    assert np.abs(scores(other) - scores(first)).max() > 1e-3  # a fresh head differs
    assert f"--init-adapter {first}" in (second / "README.md").read_text()


def test_init_adapter_and_edit_pairs_errors_name_the_fix(tiny_base, tmp_path):
    from training.fit.attribution import train_attribution

    lora = dict(lora=True, lora_r=4)
    first = train_attribution(_tiny_cfg(tiny_base, tmp_path / "a", **lora), _continue_splits()).out
    out = tmp_path / "b"
    with pytest.raises(ValueError, match="--lora-r 4"):
        _tiny_cfg(tiny_base, out, init_adapter=str(first), lora=True, lora_r=8)
    with pytest.raises(ValueError, match="pass --lora"):
        _tiny_cfg(tiny_base, out, init_adapter=str(first))
    with pytest.raises(ValueError, match="no adapter_config.json"):
        _tiny_cfg(tiny_base, out, init_adapter=str(tmp_path), **lora)
    with pytest.raises(ValueError, match="add summedits"):
        _tiny_cfg(tiny_base, out, edit_pairs=True, sources=["scifact"])


def test_real_shared_nli_files_load(dev_data):
    sets = load_nli_sets(dev_data, limit_per_source=20, max_length=256)
    for name, rows in sets.items():
        assert len(rows) == 20, name
        assert all(r.premise and r.hypothesis and r.group.startswith(name) for r in rows)
        assert all(len(r.premise.split()) <= 200 for r in rows)
    assert np.mean([r.label == "supported" for r in sets["scifact"]]) > 0


class _StopAfter:
    """What ``GracefulStop`` tells a trainer once SIGTERM came: here after ``n`` steps."""

    name = "SIGTERM"

    def __init__(self, n: int) -> None:
        self.left = n

    @property
    def requested(self) -> bool:
        self.left -= 1
        return self.left <= 0


@pytest.mark.parametrize("lora", [False, True])
def test_stopped_training_resumes_exactly_where_it_was(tiny_base, data_dir, tmp_path, lora):
    from training.fit.attribution import train_attribution

    kw = {"max_steps": 8, "lora": lora, "lora_r": 4} if lora else {"max_steps": 8}
    whole = train_attribution(_tiny_cfg(tiny_base, tmp_path / "whole", **kw), _splits(data_dir))
    assert not (whole.out / "resume").exists()  # a finished run keeps no resume state
    cfg = _tiny_cfg(tiny_base, tmp_path / "cut", **kw)
    cut = train_attribution(cfg, _splits(data_dir), stop_signal=_StopAfter(3))
    assert cut.metrics["interrupted"] and cut.steps == 3
    assert (cut.out / "resume" / "state.json").is_file()
    _check_loads(cut.out)  # the best model so far is usable as it is
    on = train_attribution(cfg.model_copy(update={"resume": True}), _splits(data_dir))
    assert on.steps == 8 and not (on.out / "resume").exists()
    # the same steps on the same batches from the same state: the same dev scores
    kept = [h for h in on.metrics["history"] if h["step"] != 3]
    same = json.dumps([h["dev"] for h in whole.metrics["history"]])  # NaN AUCs compare as text
    assert json.dumps([h["dev"] for h in kept]) == same
    assert on.metrics["best_step"] == whole.metrics["best_step"]
    assert _check_loads(on.out) == pytest.approx(_check_loads(whole.out), abs=1e-6)
    with pytest.raises(ValueError, match="nothing to resume"):
        train_attribution(cfg.model_copy(update={"resume": True}), _splits(data_dir))
