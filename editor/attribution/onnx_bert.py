"""A trainable BERT from a packaged int8 ONNX encoder (the ranker's MiniLM-L12, bge-small).

The 12-layer encoders purr ships exist only as dynamically quantised ONNX graphs: each linear
layer a ``MatMulInteger`` over an int8 weight with a scale and zero point (per tensor or per
output channel), then an ``Add`` of a named fp32 bias; the embeddings uint8 behind a
``DequantizeLinear``. The weights' names are lost in the graph (``onnx::MatMul_1662``), so each
one is named after the bias its product is added to (``...query.bias`` -> ``...query.weight``)
and stored transposed, the way ``torch.nn.Linear`` keeps it.

``read_quantized`` returns the tensors still quantised (``NAME::q``, ``NAME::scale``,
``NAME::zp``: a third of the bytes, what a device call carries); ``dequantize`` turns that into
float arrays under ``transformers``' ``BertForSequenceClassification`` names. The int8 rounding
stays in the weights: a base to fine-tune from, not the original checkpoint. The graph is read
from its protobuf encoding directly (numpy alone; no ``onnx`` package).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

# ONNX TensorProto data types purr's encoders use -> numpy
_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64, 10: np.float16}


def _varint(buf: memoryview, i: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        b = buf[i]
        out |= (b & 0x7F) << shift
        i += 1
        if b < 0x80:
            return out, i
        shift += 7


def _fields(buf: memoryview):
    """(field number, wire type, value) of one protobuf message; LEN values as memoryviews."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 1:
            value, i = buf[i : i + 8], i + 8
        elif wire == 2:
            n, i = _varint(buf, i)
            value, i = buf[i : i + n], i + n
        elif wire == 5:
            value, i = buf[i : i + 4], i + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}: not an ONNX model")
        yield field, wire, value


def _ints(wire: int, value) -> list[int]:
    """A repeated integer field, packed or not, as signed ints."""
    if wire == 0:
        vals = [value]
    else:
        vals, i = [], 0
        while i < len(value):
            v, i = _varint(value, i)
            vals.append(v)
    return [v - (1 << 64) if v >= 1 << 63 else v for v in vals]


def _tensor(buf: memoryview) -> tuple[str, np.ndarray]:
    dims: list[int] = []
    name, dtype, raw, values = "", 1, None, []
    for field, wire, value in _fields(buf):
        if field == 1:
            dims += _ints(wire, value)
        elif field == 2:
            dtype = value
        elif field == 8:
            name = bytes(value).decode("utf-8")
        elif field == 9:
            raw = bytes(value)
        elif field == 4:  # float_data
            values += np.frombuffer(bytes(value), "<f4").tolist()
        elif field in (5, 7):  # int32_data, int64_data
            values += _ints(wire, value)
    if dtype not in _DTYPES:
        raise ValueError(f"tensor {name!r} has ONNX data type {dtype}, which purr does not read")
    np_type = _DTYPES[dtype]
    array = np.frombuffer(raw, np_type) if raw is not None else np.array(values).astype(np_type)
    return name, array.reshape(dims) if dims else array.reshape(())


def read_graph(path: Path) -> tuple[dict[str, np.ndarray], list[tuple[str, list, list]]]:
    """An ONNX file's initializers by name and its nodes as (op type, inputs, outputs)."""
    data = memoryview(Path(path).read_bytes())
    graph = next((v for f, w, v in _fields(data) if f == 7 and w == 2), None)
    if graph is None:
        raise ValueError(f"{path}: no graph; not an ONNX model")
    init: dict[str, np.ndarray] = {}
    nodes = []
    for field, _, value in _fields(graph):
        if field == 5:
            name, array = _tensor(value)
            init[name] = array
        elif field == 1:
            ins, outs, op = [], [], ""
            for f, _, v in _fields(value):
                if f == 1:
                    ins.append(bytes(v).decode("utf-8"))
                elif f == 2:
                    outs.append(bytes(v).decode("utf-8"))
                elif f == 4:
                    op = bytes(v).decode("utf-8")
            nodes.append((op, ins, outs))
    return init, nodes


def _bias_after(output: str, consumers: dict[str, list], biases: set[str]) -> str | None:
    """The bias initializer added to a MatMulInteger's product (through its Cast and Mul)."""
    frontier = [output]
    for _ in range(4):
        nxt = []
        for name in frontier:
            for op, ins, outs in consumers.get(name, []):
                hit = [i for i in ins if i in biases]
                if op == "Add" and hit:
                    return hit[0]
                nxt.extend(outs)
        frontier = nxt
    return None


def _prefixed(name: str) -> str:
    return name if name.startswith(("bert.", "classifier.")) else f"bert.{name}"


