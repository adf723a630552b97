"""Pack what a GPU machine needs to train encoder verifiers (MiniLM-L6, MiniLM-L12, bge-small).

The three packaged encoders share BERT's uncased vocabulary, so one tokenization serves every
base. The bundle holds the pairs already tokenized the way the verifier reads them at run time
(``tokenizer(premise, hypothesis, truncation="longest_first")``) and, where given, a teacher's
probabilities of the train rows (checked against the rows by their ids' digest):

- ``tokens.npz``: per split (``train``, ``dev``, ``eval``) the ids (uint16), row offsets, the
  first segment's length (token type 0), label ids and source ids; ``train_teacher`` (fp16);
- ``tokenizer/``: the tokenizer's files, copied into every folder trained from the bundle;
- ``meta.json``: the source names, ``max_length``, the label order, the rows' digest;
- ``base-NAME.npz`` for each ``--base NAME=REF``: the starting weights by HF name, fp16, or
  int8 as the packaged ONNX stores them (``editor.attribution.onnx_bert``). ``REF`` is a purr
  verifier folder (``editor/models/purr-attribution``: its shards over its packaged base) or an
  int8 ONNX file.

``training.fit.encoder_train`` reads it with numpy, torch and transformers alone.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from training.args import option
from training.data.nli import LABELS, NLIExample, ids_digest
from training.fit.decoder_bundle import bundle_groups


def encode(tokenizer, rows: list[NLIExample], max_length: int, desc: str):
    """Ids and first-segment lengths of each (premise, hypothesis) pair, as purr reads it."""
    ids, seg = [], []
    for i in tqdm(range(0, len(rows), 2048), desc=f"tokenize {desc}"):
        chunk = rows[i : i + 2048]
        enc = tokenizer(
            [r.premise for r in chunk],
            [r.hypothesis for r in chunk],
            truncation="longest_first",
            max_length=max_length,
        )
        for row_ids, types in zip(enc["input_ids"], enc["token_type_ids"], strict=True):
            ids.append(row_ids)
            seg.append(len(types) - sum(types))
    return ids, seg


def base_weights(ref: str) -> dict[str, np.ndarray]:
    """A base's weights by HF name: a purr verifier folder (fp16) or an int8 ONNX (as stored)."""
    path = Path(ref)
    if path.suffix == ".onnx":
        from editor.attribution.onnx_bert import read_quantized

        return read_quantized(path)
    from editor.attribution.hf import HFSequenceClassificationNLI

    nli = HFSequenceClassificationNLI(str(path))
    nli.load()
    model = nli._model
    return {k: v.detach().cpu().numpy().astype(np.float16) for k, v in model.state_dict().items()}


def pack(
    splits: Path,
    tokenizer_dir: Path,
    out: Path,
    bases: dict[str, str],
    teacher: Path | None = None,
    max_length: int = 128,
    eval_limit: int = 600,
    data_dir: Path | None = None,
) -> dict[str, int]:
    from transformers import AutoTokenizer

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    groups = bundle_groups(splits, ("eval-only",) if eval_limit else (), eval_limit, data_dir)
    digest = ids_digest(groups["train"])
    arrays: dict[str, np.ndarray] = {}
    if teacher is not None:
        soft = np.load(teacher)
        if "train_ids_sha256" in soft and str(soft["train_ids_sha256"]) != digest:
            raise ValueError(f"{teacher} labels other rows than {splits}'s train split")
        if len(soft["train"]) != len(groups["train"]):
            raise ValueError(
                f"{teacher}: {len(soft['train'])} rows, the splits have {len(groups['train'])}"
            )
        arrays["train_teacher"] = soft["train"].astype(np.float16)
    sources = sorted({r.source for rows in groups.values() for r in rows})
    for k, rows in groups.items():
        ids, seg = encode(tokenizer, rows, max_length, k)
        arrays[f"{k}_ids"] = np.array([i for s in ids for i in s], dtype=np.uint16)
        arrays[f"{k}_offsets"] = np.cumsum([0] + [len(s) for s in ids]).astype(np.int64)
        arrays[f"{k}_seg"] = np.array(seg, dtype=np.int16)
        arrays[f"{k}_labels"] = np.array([LABELS.index(r.label) for r in rows], np.int8)
        arrays[f"{k}_sources"] = np.array([sources.index(r.source) for r in rows], np.int16)
    np.savez(out / "tokens.npz", **arrays)
    tokenizer.save_pretrained(out / "tokenizer")  # copied into each trained folder
    for name, ref in bases.items():
        np.savez(out / f"base-{name}.npz", **base_weights(ref))
    meta = {
        "sources": sources,
        "labels": list(LABELS),
        "max_length": max_length,
        "bases": bases,
        "train_ids_sha256": digest,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1), "utf-8")
    return {k: len(v) for k, v in groups.items()}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--splits", type=Path, required=True)
    p.add_argument("--tokenizer", type=Path, default=Path("editor/models/purr-attribution"))
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--base", action="append", default=[], help="NAME=REF (a folder or .onnx)")
    option(p, "--teacher", Path, None, "a teacher's probs.npz")
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--eval-limit", type=int, default=600)
    p.add_argument("--data-dir", type=Path, default=None)
    args = p.parse_args(argv)
    bases = dict(b.split("=", 1) for b in args.base)
    print(
        json.dumps(
            pack(
                args.splits,
                args.tokenizer,
                args.out,
                bases,
                args.teacher,
                args.max_length,
                args.eval_limit,
                args.data_dir,
            )
        )
    )


if __name__ == "__main__":
    main()
