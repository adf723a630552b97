"""A folder that distils the reranker on a GPU machine where purr is not installed (one with
numpy, torch, transformers, tokenizers and safetensors): the one-shot run for a session that is
lent a device.

It holds the modules ``training.fit.reranker_fit`` imports under empty package ``__init__``
files (purr's own import pydantic and spaCy), ``run.sh`` (the run), and in ``d/``:

- ``student.npz``: the teacher cut to ``--layers``, fp16 (about 45 MB for 6 layers), and its
  ``config.json``; ``tokenizer.json``, the teacher's;
- ``pairs.jsonl.gz``: the pairs (``purr data rerank-pairs``; ``--limit`` of them, drawn with
  ``--seed`` as ``purr train reranker`` draws them);
- ``settings.json``: the recipe (epochs, batch size, lr, top-k and its weight, the loss, its
  temperature and squared-error share, the held-out share, the seed).

About 50 MB (48 MB for the 25,787 pairs of ``runs/rerank-pairs``): it fits a 64 MiB device
call beside the code (5 MB) once the committed weights and the prebuilt index vectors are left
out of the tree (``git rm -r -q --cached editor/models retrieval/data retrieval/models`` with
the three in ``.git/info/exclude``; ``git reset -q`` and the exclude lines removed after)::

    python -m training.fit.reranker_kit --out runs/reranker-kit --pairs runs/rerank-pairs/pairs.jsonl
    # device: cd runs/reranker-kit && bash run.sh   (the trained weights land in $OUT/reranker)
    purr train reranker --pairs runs/rerank-pairs/pairs.jsonl --out runs/reranker-gpu \\
        --trained DIR --per-channel   # DIR: what came back; exported int8, scored here

The kit lives in the ignored ``runs/``, so the device call names it in ``carry``. The returned
folder holds only the weights that trained (fp16 shards under 16 MiB each, about 22 MB for 6
layers) and ``curve.json`` (the device's curve, its settings and a digest of the held-out
queries, which ``--trained`` checks). The frozen word embeddings travel in fp16; the export
here puts the teacher's own back.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np

MODULES = ("training.data.rerank_pairs", "training.fit.steps", "training.fit.reranker_fit")
RUN = """#!/usr/bin/env bash
# The reranker's one-shot GPU run: bash run.sh [EPOCHS]; the weights land in $OUT/reranker.
set -euo pipefail
cd "$(dirname "$0")"
"${PYTHON:-python3}" -m training.fit.reranker_fit --kit d --out "${OUT:-out}/reranker" ${1:+--epochs "$1"}
"""


def build(out: Path, a: argparse.Namespace) -> dict:
    """Write the kit to ``out`` (replaced) from ``a``: the pairs, the layers and the recipe."""
    from retrieval.assets import resolve
    from training.fit.reranker import TEACHER, pair_rows, student
    from training.fit.span_kit import copy_modules

    rows = pair_rows(a)
    model, config = student([int(x) for x in a.layers.split(",")])
    shutil.rmtree(out, ignore_errors=True)
    copy_modules(out, MODULES)
    d = out / "d"
    d.mkdir()
    state = {k: v.detach().numpy().astype(np.float16) for k, v in model.state_dict().items()}
    np.savez(d / "student.npz", **state)
    (d / "config.json").write_text(json.dumps(config, indent=1))
    teacher = resolve(TEACHER).path
    assert teacher is not None
    shutil.copy(teacher / "tokenizer.json", d / "tokenizer.json")
    with gzip.open(d / "pairs.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(asdict(r)) + "\n" for r in rows)
    recipe = ("epochs", "batch_size", "lr", "max_length", "dev_share", "top_k", "top_weight")
    recipe += ("loss", "temperature", "mse_weight")
    drawn = ("eval_every", "seed", "layers", "limit", "whole_queries")
    settings = {k: getattr(a, k) for k in (*recipe, *drawn)}
    (d / "settings.json").write_text(json.dumps(settings, indent=1))
    (out / "run.sh").write_text(RUN, "utf-8")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return {"out": str(out), "pairs": len(rows), "bytes": size}


def main(argv: list[str] | None = None) -> None:
    from training.fit.reranker import add_args

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_args(p)  # the same recipe flags as purr train reranker
    a = p.parse_args(argv)
    if a.init or a.save_trained or a.trained:
        p.error(
            "the kit starts from the cut teacher and returns its weights: no --init, --save-trained or --trained"
        )
    print(json.dumps(build(Path(a.out), a)))


if __name__ == "__main__":
    main()