def read_quantized(onnx_path: Path) -> dict[str, np.ndarray]:
    """Every weight of an int8 BERT ONNX graph, under HF names, still quantised where it was."""
    init, nodes = read_graph(onnx_path)
    consumers: dict[str, list] = {}
    for node in nodes:
        for name in node[1]:
            consumers.setdefault(name, []).append(node)
    biases = {n for n in init if n.endswith(".bias")}
    out: dict[str, np.ndarray] = {}
    for op, ins, outs in nodes:
        if op != "MatMulInteger" or not ins[1].endswith("_quantized") or ins[1] not in init:
            continue
        stem = ins[1].removesuffix("_quantized")
        bias = _bias_after(outs[0], consumers, biases)
        if bias is None:
            raise ValueError(f"{onnx_path}: no bias after {ins[1]}; not a BERT export purr knows")
        name = _prefixed(bias.removesuffix(".bias") + ".weight")
        out[f"{name}::q"] = np.ascontiguousarray(init[ins[1]].T)  # (in, out) -> (out, in)
        out[f"{name}::scale"] = np.asarray(init[f"{stem}_scale"], np.float32)
        out[f"{name}::zp"] = np.asarray(init[f"{stem}_zero_point"])
    for name, value in init.items():
        if name.startswith("onnx::") or name.endswith(("_scale", "_zero_point")):
            continue
        if name.endswith("_quantized"):  # an embedding table (rows stay rows)
            stem = name.removesuffix("_quantized")
            if f"{_prefixed(stem)}::q" not in out:
                out[f"{_prefixed(stem)}::q"] = value
                out[f"{_prefixed(stem)}::scale"] = np.asarray(init[f"{stem}_scale"], np.float32)
                out[f"{_prefixed(stem)}::zp"] = np.asarray(init[f"{stem}_zero_point"])
        elif value.dtype == np.float32 and value.ndim >= 1 and name.endswith((".bias", ".weight")):
            out[_prefixed(name)] = value
    if not any(k.startswith("bert.encoder.layer.0.") for k in out):
        raise ValueError(f"{onnx_path}: no BERT encoder layers found")
    return out


def _along(v: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A per-tensor or per-channel scale / zero point, shaped to broadcast over ``shape``."""
    if v.ndim == 0 or len(shape) < 2:
        return v
    return v.reshape(-1, 1) if v.shape[0] == shape[0] else v.reshape(1, -1)


def dequantize(arrays) -> dict[str, np.ndarray]:
    """``read_quantized``'s output (or an ``np.load`` of it) as float32 arrays by HF name."""
    out: dict[str, np.ndarray] = {}
    for key in arrays.keys() if hasattr(arrays, "keys") else arrays:
        if key.endswith(("::scale", "::zp")):
            continue
        if key.endswith("::q"):
            name = key.removesuffix("::q")
            q = np.asarray(arrays[key]).astype(np.float32)
            zp = _along(np.asarray(arrays[f"{name}::zp"]).astype(np.float32), q.shape)
            scale = _along(np.asarray(arrays[f"{name}::scale"], np.float32), q.shape)
            out[name] = (q - zp) * scale
        else:
            out[key] = np.array(arrays[key], np.float32)  # a writable copy
    return out


def bert_config(weights: dict[str, np.ndarray], labels: list[str]) -> dict:
    """A ``BertConfig`` for these weights (12 heads of 32 dims per 384: MiniLM and bge-small)."""
    vocab, hidden = weights["bert.embeddings.word_embeddings.weight"].shape
    layers = 1 + max(int(k.split(".")[3]) for k in weights if k.startswith("bert.encoder.layer."))
    return {
        "architectures": ["BertForSequenceClassification"],
        "model_type": "bert",
        "vocab_size": int(vocab),
        "hidden_size": int(hidden),
        "num_hidden_layers": layers,
        "num_attention_heads": max(1, int(hidden) // 32),
        "intermediate_size": int(
            weights["bert.encoder.layer.0.intermediate.dense.weight"].shape[0]
        ),
        "max_position_embeddings": int(
            weights["bert.embeddings.position_embeddings.weight"].shape[0]
        ),
        "type_vocab_size": int(weights["bert.embeddings.token_type_embeddings.weight"].shape[0]),
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "id2label": dict(enumerate(labels)),
        "label2id": {v: i for i, v in enumerate(labels)},
    }


def save_bert(onnx_path: Path, folder: Path) -> dict[str, object]:
    """Write the dequantised encoder as a ``transformers`` folder (config, fp32 safetensors)."""
    from safetensors.numpy import save_file

    weights = dequantize(read_quantized(onnx_path))
    weights = {k: v for k, v in weights.items() if not k.startswith("classifier.")}  # task's own
    folder.mkdir(parents=True, exist_ok=True)
    config = bert_config(weights, ["LABEL_0"])
    (folder / "config.json").write_text(json.dumps(config, indent=1), "utf-8")
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return {"source": str(onnx_path), "tensors": len(weights)}


def bert_from_onnx(ref: str, cache_dir: Path) -> Path:
    """The folder ``transformers`` loads for a packaged int8 ONNX encoder (``packaged:NAME``),
    converted once into ``<cache_dir>/models/NAME-bert`` (about 2 s, 130 MB)."""
    from editor.llm.model_files import is_complete, save_into_cache
    from retrieval.assets import resolve

    resolved = resolve(ref)
    if resolved.path is None or resolved.kind not in ("onnx-encoder", "onnx-cross-encoder"):
        raise ValueError(f"{ref!r} is not a packaged ONNX encoder")
    target = Path(cache_dir).expanduser() / "models" / (ref.removeprefix("packaged:") + "-bert")
    source = resolved.path / "model.onnx"
    if not is_complete(target):
        save_into_cache(target, lambda tmp: save_bert(source, tmp))
    return target


def main(argv: list[str] | None = None) -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("onnx", type=Path)
    p.add_argument("--out", type=Path, required=True, help="the quantised weights (.npz)")
    args = p.parse_args(argv)
    quantized = read_quantized(args.onnx)
    np.savez(args.out, **quantized)
    print(json.dumps({"tensors": len(dequantize(quantized)), "out": str(args.out)}))


if __name__ == "__main__":
    main()
