"""``purr eval reader_layers``: the shipped reader's graph at fp32, all-int8 and one layer in
int8, read on a few XQuAD questions."""

from __future__ import annotations

import json
import subprocess
import sys

import onnx

from editor.attribution.bert_graph import save_graph
from editor.attribution.bert_weights import folder_weights
from editor.reader.extractive import default_path
from training.eval.reader_layers import layer_nodes, quantized


def test_each_encoder_layer_names_its_six_linear_layers_and_one_can_be_quantised_alone(tmp_path):
    fp32 = tmp_path / "fp32.onnx"
    save_graph(*folder_weights(default_path()), "span", fp32)
    nodes = layer_nodes(onnx.load(str(fp32)))
    assert sorted(nodes) == list(range(12))
    assert all(len(v) == 6 for v in nodes.values())  # q, k, v, output, intermediate, output
    one = onnx.load(str(quantized(fp32, tmp_path / "one.onnx", nodes[3])))
    assert sum(n.op_type == "MatMulNBits" for n in one.graph.node) == 6


def test_eval_reader_layers_writes_the_cost_of_each_layer(dev_data, tmp_path):
    out = tmp_path / "eval"
    cmd = [sys.executable, "-m", "serve.cli", "eval", "reader_layers", "--data", str(dev_data)]
    cmd += ["--limit", "12", "--layers", "0", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "metrics.json").read_text())
    assert report["questions"] == 12 and list(report["layer_cost"]) == ["0"]
    assert report["fp32_f1"] > 40 and abs(report["int8_cost"]) < 20
    assert (out / "layers.png").stat().st_size > 1000
