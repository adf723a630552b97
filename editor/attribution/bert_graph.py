"""A BERT network written directly as an fp32 ONNX graph from its numpy weights: no torch.

The graph computes what ``transformers``' ``BertModel`` (eager attention, erf GELU) computes,
with the heads purr uses on top:

- ``sequence``: the pooled [CLS] through ``classifier`` -> ``logits`` (a sequence classifier:
  the verifier);
- ``span``: the span network of ``span_model`` -> ``pair``, ``tokens``, ``start``, ``end``, the
  pointer masked to [CLS] and the evidence tokens as in ``span_model.build_model``.

Linear layers over (batch, length, hidden) are ``MatMul`` + ``Add`` with the weight stored
transposed, the pooler and the pair head ``Gemm``: the layout ``torch.onnx.export`` writes, so
``span_onnx.quantize`` stores the same layers as 8-bit blocks. Inputs ``input_ids``,
``attention_mask``, ``token_type_ids`` (int64, batch and length dynamic). The outputs agree with
the torch network to about 1e-5 (tested).
"""

from __future__ import annotations

from typing import Any

import numpy as np

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
HEADS = {"sequence": ("logits",), "span": ("pair", "tokens", "start", "end")}
_NEG = float(np.finfo(np.float32).min)


class _Graph:
    """Nodes and initializers, named as they are added."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._n = 0

    def const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(np.array(value, order="C"), name))
        return name

    def op(self, kind: str, inputs: list[str], out: str | None = None, **attrs: Any) -> str:
        from onnx import helper

        self._n += 1
        out = out or f"{kind}_{self._n}"
        self.nodes.append(helper.make_node(kind, inputs, [out], name=f"n{self._n}", **attrs))
        return out

    def linear(self, x: str, w: dict[str, np.ndarray], name: str, out: str | None = None) -> str:
        """``x @ W.T + b`` over the last axis (3-d input: MatMul and Add)."""
        weight = self.const(f"{name}.weight.T", w[f"{name}.weight"].T)
        return self.op(
            "Add",
            [self.op("MatMul", [x, weight]), self.const(f"{name}.bias", w[f"{name}.bias"])],
            out,
        )

    def gemm(self, x: str, w: dict[str, np.ndarray], name: str, out: str | None = None) -> str:
        """``x @ W.T + b`` of a 2-d input."""
        weight = self.const(f"{name}.weight", w[f"{name}.weight"])
        return self.op(
            "Gemm", [x, weight, self.const(f"{name}.bias", w[f"{name}.bias"])], out, transB=1
        )

    def lookup(self, w: dict[str, np.ndarray], table: str, ids: str) -> str:
        """Rows of the embedding ``table`` at ``ids``."""
        return self.op("Gather", [self.const(table, w[table]), ids])

    def norm(self, x: str, w: dict[str, np.ndarray], name: str, eps: float) -> str:
        scale = self.const(f"{name}.weight", w[f"{name}.weight"])
        return self.op(
            "LayerNormalization",
            [x, scale, self.const(f"{name}.bias", w[f"{name}.bias"])],
            axis=-1,
            epsilon=eps,
        )


def _layer(g: _Graph, x: str, mask: str, w: dict, i: int, heads: int, eps: float) -> str:
    p = f"bert.encoder.layer.{i}"
    hidden = w[f"{p}.attention.self.query.weight"].shape[0]
    split = g.const(f"{p}.split", np.array([0, 0, heads, hidden // heads], np.int64))
    merge = g.const(f"{p}.merge", np.array([0, 0, hidden], np.int64))

    def project(kind: str, perm: list[int]) -> str:
        y = g.linear(x, w, f"{p}.attention.self.{kind}")
        return g.op("Transpose", [g.op("Reshape", [y, split])], perm=perm)

    q = project("query", [0, 2, 1, 3])  # (batch, heads, length, head_dim)
    k = project("key", [0, 2, 3, 1])  # (batch, heads, head_dim, length)
    v = project("value", [0, 2, 1, 3])
    scale = g.const(f"{p}.scale", np.array(1.0 / np.sqrt(hidden // heads), np.float32))
    scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), mask])
    probs = g.op("Softmax", [scores], axis=-1)  # (batch, heads, length, length)
    ctx = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    ctx = g.op("Reshape", [ctx, merge])  # (batch, length, hidden)
    attn = g.linear(ctx, w, f"{p}.attention.output.dense")
    x = g.norm(g.op("Add", [attn, x]), w, f"{p}.attention.output.LayerNorm", eps)
    h = g.linear(x, w, f"{p}.intermediate.dense")
    root2 = g.const(f"{p}.sqrt2", np.array(np.sqrt(2.0), np.float32))
    half = g.const(f"{p}.half", np.array(0.5, np.float32))
    one = g.const(f"{p}.one", np.array(1.0, np.float32))
    gelu = g.op(
        "Mul", [g.op("Mul", [h, half]), g.op("Add", [g.op("Erf", [g.op("Div", [h, root2])]), one])]
    )
    out = g.linear(gelu, w, f"{p}.output.dense")
    return g.norm(g.op("Add", [out, x]), w, f"{p}.output.LayerNorm", eps)


def build_graph(config: dict, weights: dict[str, np.ndarray], head: str) -> Any:
    """The ``onnx.ModelProto`` of the BERT in ``weights`` (``config``: its ``config.json``)
    with the ``head`` named in ``HEADS``."""
    from onnx import TensorProto, helper

    if head not in HEADS:
        raise ValueError(f"head must be one of {sorted(HEADS)}, got {head!r}")
    if (
        config.get("hidden_act", "gelu") != "gelu"
        or config.get("position_embedding_type", "absolute") != "absolute"
    ):
        raise ValueError("only BERT with erf GELU and absolute positions is built without torch")
    eps = float(config.get("layer_norm_eps", 1e-12))
    g, w = _Graph(), weights
    e = "bert.embeddings"
    length = g.op(
        "Gather",
        [g.op("Shape", ["input_ids"]), g.const("one_index", np.array(1, np.int64))],
        axis=0,
    )
    zero, step = g.const("zero", np.array(0, np.int64)), g.const("step", np.array(1, np.int64))
    positions = g.op("Range", [zero, length, step])  # (length,)
    words = g.lookup(w, f"{e}.word_embeddings.weight", "input_ids")
    types = g.lookup(w, f"{e}.token_type_embeddings.weight", "token_type_ids")
    pos = g.lookup(w, f"{e}.position_embeddings.weight", positions)
    emb = g.op("Add", [g.op("Add", [words, types]), pos])
    x = g.norm(emb, w, f"{e}.LayerNorm", eps)  # (batch, length, hidden)
    keep = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    neg = g.op(
        "Mul",
        [
            g.op("Sub", [g.const("ones", np.array(1.0, np.float32)), keep]),
            g.const("neg", np.array(_NEG, np.float32)),
        ],
    )
    mask = g.op(
        "Unsqueeze", [neg, g.const("mask_axes", np.array([1, 2], np.int64))]
    )  # (batch, 1, 1, length)
    heads = int(config["num_attention_heads"])
    for i in range(int(config["num_hidden_layers"])):
        x = _layer(g, x, mask, w, i, heads, eps)
    first = g.op("Gather", [x, g.const("cls", np.array(0, np.int64))], axis=1)  # (batch, hidden)
    pooled = g.op("Tanh", [g.gemm(first, w, "bert.pooler.dense")])
    if head == "sequence":
        g.gemm(pooled, w, "classifier", "logits")
    else:
        g.gemm(pooled, w, "classifier", "pair")  # (batch, 3)
        g.linear(x, w, "token", "tokens")  # (batch, length, 5)
        pointer = g.linear(x, w, "pointer")  # (batch, length, 2)
        starts, ends = (
            g.op("Gather", [pointer, g.const(f"ptr{j}", np.array(j, np.int64))], axis=2)
            for j in (0, 1)
        )  # (batch, length) each
        one64 = g.const("one64", np.array(1, np.int64))
        evidence = g.op(
            "And",
            [g.op("Equal", ["token_type_ids", one64]), g.op("Equal", ["attention_mask", one64])],
        )
        cls = g.op(
            "Unsqueeze", [g.op("Equal", [positions, zero]), g.const("ax0", np.array([0], np.int64))]
        )
        allowed = g.op("Or", [evidence, cls])  # (batch, length)
        floor = g.const("floor", np.array(_NEG, np.float32))
        g.op("Where", [allowed, starts, floor], "start")
        g.op("Where", [allowed, ends, floor], "end")
    dims = ["batch", "length"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in INPUTS]
    shapes = {"logits": ["batch", None], "pair": ["batch", None], "tokens": [*dims, None]}
    outputs = [
        helper.make_tensor_value_info(n, TensorProto.FLOAT, shapes.get(n, dims))
        for n in HEADS[head]
    ]
    graph = helper.make_graph(g.nodes, f"bert-{head}", inputs, outputs, g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return model


def save_graph(config: dict, weights: dict[str, np.ndarray], head: str, out: Any) -> None:
    """``build_graph`` written to ``out`` (one file: the encoders purr ships are under 2 GB)."""
    import onnx

    onnx.save_model(build_graph(config, weights, head), str(out))
