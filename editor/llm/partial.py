"""Partial checkpoints: the weights a full fine-tune changed, saved over a base it names.

A fully fine-tuned encoder whose word embeddings stayed frozen differs from its base in every
other weight. ``save_partial`` writes those weights in half precision, split into safetensors
shards under a size cap (each file stays small enough to commit), with ``purr_base.json``:

    {"base": "packaged:all-minilm-l6-v2", "frozen": ["bert.embeddings.word_embeddings.weight"],
     "dtype": "float16", "shards": ["weights-00001.safetensors", ...]}

``load_partial`` builds the base with the folder's ``config.json`` (its labels and head) and
loads the shards over it; the frozen weights come from the base unchanged. No pickle.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MANIFEST = "purr_base.json"


def is_partial_folder(path: str | Path) -> bool:
    """A local folder written by ``save_partial``."""
    return (Path(path) / MANIFEST).is_file()


def save_partial(
    model: Any,
    out: str | Path,
    base_ref: str,
    frozen: list[str],
    *,
    dtype: str = "float16",
    max_shard_bytes: int = 15 * 1024 * 1024,
) -> list[Path]:
    """Write every parameter and buffer of ``model`` but ``frozen`` (state-dict names) as
    ``dtype`` shards of at most ``max_shard_bytes`` each, plus ``config.json`` and the manifest.
    Returns the shard paths."""
    import torch
    from safetensors.torch import save_file

    if dtype not in ("float16", "bfloat16", "float32"):
        raise ValueError(f"dtype must be float16, bfloat16 or float32, got {dtype!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    state = model.state_dict()
    missing = [name for name in frozen if name not in state]
    if missing:
        raise ValueError(f"frozen weights {missing} are not in the model's state dict")
    cast = getattr(torch, dtype)
    shards: list[dict[str, Any]] = [{}]
    size = 0
    for name, tensor in state.items():
        if name in frozen:
            continue
        t = tensor.detach().cpu()
        t = t.to(cast) if t.is_floating_point() else t
        nbytes = t.numel() * t.element_size()
        if shards[-1] and size + nbytes > max_shard_bytes:
            shards.append({})
            size = 0
        shards[-1][name] = t.contiguous()
        size += nbytes
    paths = []
    for i, shard in enumerate(shards, 1):
        path = out / f"weights-{i:05d}.safetensors"
        save_file(shard, str(path), metadata={"format": "pt"})
        paths.append(path)
    model.config.save_pretrained(out)
    manifest = {
        "base": base_ref,
        "frozen": list(frozen),
        "dtype": dtype,
        "shards": [p.name for p in paths],
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return paths


def load_partial(model_class: Any, path: str | Path, base_id: str) -> Any:
    """The base (``base_id``, a resolved local folder or cached hub id) built with the folder's
    config, the saved shards loaded over it in float32. Raises ValueError when the shards and
    the base do not fit together (a weight missing that was not frozen, or one unknown)."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoConfig
    from transformers.utils import logging as hf_logging

    folder = Path(path)
    manifest = json.loads((folder / MANIFEST).read_text())
    config = AutoConfig.from_pretrained(folder, local_files_only=True)
    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the base lacks the saved head: that is expected
    hf_logging.disable_progress_bar()
    try:
        model = model_class.from_pretrained(base_id, config=config, local_files_only=True)
    finally:
        hf_logging.set_verbosity(level)
        hf_logging.enable_progress_bar()
    state: dict[str, Any] = {}
    for name in manifest["shards"]:
        shard = folder / name
        if not shard.is_file():
            raise ValueError(f"{folder}: shard {name} listed in {MANIFEST} is missing")
        for key, t in load_file(str(shard)).items():
            state[key] = t.to(torch.float32) if t.is_floating_point() else t
    result = model.load_state_dict(state, strict=False)
    unexpected = list(result.unexpected_keys)
    missing = [k for k in result.missing_keys if k not in manifest["frozen"]]
    if unexpected or missing:
        raise ValueError(
            f"{folder} does not fit its base {manifest['base']!r}: missing {missing[:5]}, "
            f"unexpected {unexpected[:5]}; was it saved over another base?"
        )
    return model.eval()
