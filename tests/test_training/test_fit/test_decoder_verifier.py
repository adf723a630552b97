"""The decoder verifier end to end on a tiny random Gemma-3: a GGUF file written from it, the
bundle a GPU machine gets, training from that bundle, and the folder it writes loaded by the
attribution stage (``attribution.model=<folder>``) on the full vocabulary, scoring as the
trainer did."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from editor.attribution import build
from editor.attribution.decoder import DecoderNLI
from editor.attribution.decoder_model import GGUF_TO_HF
from editor.config import AttributionConfig
from retrieval.assets import AssetNotFoundError
from retrieval.settings import Settings
from training.data.nli import NLIExample, NLISplits, write_splits

FACTS = [
    ("The bridge opened in {y} after six years of work.", "The bridge opened in {y}."),
    ("The river floods every spring near {c}.", "The river floods near {c}."),
]


@pytest.fixture(scope="module")
def tiny_gemma(tmp_path_factory) -> Path:
    from llm_helpers import save_tiny_decoder
    from transformers import Gemma3ForCausalLM

    return save_tiny_decoder(
        tmp_path_factory.mktemp("tiny-gemma"),
        Gemma3ForCausalLM,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        max_position_embeddings=512,
        sliding_window=64,
        layer_types=["sliding_attention", "full_attention"],
    )


def write_gguf(model_dir: Path, path: Path) -> None:
    """The model's tensors under GGUF names, norms stored plus one, as llama.cpp writes them."""
    import gguf
    from safetensors.numpy import load_file

    back = {v: k for k, v in GGUF_TO_HF.items()}
    writer = gguf.GGUFWriter(str(path), "gemma3")
    for name, value in sorted(load_file(str(model_dir / "model.safetensors")).items()):
        hf = name.removeprefix("model.")
        if hf == "embed_tokens.weight":
            g = "token_embd.weight"
        elif hf == "norm.weight":
            g = "output_norm.weight"
        else:
            _, i, *mid, _ = hf.split(".")
            g = f"blk.{i}.{back['.'.join(mid)]}.weight"
        writer.add_tensor(g, value + 1.0 if g.endswith("norm.weight") else value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def rows(n: int, prefix: str) -> list[NLIExample]:
    out = []
    for i in range(n):
        premise, claim = FACTS[i % 2]
        y, c = 1900 + i, ["Lyon", "Oslo", "Quito"][i % 3]
        wrong = i % 3 == 1
        out.append(
            NLIExample(
                id=f"{prefix}{i}",
                source="scifact" if i % 2 else "wice",
                premise=premise.format(y=y, c=c),
                hypothesis=claim.format(y=y + 7 if wrong else y, c="Rome" if wrong else c),
                label="contradicted" if wrong else "supported",
                group=f"{prefix}{i}",
            )
        )
    return out


@pytest.fixture(scope="module")
def trained(tiny_gemma, tmp_path_factory) -> tuple[Path, NLISplits]:
    from training.fit.decoder_bundle import pack
    from training.fit.decoder_train import main

    tmp = tmp_path_factory.mktemp("decoder")
    write_gguf(tiny_gemma, tmp / "tiny.gguf")
    splits = NLISplits(train=rows(24, "t"), dev=rows(9, "d"))
    write_splits(splits, tmp / "splits.jsonl")
    report = pack(
        tmp / "splits.jsonl",
        tmp / "tiny.gguf",
        tiny_gemma,
        tmp / "bundle",
        max_length=64,
        eval_sources=(),
        base=str(tiny_gemma),
    )
    assert report["train"] == 24 and report["kept_rows"] < 300  # the vocabulary is cut
    out = tmp / "model"
    main(
        [
            "--bundle",
            str(tmp / "bundle"),
            "--out",
            str(out),
            "--rank",
            "2",
            "--lr",
            "5e-3",
            "--epochs",
            "3",
            "--batch-size",
            "8",
            "--eval-every",
            "3",
            "--patience",
            "9",
        ]
    )
    return out, splits


def test_training_goes_on_from_a_trained_adapter_and_labels_the_rows_it_skips(trained, tmp_path):
    from training.data.nli import ids_digest
    from training.fit.attribution import teacher_targets
    from training.fit.decoder_train import main

    out, splits = trained
    # the first run's labels name their rows (from the bundle) and a student accepts them
    first = np.load(out / "probs.npz")
    assert str(first["train_ids_sha256"]) == ids_digest(splits.train)
    assert len(teacher_targets(str(out / "probs.npz"), splits.train)) == len(splits.train)
    more = tmp_path / "more"
    args = ["--bundle", str(out.parent / "bundle"), "--out", str(more), "--rank", "2"]
    args += ["--lr", "1e-9", "--max-steps", "1", "--eval-every", "1", "--batch-size", "8"]
    main([*args, "--init-adapter", str(out), "--train-exclude", "wice"])
    metrics = json.loads((more / "metrics.json").read_text("utf-8"))
    assert metrics["curve"][0]["step"] == 0 and metrics["steps"] == 1
    assert metrics["train_rows"] == 12  # the 12 wice rows are not trained on...
    probs = np.load(more / "probs.npz")
    assert probs["train"].shape == (24, 3)  # ...but labelled
    # the loaded adapter scores as the one saved (fp16 weights), not as a fresh head
    assert np.abs(probs["dev"].astype(float) - first["dev"].astype(float)).max() < 0.02


def test_the_trained_folder_loads_as_the_attribution_model_and_scores_as_the_trainer(
    trained, tmp_path
):
    out, splits = trained
    assert {"adapter.safetensors", "decoder.json", "metrics.json", "probs.npz"} <= {
        p.name for p in out.iterdir()
    }
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["curve"] and metrics["dev"]["wice/n"] + metrics["dev"]["scifact/n"] == 9
    settings = Settings(cache_dir=tmp_path)
    model = build(AttributionConfig(type="purr", model=str(out)), settings)
    assert isinstance(model, DecoderNLI)
    scores = model.score_batch([(r.premise, r.hypothesis) for r in splits.dev])
    probs = np.load(out / "probs.npz")["dev"].astype(np.float32)
    mine = np.array([[s.supported, s.contradicted, s.not_supported] for s in scores])
    # The trainer scored with the vocabulary cut and fp32 LoRA; the folder holds fp16 LoRA
    # merged into the full-vocabulary base: the same function up to rounding.
    np.testing.assert_allclose(mine, probs, atol=5e-3)
    assert np.ptp(mine[:, 0]) > 1e-3  # the scores depend on the pair


def test_long_evidence_is_scored_in_windows(trained, tmp_path):
    out, _ = trained
    model = DecoderNLI(out, batch_size=4, overlap=0, device="cpu", cache_dir=tmp_path)
    premise = " ".join(f"Sentence {i} says the town grew in {1800 + i}." for i in range(40))
    score = model.score(premise, "The town grew in 1839.")
    assert score.chunks > 1


def test_a_folder_without_its_manifest_or_with_a_foreign_adapter_says_what_to_do(trained, tmp_path):
    out, _ = trained
    with pytest.raises(AssetNotFoundError, match="decoder.json"):
        DecoderNLI(tmp_path, batch_size=4, overlap=0, device="cpu", cache_dir=tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    manifest = json.loads((out / "decoder.json").read_text())
    manifest["lora"]["r"] = 4  # the adapter was trained with r=2
    (broken / "decoder.json").write_text(json.dumps(manifest))
    (broken / "adapter.safetensors").write_bytes((out / "adapter.safetensors").read_bytes())
    model = DecoderNLI(broken, batch_size=4, overlap=0, device="cpu", cache_dir=tmp_path)
    with pytest.raises((AssetNotFoundError, RuntimeError), match="adapter|size mismatch"):
        model.score("A premise.", "A claim.")


def test_int8_scores_close_to_fp32_and_the_bench_measures_both(trained, tmp_path, monkeypatch):
    from training.bench.attribution import bench_attribution

    out, splits = trained
    pairs = [(r.premise, r.hypothesis) for r in splits.dev]
    fp32 = DecoderNLI(out, batch_size=4, overlap=0, device="cpu", cache_dir=tmp_path)
    int8 = DecoderNLI(
        out, batch_size=4, overlap=0, device="cpu", cache_dir=tmp_path, quantize="int8"
    )
    a = np.array([s.supported for s in fp32.score_batch(pairs)])
    b = np.array([s.supported for s in int8.score_batch(pairs)])
    assert np.abs(a - b).max() < 0.05
    with pytest.raises(ValueError, match="quantize"):
        DecoderNLI(out, batch_size=4, overlap=0, device="cpu", cache_dir=tmp_path, quantize="fp8")
    monkeypatch.setenv("PURR_CACHE_DIR", str(tmp_path))
    report = bench_attribution(str(out), [48], n=4, runs=1, batch_size=2)
    row = report["lengths"]["48"]
    assert row["none"]["pairs_per_s"] > 0 and row["int8"]["pairs_per_s"] > 0
    assert row["pairs_per_s_at_peak"] > 0 and report["verifier"] is None
