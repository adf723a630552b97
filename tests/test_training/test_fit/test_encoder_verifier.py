"""Encoder verifiers over the packaged int8 ONNX encoders: the graph read without the ``onnx``
package, the dequantised MiniLM-L12 and bge-small computing what their ONNX graphs compute, and
a verifier trained from an encoder bundle, loaded by the attribution stage over its packaged
base (dequantised into the cache), scoring as the trainer did."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from editor.attribution.onnx_bert import _tensor, bert_config, dequantize, read_quantized
from retrieval.assets import resolve
from training.data.nli import NLIExample, NLISplits, ids_digest, write_splits

PAIRS = [
    ("Marie Curie won the Nobel Prize in Physics in 1903.", "Curie shared the 1903 physics prize."),
    ("The bridge opened in 1932 after six years of work.", "The bridge opened in 1950."),
    ("Oslo is the capital of Norway.", "Bananas are rich in potassium."),
]


def onnx_file(name: str) -> Path:
    return resolve(f"packaged:{name}").path / "model.onnx"


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def test_a_tensor_is_read_from_its_protobuf_fields_negative_ints_included():
    packed = b"".join(_varint(v) for v in (-3, 5, 127, -128))
    name = b"w_zero_point"
    msg = (
        b"\x08"
        + _varint(2)
        + b"\x08"
        + _varint(2)  # dims 2, 2 (unpacked)
        + b"\x10"
        + _varint(3)  # data_type INT8
        + b"\x2a"
        + _varint(len(packed))
        + packed  # int32_data, packed
        + b"\x42"
        + _varint(len(name))
        + name
    )
    got_name, array = _tensor(memoryview(msg))
    assert got_name == "w_zero_point" and array.dtype == np.int8
    assert array.tolist() == [[-3, 5], [127, -128]]


def test_the_dequantised_ranker_scores_pairs_as_its_onnx_graph():
    import onnxruntime as ort
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    path = onnx_file("ms-marco-minilm-l12")
    weights = dequantize(read_quantized(path))
    assert bert_config(weights, ["x"])["num_hidden_layers"] == 12
    assert weights["bert.encoder.layer.11.output.dense.weight"].shape == (384, 1536)  # (out, in)
    model = BertForSequenceClassification(BertConfig(**bert_config(weights, ["relevant"]))).eval()
    result = model.load_state_dict(
        {k: torch.from_numpy(v) for k, v in weights.items()}, strict=False
    )
    assert not result.missing_keys and not result.unexpected_keys
    enc = AutoTokenizer.from_pretrained(path.parent)(
        [p for p, _ in PAIRS], [h for _, h in PAIRS], padding=True, return_tensors="np"
    )
    session = ort.InferenceSession(str(path))
    feeds = {i.name: enc[i.name].astype(np.int64) for i in session.get_inputs()}
    theirs = session.run(None, feeds)[0][:, 0]
    with torch.no_grad():
        mine = model(**{k: torch.from_numpy(v) for k, v in feeds.items()}).logits[:, 0].numpy()
    # The graph also quantises activations; the weights are the same, so scores agree closely.
    assert np.abs(mine - theirs).max() < 0.1 * np.abs(theirs).max()
    assert np.argsort(mine).tolist() == np.argsort(theirs).tolist()


def test_bge_small_per_channel_scales_give_its_embeddings():
    import onnxruntime as ort
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    path = onnx_file("bge-small-en")
    quantized = read_quantized(path)
    assert any(k.endswith("::zp") and quantized[k].ndim == 1 for k in quantized)  # per channel
    weights = {k.removeprefix("bert."): v for k, v in dequantize(quantized).items()}
    config = bert_config({f"bert.{k}": v for k, v in weights.items()}, ["x"])
    model = BertModel(BertConfig(**config), add_pooling_layer=False).eval()
    model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
    enc = AutoTokenizer.from_pretrained(path.parent)(
        [p for p, _ in PAIRS], return_tensors="np", padding=True
    )
    session = ort.InferenceSession(str(path))
    feeds = {i.name: enc[i.name].astype(np.int64) for i in session.get_inputs()}
    theirs = session.run(None, feeds)[0][:, 0]
    with torch.no_grad():
        mine = model(**{k: torch.from_numpy(v) for k, v in feeds.items()}).last_hidden_state
    mine = mine[:, 0].numpy()
    cos = (mine * theirs).sum(-1) / np.linalg.norm(mine, axis=-1) / np.linalg.norm(theirs, axis=-1)
    assert cos.min() > 0.99


def rows(n: int, prefix: str) -> list[NLIExample]:
    out = []
    for i in range(n):
        wrong = i % 3 == 1
        out.append(
            NLIExample(
                id=f"{prefix}{i}",
                source="scifact" if i % 2 else "wice",
                premise=f"The bridge at Lyon opened in {1900 + i} after six years of work.",
                hypothesis=f"The bridge opened in {1900 + i + (7 if wrong else 0)}.",
                label="contradicted" if wrong else "supported",
                group=f"{prefix}{i}",
            )
        )
    return out


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, NLISplits]:
    from training.fit.encoder_bundle import pack
    from training.fit.encoder_train import main

    tmp = tmp_path_factory.mktemp("encoder")
    splits = NLISplits(train=rows(16, "t"), dev=rows(6, "d"))
    write_splits(splits, tmp / "splits.jsonl")
    teacher = np.full((16, 3), 1 / 3, np.float16)
    np.savez(
        tmp / "teacher.npz", train=teacher, train_ids_sha256=np.array(ids_digest(splits.train))
    )
    bundle = tmp / "bundle"
    bases = {"l12": str(onnx_file("ms-marco-minilm-l12"))}
    tokenizer = Path("editor/models/purr-attribution")
    report = pack(
        tmp / "splits.jsonl",
        tokenizer,
        bundle,
        bases,
        tmp / "teacher.npz",
        max_length=64,
        eval_limit=0,
    )
    assert report == {"train": 16, "dev": 6}
    out = tmp / "model"
    args = ["--bundle", str(bundle), "--base", "l12", "--base-ref", "packaged:ms-marco-minilm-l12"]
    main(
        [
            *args,
            "--out",
            str(out),
            "--lr",
            "1e-3",
            "--max-steps",
            "3",
            "--batch-size",
            "8",
            "--eval-every",
            "2",
            "--patience",
            "9",
            "--distill",
            "0.5",
        ]
    )
    return out, splits


def test_a_teacher_of_other_rows_is_refused(tmp_path):
    from training.fit.encoder_bundle import pack

    splits = NLISplits(train=rows(4, "t"), dev=rows(2, "d"))
    write_splits(splits, tmp_path / "s.jsonl")
    np.savez(tmp_path / "t.npz", train=np.zeros((4, 3)), train_ids_sha256=np.array("0" * 64))
    with pytest.raises(ValueError, match="other rows"):
        pack(
            tmp_path / "s.jsonl",
            Path("editor/models/purr-attribution"),
            tmp_path / "b",
            {},
            tmp_path / "t.npz",
            eval_limit=0,
        )


def test_the_trained_folder_loads_over_its_packaged_base_and_scores_as_the_trainer(trained):
    from editor.attribution import build
    from editor.config import AttributionConfig
    from retrieval.settings import Settings

    out, splits = trained
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["curve"][0]["step"] == 0 and metrics["distill"] == 0.5
    assert "classifier.weight" in metrics["fresh_weights"]  # the ranker's 1-logit head is not used
    manifest = json.loads((out / "purr_base.json").read_text())
    assert manifest["base"] == "packaged:ms-marco-minilm-l12"
    assert manifest["frozen"] == ["bert.embeddings.word_embeddings.weight"]
    settings = Settings()
    model = build(AttributionConfig(type="purr", model=str(out), max_length=64), settings)
    scores = model.score_batch([(r.premise, r.hypothesis) for r in splits.dev])
    mine = np.array([[s.supported, s.contradicted, s.not_supported] for s in scores])
    probs = np.load(out / "probs.npz")["dev"].astype(np.float32)
    np.testing.assert_allclose(mine, probs, atol=5e-3)  # fp16 shards over the same base
    # its graph is written from the shards and the packaged base read directly (no torch)
    assert list((Path(settings.cache_dir) / "models" / "nli-onnx").glob("*/model.onnx"))


def test_the_shipped_medium_verifier_loads_by_name_over_its_packaged_base():
    from editor.attribution import build
    from editor.config import AttributionConfig

    model = build(AttributionConfig(type="purr", model="medium", max_length=128))
    premise = "Maria Sklodowska was born in Warsaw, in the Kingdom of Poland, in 1867."
    born_there, born_elsewhere, unrelated = model.score_batch(
        [
            (premise, "Maria Sklodowska was born in Warsaw."),
            (premise, "Maria Sklodowska was born in Paris."),
            (premise, "Maria Sklodowska won a Nobel Prize in Chemistry."),
        ]
    )
    assert born_there.supported > 0.5 > born_elsewhere.supported
    assert born_elsewhere.contradicted > 0.5
    assert unrelated.supported < 0.5
