"""``purr eval reader_layers``: what the reader's 8-bit graph costs, layer by layer.

The reader runs as the span judge's int8 ONNX graph (``editor.attribution.span_onnx``: every
linear layer's weight in 8-bit blocks of 32). This builds, from the reader's own weights, the
fp32 graph, the all-int8 graph and, for each encoder layer, a graph with only that layer's
linear weights in 8 bits (``--layers``), and reads XQuAD English (``--limit`` questions) with
each. A layer whose own quantisation costs more F1 than ``--tolerance`` is one to keep at fp32;
``layers.png`` draws the cost per layer against the all-int8 cost.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from training.args import option
from training.eval.base import Evaluation

EVALUATION = Evaluation(
    name="reader_layers",
    help="the reader's XQuAD F1 at fp32, all-int8 and with each encoder layer alone in int8",
    primary="int8_cost",
)
_LAYER = re.compile(r"encoder\.layer\.(\d+)\.")


def layer_nodes(graph: Any) -> dict[int, list[str]]:
    """The names of the ``MatMul`` nodes of each encoder layer of an fp32 graph, by the name
    of the weight they read (``...encoder.layer.K...``)."""
    out: dict[int, list[str]] = {}
    weights = {i.name for i in graph.graph.initializer}
    for node in graph.graph.node:
        if node.op_type != "MatMul":
            continue
        for name in node.input:
            m = _LAYER.search(name)
            if m and name in weights:
                out.setdefault(int(m.group(1)), []).append(node.name)
    return out


def quantized(fp32: Path, out: Path, only: list[str] | None = None) -> Path:
    """``fp32`` with its linear weights in 8-bit blocks (the shipped recipe), all of them or
    ``only`` these nodes."""
    import logging

    import onnx
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        DefaultWeightOnlyQuantConfig,
        MatMulNBitsQuantizer,
    )

    from editor.attribution.span_onnx import RECIPE

    logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer").setLevel(logging.WARNING)
    graph = onnx.load(str(fp32))
    exclude = None
    if only is not None:
        keep = set(only)
        exclude = [n.name for n in graph.graph.node if n.op_type == "MatMul" and n.name not in keep]
    config = DefaultWeightOnlyQuantConfig(
        block_size=RECIPE["block_size"],
        is_symmetric=True,
        accuracy_level=RECIPE["accuracy_level"],
        bits=RECIPE["bits"],
    )
    q = MatMulNBitsQuantizer(graph, nodes_to_exclude=exclude, algo_config=config)
    q.process()
    q.model.save_model_to_file(str(out), use_external_data_format=False)
    return out


def f1_of(model_file: Path, folder: Path, rows: list[Any]) -> float:
    """XQuAD F1 of the reader in ``folder`` run as the graph ``model_file``."""
    from tokenizers import Tokenizer

    from editor.attribution.span_onnx import OnnxSpanNetwork
    from editor.reader.extractive import ExtractiveReader
    from training.eval.reader import score_readings

    reader = ExtractiveReader(
        folder,
        network=OnnxSpanNetwork(model_file),
        tokenizer=Tokenizer.from_file(str(folder / "tokenizer.json")),
    )
    readings = []
    for i in range(0, len(rows), 64):
        readings += reader.read_batch([(r.question, r.context) for r in rows[i : i + 64]])
    return score_readings(rows, readings)["f1"]


def plot(report: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    layers = sorted(report["layer_cost"], key=int)
    with plt.rc_context({"figure.figsize": (7, 3.5), "savefig.dpi": 120}):
        fig, ax = plt.subplots()
        ax.bar(layers, [report["layer_cost"][k] for k in layers], color="#4c72b0")
        ax.axhline(report["int8_cost"], color="#c44e52", ls="--", label="all layers int8")
        ax.axhline(report["tolerance"], color="grey", ls=":", label="tolerance")
        ax.set(
            xlabel="encoder layer alone in int8",
            ylabel="F1 lost against fp32",
            title=f"XQuAD English, {report['questions']} questions",
        )
        ax.legend()
        fig.savefig(png, bbox_inches="tight")
    plt.close(fig)


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    from training.eval.reader import reader_args

    reader_args(p)
    option(p, "--limit", int, 400, "XQuAD questions read per graph")
    p.add_argument("--layers", default="all", help="'all' or layer numbers: 0,5,11")
    option(p, "--tolerance", float, 0.3, "F1 a layer may lose before it stays fp32")
    p.add_argument("--out", required=True, help="folder for metrics.json and layers.png")


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval reader_layers``."""
    import onnx
    from tqdm.auto import tqdm

    from editor.attribution.bert_graph import save_graph
    from editor.attribution.bert_weights import folder_weights
    from editor.reader.extractive import default_path
    from training.data.reader import load

    folder = Path(args.reader) if args.reader else default_path()
    rows = load("xquad", args.data)[: args.limit or None]
    with tempfile.TemporaryDirectory() as work:
        fp32 = Path(work) / "fp32.onnx"
        save_graph(*folder_weights(folder), "span", fp32)
        nodes = layer_nodes(onnx.load(str(fp32)))
        wanted = sorted(nodes) if args.layers == "all" else [int(x) for x in args.layers.split(",")]
        unknown = [k for k in wanted if k not in nodes]
        if unknown:
            raise SystemExit(
                f"--layers: no encoder layer {unknown}; this reader has {sorted(nodes)}"
            )
        graphs = {"fp32": fp32, "int8": quantized(fp32, Path(work) / "int8.onnx")}
        scores: dict[str, float] = {}
        for name in tqdm([*graphs, *wanted], desc="graphs"):
            if isinstance(name, int):
                model = quantized(fp32, Path(work) / "layer.onnx", nodes[name])
                scores[str(name)] = f1_of(model, folder, rows)
            else:
                scores[name] = f1_of(graphs[name], folder, rows)
    cost = {k: round(scores["fp32"] - v, 2) for k, v in scores.items() if k not in graphs}
    report = {
        "reader": str(folder),
        "questions": len(rows),
        "fp32_f1": scores["fp32"],
        "int8_f1": scores["int8"],
        "int8_cost": round(scores["fp32"] - scores["int8"], 2),
        "layer_cost": cost,
        "tolerance": args.tolerance,
        "keep_fp32": sorted((int(k) for k, c in cost.items() if c > args.tolerance)),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    plot(report, out / "layers.png")
    (out / "metrics.json").write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    return report
