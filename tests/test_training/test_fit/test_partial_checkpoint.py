"""Full fine-tuning with frozen word embeddings saves only the changed weights (half precision,
in shards under a size cap) over a named base, and the attribution loader reads it back."""

from __future__ import annotations

import json

import pytest
from helpers import save_tiny_bert_nli

from editor.llm.partial import load_partial, save_partial


def test_partial_round_trip_matches_the_trained_model(tmp_path):
    import torch
    from transformers import AutoModelForSequenceClassification

    labels = {0: "supported", 1: "contradicted", 2: "not_supported"}
    base = save_tiny_bert_nli(tmp_path / "base", None)
    tuned = save_tiny_bert_nli(tmp_path / "tuned", labels, seed=3)
    model = AutoModelForSequenceClassification.from_pretrained(tuned)
    with torch.no_grad():  # make the embeddings equal to the base's, as a frozen run keeps them
        base_model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=3)
        model.get_input_embeddings().weight.copy_(base_model.get_input_embeddings().weight)
    paths = save_partial(
        model,
        tmp_path / "out",
        str(base),
        ["bert.embeddings.word_embeddings.weight"],
        max_shard_bytes=20_000,
    )
    assert len(paths) > 1 and all(p.stat().st_size < 60_000 for p in paths)
    loaded = load_partial(AutoModelForSequenceClassification, tmp_path / "out", str(base))
    ids = torch.tensor([[101, 2000, 2001, 102]])
    model.eval()
    with torch.no_grad():
        assert torch.allclose(model(ids).logits, loaded(ids).logits, atol=2e-2)


def test_broken_partial_folders_are_refused(tmp_path):
    from transformers import AutoModelForSequenceClassification

    labels = {0: "supported", 1: "contradicted", 2: "not_supported"}
    base = save_tiny_bert_nli(tmp_path / "base", None)
    tuned = save_tiny_bert_nli(tmp_path / "tuned", labels)
    model = AutoModelForSequenceClassification.from_pretrained(tuned)
    with pytest.raises(ValueError, match="frozen weights \\['nope'\\]"):
        save_partial(model, tmp_path / "bad", "x", ["nope"])
    out = tmp_path / "out"
    save_partial(model, out, str(base), ["bert.embeddings.word_embeddings.weight"])
    manifest = json.loads((out / "purr_base.json").read_text())
    manifest["frozen"] = []  # the embeddings are not in the shards: now they count as missing
    (out / "purr_base.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="does not fit its base"):
        load_partial(AutoModelForSequenceClassification, out, str(base))
    (out / "weights-00001.safetensors").unlink()
    with pytest.raises(ValueError, match="shard weights-00001.safetensors .* is missing"):
        load_partial(AutoModelForSequenceClassification, out, str(base))
