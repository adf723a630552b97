"""Pack what a GPU machine needs to train the decoder verifier, and nothing it can rebuild.

The recipe needs a GPU machine with the repository and a few tens of MB beside it, and no
model hub access. The bundle holds the packaged Gemma-3-270M as it is stored (the GGUF's quantised blocks, bytes
unchanged, so the machine dequantises exactly the base a CPU loads), its word embeddings cut to
the rows the data uses, and the data already tokenized:

- ``weights.bin`` + ``tensors.json``: each tensor's GGUF type, shape and byte range;
- ``tokens.npz``: per split (``train``, ``dev``, ``eval``) the ids (remapped to the kept rows),
  row offsets, label ids and source ids, plus ``keep`` (original id of each kept row);
- ``meta.json``: the base's reference and config, the source names, ``max_length``, the
  label order.

``purr``-free on the far side: ``training.fit.decoder_train`` reads it with numpy, torch and the
``gguf`` package alone.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from editor.attribution.decoder_model import encode_pair
from training.data.nli import LABELS, NLIExample, ids_digest, load_nli_sets, read_splits


def tokenize_rows(tokenizer, rows: list[NLIExample], max_length: int, desc: str) -> list[list[int]]:
    return [
        encode_pair(tokenizer, r.premise, r.hypothesis, max_length)
        for r in tqdm(rows, desc=f"tokenize {desc}")
    ]


def bundle_groups(
    splits: Path, eval_sources: tuple[str, ...], eval_limit: int, data_dir: Path | None
) -> dict[str, list[NLIExample]]:
    """A bundle's rows: the splits' train and dev, and ``eval_limit`` rows of each
    evaluation-only set (none when ``eval_sources`` is empty)."""
    data = read_splits(splits)
    groups: dict[str, list[NLIExample]] = {"train": data.train, "dev": data.dev}
    if eval_sources:
        sets = load_nli_sets(data_dir, eval_sources, max_length=128, limit_per_source=eval_limit)
        groups["eval"] = [r for rows in sets.values() for r in rows]
    return groups


def pack(
    splits: Path,
    gguf_file: Path,
    model_dir: Path,
    out: Path,
    max_length: int = 256,
    eval_sources: tuple[str, ...] = ("eval-only",),
    eval_limit: int = 600,
    data_dir: Path | None = None,
    base: str = "packaged:gemma-3-270m",
) -> dict[str, int]:
    import gguf
    from transformers import AutoTokenizer

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    groups = bundle_groups(splits, eval_sources, eval_limit, data_dir)
    encoded = {k: tokenize_rows(tokenizer, rows, max_length, k) for k, rows in groups.items()}
    used = {i for seqs in encoded.values() for s in seqs for i in s}
    keep = np.array(sorted(used | set(range(4))), dtype=np.int64)
    remap = {int(old): new for new, old in enumerate(keep)}
    sources = sorted({r.source for rows in groups.values() for r in rows})
    arrays: dict[str, np.ndarray] = {"keep": keep}
    for k, seqs in encoded.items():
        arrays[f"{k}_ids"] = np.array([remap[i] for s in seqs for i in s], dtype=np.int32)
        arrays[f"{k}_offsets"] = np.cumsum([0] + [len(s) for s in seqs]).astype(np.int64)
        arrays[f"{k}_labels"] = np.array([LABELS.index(r.label) for r in groups[k]], np.int8)
        arrays[f"{k}_sources"] = np.array([sources.index(r.source) for r in groups[k]], np.int16)
    np.savez_compressed(out / "tokens.npz", **arrays)

    reader = gguf.GGUFReader(str(gguf_file))
    index, offset = [], 0
    with open(out / "weights.bin", "wb") as f:
        for t in reader.tensors:
            raw = np.asarray(t.data)
            shape = [int(x) for x in t.shape]
            if t.name == "token_embd.weight":
                raw = raw.reshape(int(t.shape[1]), -1)[keep]
                shape = [shape[0], len(keep)]
            blob = np.ascontiguousarray(raw).tobytes()
            f.write(blob)
            index.append(
                {
                    "name": t.name,
                    "type": int(t.tensor_type),
                    "shape": shape,
                    "offset": offset,
                    "nbytes": len(blob),
                }
            )
            offset += len(blob)
    (out / "tensors.json").write_text(json.dumps(index), "utf-8")
    config = json.loads((model_dir / "config.json").read_text("utf-8"))
    meta = {
        "base": base,
        "config": config,
        "sources": sources,
        "labels": list(LABELS),
        "max_length": max_length,
        "kept_rows": len(keep),
        "train_ids_sha256": ids_digest(groups["train"]),  # carried into the teacher's probs
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1), "utf-8")
    return {k: len(v) for k, v in groups.items()} | {"kept_rows": len(keep), "bytes": offset}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--splits", type=Path, required=True)
    p.add_argument("--gguf", type=Path, required=True, help="the assembled Gemma-3-270M GGUF")
    p.add_argument(
        "--model-dir", type=Path, required=True, help="its converted folder (config, tokenizer)"
    )
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--data-dir", type=Path, default=None)
    args = p.parse_args(argv)
    print(
        json.dumps(
            pack(
                args.splits,
                args.gguf,
                args.model_dir,
                args.out,
                args.max_length,
                data_dir=args.data_dir,
            )
        )
    )


if __name__ == "__main__":
    main()
