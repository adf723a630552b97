"""A BERT folder's ONNX graph written from its weights without torch (``bert_graph``,
``bert_weights``): the same numbers as the torch network, and the same weights as
``load_partial``."""

from __future__ import annotations

import json

import numpy as np
import onnxruntime as ort
import pytest
import torch
from helpers import TINY_BERT
from transformers import BertConfig, BertForSequenceClassification, BertModel

from editor.attribution.bert_graph import build_graph, save_graph
from editor.attribution.bert_weights import UnsupportedModel, folder_weights
from editor.attribution.nli_onnx import source_network
from editor.llm.partial import load_partial, save_partial

TINY = {**TINY_BERT, "num_labels": 3}


def _classifier(seed: int = 0) -> BertForSequenceClassification:
    torch.manual_seed(seed)
    model = BertForSequenceClassification(BertConfig(**TINY)).eval()
    for p in model.parameters():  # far from zero: outputs that differ, row to row
        p.data.mul_(3)
    return model


def _batch(lengths: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    ids = np.zeros((len(lengths), max(lengths)), np.int64)
    mask, types = np.zeros_like(ids), np.zeros_like(ids)
    for i, n in enumerate(lengths):
        ids[i, :n] = rng.integers(5, 120, n)
        mask[i, :n] = 1
        types[i, n // 2 : n] = 1
    return ids, mask, types


def _run(path, arrays) -> list[np.ndarray]:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = ("input_ids", "attention_mask", "token_type_ids")
    return session.run(None, dict(zip(names, arrays, strict=True)))


def test_the_sequence_graph_computes_what_the_torch_classifier_does(tmp_path):
    model = _classifier()
    weights = {k: v.numpy() for k, v in model.state_dict().items()}
    save_graph(model.config.to_dict(), weights, "sequence", tmp_path / "g.onnx")
    for lengths in ([7], [30, 12, 3]):
        arrays = _batch(lengths)
        with torch.inference_mode():
            ref = model(*(torch.from_numpy(a) for a in arrays)).logits.numpy()
        (got,) = _run(tmp_path / "g.onnx", arrays)
        assert got.shape == ref.shape
        assert np.abs(got - ref).max() < 1e-4 * max(1.0, np.abs(ref).max())
    # a padded row answers as it does alone
    short = _run(tmp_path / "g.onnx", _batch([12]))[0][0]
    padded = _run(tmp_path / "g.onnx", _batch([12, 30]))[0][0]
    assert np.allclose(short, padded, atol=1e-4)


def test_unknown_heads_and_other_architectures_are_refused():
    model = _classifier()
    weights = {k: v.numpy() for k, v in model.state_dict().items()}
    with pytest.raises(ValueError, match="head must be one of"):
        build_graph(model.config.to_dict(), weights, "tokens")
    with pytest.raises(ValueError, match="erf GELU"):
        build_graph({**model.config.to_dict(), "hidden_act": "relu"}, weights, "sequence")


def test_a_partial_folder_reads_as_load_partial_builds_it(tmp_path):
    base = tmp_path / "base"
    BertModel(BertConfig(**TINY)).save_pretrained(base)  # bare BertModel names, no "bert."
    tuned = _classifier(seed=1)
    frozen = ["bert.embeddings.word_embeddings.weight"]
    save_partial(tuned, tmp_path / "tuned", str(base), frozen)
    config, weights = folder_weights(tmp_path / "tuned")
    ref = load_partial(BertForSequenceClassification, tmp_path / "tuned", str(base)).state_dict()
    ref = {k: v.numpy() for k, v in ref.items() if "position_ids" not in k}
    assert sorted(weights) == sorted(ref)
    for name, value in ref.items():
        assert np.array_equal(weights[name], value), name  # fp16 shards, fp32 base: exact
    assert len(config["id2label"]) == 3


def test_folders_it_cannot_read_fall_back_to_the_torch_network(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "roberta"}))
    with pytest.raises(UnsupportedModel, match="roberta"):
        folder_weights(tmp_path)
    assert source_network(tmp_path, lambda: "torch network") == "torch network"
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(UnsupportedModel, match="neither"):
        folder_weights(tmp_path)  # an adapter folder: no weights of its own


def test_the_shipped_verifier_graph_matches_its_torch_network(tmp_path):
    from editor.attribution.factories import default_purr_path
    from editor.attribution.hf import HFSequenceClassificationNLI
    from editor.attribution.span_model import encode_batch, layout, pad

    folder = default_purr_path()
    config, weights = folder_weights(folder)
    save_graph(config, weights, "sequence", tmp_path / "v.onnx")
    torch_model = HFSequenceClassificationNLI(str(folder)).torch_network()
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    encs = encode_batch(
        tok,
        ["The Vela X1 weighs 4.2 kg.", "Armstrong walked on the Moon first."],
        ["The Vela X1 weighs 2.8 kg. The larger Vela X2 weighs 4.2 kg.", "Armstrong was first."],
        128,
    )
    arrays = pad([np.array(e.ids) for e in encs], [layout(e)[0] for e in encs])
    with torch.inference_mode():
        ref = torch_model(*(torch.from_numpy(a) for a in arrays)).logits.numpy()
    (got,) = _run(tmp_path / "v.onnx", arrays)
    assert np.abs(got - ref).max() < 1e-3
