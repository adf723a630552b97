"""The weights of a BERT model folder as float32 numpy arrays under ``transformers``' names, read
with ``safetensors`` alone (no torch): what ``bert_graph`` builds an ONNX graph from.

A folder is either a partial checkpoint (``purr_base.json``: fp16 shards of every weight but the
frozen ones, over a base it names) or a full one (``model.safetensors``). A base is a packaged
int8 ONNX encoder (dequantised, as ``onnx_bert.bert_from_onnx`` does), a packaged
sentence-transformers folder, or a local folder with ``model.safetensors``. The result equals
the state dict ``editor.llm.partial.load_partial`` builds in torch (tested).

A shard or a base may also be an ``.npz`` of weights stored as int8 rows with their scales
(``NAME::q``, ``NAME::scale``, ``NAME::zp``, as ``onnx_bert.read_quantized`` writes them), a
base relative to the folder: the form the reader's device kit carries (``reader_kit``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

MANIFEST = "purr_base.json"
WEIGHTS = "model.safetensors"


class UnsupportedModel(ValueError):
    """The folder is not one this reader builds (not BERT, or no safetensors weights)."""


def _safetensors(path: Path) -> dict[str, np.ndarray]:
    if path.suffix == ".npz":
        from editor.attribution.onnx_bert import dequantize

        with np.load(path) as arrays:
            return dequantize(arrays)
    from safetensors.numpy import load_file

    out = {}
    for key, value in load_file(str(path)).items():
        out[key] = value.astype(np.float32) if np.issubdtype(value.dtype, np.floating) else value
    return out


def _named(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Under ``bert.`` the encoder's weights (a bare ``BertModel`` file names them without)."""
    head = ("classifier.", "token.", "pointer.", "bert.")
    return {k if k.startswith(head) else f"bert.{k}": v for k, v in weights.items()}


def base_weights(ref: str) -> dict[str, np.ndarray]:
    """Every weight of the base ``ref`` names (``packaged:NAME``, a local folder)."""
    from retrieval.assets import resolve

    resolved = resolve(ref)
    if resolved.source == "packaged" and resolved.kind in ("onnx-encoder", "onnx-cross-encoder"):
        from editor.attribution.onnx_bert import dequantize, read_quantized

        assert resolved.path is not None
        return dequantize(read_quantized(resolved.path / "model.onnx"))
    folder = Path(resolved.load_id)
    if not (folder / WEIGHTS).is_file():
        raise UnsupportedModel(f"base {ref!r}: no {WEIGHTS} in {folder}")
    return _named(_safetensors(folder / WEIGHTS))


def folder_weights(folder: str | Path) -> tuple[dict, dict[str, np.ndarray]]:
    """``config.json`` and every float32 weight of the BERT model in ``folder``."""
    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text("utf-8"))
    if config.get("model_type") != "bert":
        raise UnsupportedModel(f"{folder}: model_type {config.get('model_type')!r}, not bert")
    if not (folder / MANIFEST).is_file():
        if not (folder / WEIGHTS).is_file():
            raise UnsupportedModel(f"{folder}: neither {MANIFEST} nor {WEIGHTS}")
        return config, _named(_safetensors(folder / WEIGHTS))
    manifest = json.loads((folder / MANIFEST).read_text("utf-8"))
    saved: dict[str, np.ndarray] = {}
    for name in manifest["shards"]:
        if not (folder / name).is_file():
            raise ValueError(f"{folder}: shard {name} listed in {MANIFEST} is missing")
        saved.update(_safetensors(folder / name))
    ref = manifest["base"]
    base = _safetensors(folder / ref) if ref.endswith(".npz") else base_weights(ref)
    weights = {name: base[name] for name in manifest["frozen"] if name in base}
    missing = [n for n in manifest["frozen"] if n not in base]
    if missing:
        raise ValueError(f"{folder}: base {manifest['base']!r} lacks {missing[:4]}")
    weights.update(saved)
    return config, {k: v for k, v in weights.items() if "position_ids" not in k}
