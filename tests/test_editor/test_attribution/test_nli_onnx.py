"""The attribution classifier run from its ONNX graph (``attribution.runtime: onnx``, the
default): the same tokens and scores as the PyTorch model, built once into the cache, chosen by
the config, and a default edit that imports neither torch nor transformers."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from editor.attribution.factories import _purr, default_purr_path
from editor.attribution.hf import HFSequenceClassificationNLI
from editor.attribution.nli_onnx import MODEL_FILE, OnnxSequenceClassificationNLI, graph_folder
from editor.config import AttributionConfig
from retrieval.settings import Settings

PAIRS = [
    (
        "The Eiffel Tower was built by Gustave Eiffel's company from 1887 to 1889.",
        "It was built by Thomas Edison's company.",
    ),
    ("Paris is the capital of France.", "Paris is the capital of France."),
    ("Marie Curie won the Nobel Prize in 1903 and in 1911. " * 40, "Curie won it in 1911."),
    ("x", "y"),
]


def _scores(model) -> np.ndarray:
    return np.array(
        [[s.supported, s.contradicted, s.not_supported] for s in model.score_batch(PAIRS)]
    )


def test_the_onnx_model_scores_like_the_torch_model_and_tokenises_alike():
    settings = Settings()
    onnx = _purr(AttributionConfig(type="purr", fusion=False), settings)
    torch_model = _purr(AttributionConfig(type="purr", fusion=False, runtime="torch"), settings)
    assert isinstance(onnx, OnnxSequenceClassificationNLI)
    assert isinstance(torch_model, HFSequenceClassificationNLI)
    assert np.abs(_scores(onnx) - _scores(torch_model)).max() < 1e-4
    texts = [p for p, _ in PAIRS] + [h for _, h in PAIRS]
    assert onnx._token_lengths(texts) == torch_model._token_lengths(texts)
    assert onnx._overhead() == torch_model._overhead() == 3
    torch_model.load()
    for premise, hypothesis in PAIRS:  # pair encoding: truncation longest_first, padding
        want = torch_model._tokenizer(
            premise, hypothesis, truncation="longest_first", max_length=128
        )
        got = onnx._net.pairs.encode(premise, hypothesis)
        assert got.ids == want["input_ids"] and got.type_ids == want["token_type_ids"]
    assert onnx.label_map == torch_model.label_map
    assert (graph_folder(default_purr_path(), settings.cache_dir, "none") / MODEL_FILE).is_file()


def test_int8_builds_its_own_graph_and_stays_close():
    settings = Settings()
    cfg = AttributionConfig(type="purr", fusion=False, quantize="int8")
    model = _purr(cfg, settings)
    fp32 = _purr(AttributionConfig(type="purr", fusion=False), settings)
    assert np.abs(_scores(model) - _scores(fp32)).max() < 0.05
    built = json.loads(
        (graph_folder(default_purr_path(), settings.cache_dir, "int8") / "build.json").read_text()
    )
    assert built["quantize"] == "int8"


def test_runtime_torch_and_a_gpu_device_keep_pytorch_and_a_bad_runtime_is_refused():
    settings = Settings()
    for cfg in (
        AttributionConfig(type="purr", runtime="torch", fusion=False),
        AttributionConfig(type="purr", device="cuda", fusion=False),
    ):
        assert isinstance(_purr(cfg, settings), HFSequenceClassificationNLI)
    with pytest.raises(ValueError, match="runtime"):
        AttributionConfig(type="purr", runtime="tensorflow")


def test_a_default_edit_imports_neither_torch_nor_transformers(built_index):
    _purr(AttributionConfig(type="purr"), Settings()).load()  # the graph, built once (torch)
    code = (
        "import sys, json\n"
        "from editor import Components, Pipeline, load_config\n"
        f"p = Pipeline(Components(load_config('default'), index_path={str(built_index)!r}))\n"
        "r = p.edit('The Eiffel Tower was designed by Thomas Edison.')\n"
        "print(json.dumps({'status': r.status, 'mods': sorted(m for m in "
        "('torch', 'transformers', 'sentence_transformers') if m in sys.modules)}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["status"] in {"edited", "unchanged"}
    assert out["mods"] == []
