"""A folder that trains the extractive reader on a GPU machine where purr is not installed (one
with numpy, torch, transformers, tokenizers and safetensors): the one-shot run for a session
that is lent a device.

It holds the modules ``training.fit.reader`` imports under empty package ``__init__`` files
(purr's own import pydantic and spaCy), ``run.sh`` (the run), and in ``d/``:

- ``start/``: the reader to go on from, its weights carried as int8 rows with their scales
  (``start.npz``, 22 MB instead of 43 MB of fp16; every layer trains on the device, so the
  rounding is trained away), its config and tokenizer (the run starts its own schedule);
- ``base.npz``: the frozen word embeddings, as the packaged int8 encoder stores them (exact);
- ``data/raw/``: the training sources and the tuning slice (``training.data.reader``), 14 MB.

About 52 MB: it fits a 64 MiB device call once the committed weights and the prebuilt index
vectors are left out of the tree (``git rm -r -q --cached editor/models retrieval/data`` with
both in ``.git/info/exclude``; ``git reset -q`` and the exclude lines removed afterwards)::

    python -m training.fit.reader_kit --out runs/reader-kit --data ../shared/data
    # device: cd runs/reader-kit && bash run.sh 6000  (weights and state land in $OUT/reader)

The returned folder is a reader checkpoint like the CPU run's (fp16 shards under 16 MB each,
``purr_base.json`` naming the packaged base): check it with ``purr eval reader --reader DIR``
and copy it over ``editor/models/purr-reader``.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np

from training.args import option

ROOT = Path(__file__).resolve().parents[2]

MODULES = (
    "training.args",
    "editor.attribution.bert_weights",
    "editor.attribution.onnx_bert",
    "editor.attribution.span_call",
    "editor.attribution.span_model",
    "editor.llm.partial",
    "editor.reader.base",
    "editor.reader.extractive",
    "training.data.reader",
    "training.eval.base",
    "training.eval.reader",
    "training.fit.reader",
)
DATA = (
    "squad/squad-v1.1-train.json.gz",
    "squadshifts/new_wiki_v1.0.json.gz",
    "squadshifts/amazon_reviews_v1.0.json.gz",
    "squadshifts/reddit_v1.0.json.gz",
    "qed/qed-train.jsonl.gz",
    "qed/qed-dev.jsonl.gz",
    "policyqa/dev.json.gz",
)
RUN = """#!/usr/bin/env bash
# The reader's one-shot GPU run: bash run.sh [STEPS]; the checkpoint lands in $OUT/reader.
set -euo pipefail
cd "$(dirname "$0")"
out="${{OUT:-out}}/reader"
python -m training.fit.reader --start d/start --out "$out" --data d/data \\
    --device cuda --bf16 --freeze-layers 0 --batch-size 32 --lr 5e-5 --warmup 200 \\
    --max-steps "${{1:-6000}}" --total-steps {total} --save-every 500 --tune-rows 400 --bucket 50 \\
    --base-ref {base}
"""


def quantize_rows(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each 2-d weight as int8 rows with a float32 scale per row (zero point 0), the rest in
    fp16: what ``onnx_bert.dequantize`` reads back.

    >>> from editor.attribution.onnx_bert import dequantize
    >>> w = {"a.weight": np.array([[1.0, -0.5], [0.0, 0.0]], np.float32), "a.bias": np.ones(2)}
    >>> back = dequantize(quantize_rows(w))
    >>> bool(np.abs(back["a.weight"] - w["a.weight"]).max() < 0.01), back["a.bias"].tolist()
    (True, [1.0, 1.0])
    """
    out: dict[str, np.ndarray] = {}
    for name, w in weights.items():
        if w.ndim != 2:
            out[name] = w.astype(np.float16)
            continue
        scale = np.abs(w).max(axis=1) / 127.0
        scale[scale == 0] = 1.0
        out[f"{name}::q"] = np.clip(np.round(w / scale[:, None]), -127, 127).astype(np.int8)
        out[f"{name}::scale"] = scale.astype(np.float32)
        out[f"{name}::zp"] = np.zeros(len(scale), np.int8)
    return out


def _start(start: Path, target: Path) -> str:
    """``start``'s weights in the carried form under ``target``; returns its base's name."""
    from safetensors.numpy import load_file

    from editor.llm.partial import MANIFEST

    manifest = json.loads((start / MANIFEST).read_text("utf-8"))
    saved: dict[str, np.ndarray] = {}
    for name in manifest["shards"]:
        saved.update({k: v.astype(np.float32) for k, v in load_file(str(start / name)).items()})
    target.mkdir(parents=True)
    np.savez(target / "start.npz", **quantize_rows(saved))
    carried = {**manifest, "base": "../base.npz", "shards": ["start.npz"]}
    (target / MANIFEST).write_text(json.dumps(carried, indent=2), "utf-8")
    for name in ("config.json", "tokenizer.json"):
        if (start / name).is_file():
            shutil.copy(start / name, target / name)
    return str(manifest["base"])


def _base(ref: str, frozen: list[str], out: Path) -> None:
    """The frozen weights of the base ``ref`` (the packaged int8 encoder, still quantised, or
    an ``.npz`` of weights)."""
    if ref.endswith(".npz"):
        with np.load(ref) as given:
            arrays = {k: given[k] for k in given.files}
    else:
        from editor.attribution.onnx_bert import read_quantized
        from retrieval.assets import resolve

        resolved = resolve(ref)
        assert resolved.path is not None
        arrays = read_quantized(resolved.path / "model.onnx")
    keep = {k: v for k, v in arrays.items() if k.split("::")[0] in frozen}
    np.savez(out, **keep)


def build(out: Path, start: Path, data: Path, total_steps: int) -> dict:
    """Write the kit to ``out`` (replaced) from the reader in ``start`` and the shared data."""
    from training.data.reader import raw_dir

    raw = raw_dir(data)
    missing = [str(raw / f) for f in DATA if not (raw / f).is_file()]
    if missing:
        raise ValueError(f"missing kit inputs: {', '.join(missing)}; see ../shared/data/README.md")
    from training.fit.span_kit import copy_modules

    shutil.rmtree(out, ignore_errors=True)
    copy_modules(out, MODULES)
    base = _start(start, out / "d" / "start")
    frozen = json.loads((out / "d" / "start" / "purr_base.json").read_text())["frozen"]
    _base(base, frozen, out / "d" / "base.npz")
    for rel in DATA:
        (out / "d" / "data" / "raw" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(raw / rel, out / "d" / "data" / "raw" / rel)
    (out / "run.sh").write_text(RUN.format(total=total_steps, base=base), "utf-8")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return {"out": str(out), "files": sum(1 for p in out.rglob("*") if p.is_file()), "bytes": size}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--start", type=Path, default=ROOT / "editor/models/purr-reader")
    option(p, "--data", Path, None, "the shared data folder")
    option(p, "--total-steps", int, 12000, "the schedule's length")
    a = p.parse_args(argv)
    print(json.dumps(build(a.out, a.start, a.data, a.total_steps)))


if __name__ == "__main__":
    main()
