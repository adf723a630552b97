"""What a GPU machine needs beside the span rows to train the span judge, made here:

- ``base.npz``: the starting weights by HF name, every matrix int8 per row (``::q``,
  ``::scale``, ``::zp``, read by ``editor.attribution.onnx_bert.dequantize``), from a purr
  verifier folder (the medium verifier by default, whose pair head starts the judge's);
- ``nli-dev.jsonl.xz``: the dev rows of the four shared NLI sets, premises windowed to
  ``--max-length`` tokens as users meet them, ``--per-source`` of each;
- ``nli-train.jsonl.xz``: span rows (family ``nli:<source>``, no spans) from the train side of
  the shared sets and of the ``nli-extra`` sets a shipped model may train on, at most
  ``--train-per-source`` of each (a random sample), premises windowed the same way. The trainer
  mixes them with the span rows so the pair head keeps reading real claims.

    python -m training.fit.span_prepare --out runs/span-device
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from training.data.spans.rows import SpanRow, open_text, write_rows


def quantized_state(folder: str) -> dict[str, np.ndarray]:
    from editor.attribution.hf import HFSequenceClassificationNLI

    nli = HFSequenceClassificationNLI(folder)
    nli.load()
    out: dict[str, np.ndarray] = {}
    for k, v in nli._model.state_dict().items():
        a = v.detach().float().cpu().numpy()
        if a.ndim == 2:
            scale = np.maximum(np.abs(a).max(1), 1e-8) / 127.0
            out[f"{k}::q"] = np.clip(np.round(a / scale[:, None]), -127, 127).astype(np.int8)
            out[f"{k}::scale"] = scale.astype(np.float32)
            out[f"{k}::zp"] = np.zeros(len(scale), np.int8)
        else:
            out[k] = a.astype(np.float32)
    return out


def nli_dev(data_dir: Path, max_length: int, per_source: int) -> list[dict]:
    from training.data.nli import NLI_FILES, is_dev, load_nli_file

    rows = []
    for source, rel in NLI_FILES.items():
        kept = [
            ex
            for ex in load_nli_file(data_dir / rel, source, max_length=max_length)
            if is_dev(ex.group)
        ][:per_source]
        rows += [
            {
                "source": source,
                "premise": ex.premise,
                "hypothesis": ex.hypothesis,
                "label": ex.label,
            }
            for ex in kept
        ]
    return rows


def nli_train(data_dir: Path, max_length: int, per_source: int) -> list[SpanRow]:
    import random

    from training.data.nli import is_dev, load_nli_sets
    from training.data.nli_sources import EXTRA_TRAIN, SHARED

    sets = load_nli_sets(data_dir, SHARED + EXTRA_TRAIN, max_length=max_length)
    rows: list[SpanRow] = []
    for source, examples in sets.items():
        kept = [ex for ex in examples if not is_dev(ex.group)]
        if len(kept) > per_source:
            kept = random.Random(0).sample(kept, per_source)
        rows += [
            SpanRow(ex.id, "nli:" + source, ex.label, ex.hypothesis, ex.premise, ex.group)
            for ex in kept
        ]
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--verifier", default="editor/models/purr-verifier-medium")
    p.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--per-source", type=int, default=600)
    p.add_argument("--train-per-source", type=int, default=12000)
    a = p.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    np.savez(a.out / "base.npz", **quantized_state(a.verifier))
    rows = nli_dev(a.data_dir, a.max_length, a.per_source)
    with open_text(a.out / "nli-dev.jsonl.xz", "wt") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    n_train = write_rows(
        nli_train(a.data_dir, a.max_length, a.train_per_source), a.out / "nli-train.jsonl.xz"
    )
    print(json.dumps({"base": str(a.out / "base.npz"), "nli_dev": len(rows), "nli_train": n_train}))


if __name__ == "__main__":
    main()
