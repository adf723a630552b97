"""Resumable training state for ``fit``: what a run killed at any moment needs to go on exactly
where its last evaluation left it.

Saved with every evaluation in the checkpoint folder's ``resume/`` (and swapped in with it):
the trainable weights (``trainable.safetensors``), AdamW's moments and the torch generator
(``optimizer.safetensors``), the trainer's own tensors (``extra.safetensors``: e.g. the best
weights so far), and as JSON (``state.json``) the settings, the schedule and the trainer's loop
state (step, dev curve, early-stopping counters, data order and position, generators). No
pickle. A run that ends normally removes it; ``--resume`` reads it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

RESUME_DIR = "resume"

MAY_CHANGE = frozenset({"max_steps", "patience", "device", "resume"})
"""Settings a resumed run may change; every other one must equal the saved run's."""


def save_state(
    folder: Path,
    model: Any,
    optim: Any,
    sched: Any,
    loop: dict[str, Any],
    config: dict[str, Any],
    tensors: dict[str, Any] | None = None,
) -> None:
    """Write the resumable state of a run into ``folder`` (which the caller swaps in): the
    trainable weights, the optimizer and schedule, the torch generator, the trainer's own
    ``loop`` state (JSON) and ``tensors`` (e.g. the best weights so far), and its ``config``."""
    import torch
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    trainable = {
        n: p.detach().cpu().contiguous() for n, p in model.named_parameters() if p.requires_grad
    }
    save_file(trainable, str(folder / "trainable.safetensors"))
    if tensors:
        save_file(
            {k: v.contiguous() for k, v in tensors.items()}, str(folder / "extra.safetensors")
        )
    sd = optim.state_dict()
    moments = {"torch_rng": torch.get_rng_state()}
    for idx, slots in sd["state"].items():
        for name, value in slots.items():
            t = value if torch.is_tensor(value) else torch.tensor(value)
            moments[f"{idx}.{name}"] = t.detach().cpu().contiguous()
    save_file(moments, str(folder / "optimizer.safetensors"))
    meta = {
        "loop": loop,
        "config": config,
        "param_groups": sd["param_groups"],
        "scheduler": {k: v for k, v in sched.state_dict().items() if k != "lr_lambdas"},
    }
    (folder / "state.json").write_text(json.dumps(meta) + "\n")


def check_same_run(saved: dict[str, Any], now: dict[str, Any], folder: Path) -> None:
    """A ``ValueError`` naming the settings that differ from the saved run's.

    >>> check_same_run({"lr": 1e-3, "max_steps": 10}, {"lr": 1e-3, "max_steps": 20}, Path("o"))
    >>> check_same_run({"lr": 1e-3}, {"lr": 2e-3}, Path("o"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --resume continues the run saved in o, which had lr=0.001 (now 0.002); ...
    """
    diff = [
        f"{k}={saved.get(k)!r} (now {now.get(k)!r})"
        for k in sorted(set(saved) | set(now))
        if k not in MAY_CHANGE and saved.get(k) != now.get(k)
    ]
    if diff:
        raise ValueError(
            f"--resume continues the run saved in {folder}, which had {', '.join(diff)}; use the "
            "same settings, or start a new run without --resume"
        )


def load_state(
    out: Path, model: Any, optim: Any, sched: Any, config: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Restore the run saved in ``out/resume``: weights, optimizer, schedule, torch generator.
    Returns the trainer's loop state and its extra tensors; a ``ValueError`` when there is
    nothing to resume or the settings differ."""
    import torch
    from safetensors.torch import load_file

    folder = out / RESUME_DIR
    if not (folder / "state.json").is_file():
        raise ValueError(
            f"nothing to resume in {out}: the run finished (a finished run keeps no resume "
            "state) or was stopped before its first evaluation; run it again without --resume"
        )
    meta = json.loads((folder / "state.json").read_text())
    check_same_run(meta["config"], config, out)
    trainable = load_file(str(folder / "trainable.safetensors"))
    missing = [n for n, p in model.named_parameters() if p.requires_grad and n not in trainable]
    if missing:
        raise ValueError(f"{folder}: the saved weights lack {missing[:3]}; the model differs")
    model.load_state_dict(trainable, strict=False)
    moments = load_file(str(folder / "optimizer.safetensors"))
    torch.set_rng_state(moments.pop("torch_rng"))
    slots: dict[int, dict[str, Any]] = {}
    for key, value in moments.items():
        idx, name = key.split(".", 1)
        slots.setdefault(int(idx), {})[name] = value
    optim.load_state_dict({"state": slots, "param_groups": meta["param_groups"]})
    sched.load_state_dict({**meta["scheduler"], "lr_lambdas": [None] * len(optim.param_groups)})
    extra = folder / "extra.safetensors"
    return meta["loop"], (load_file(str(extra)) if extra.is_file() else {})


def python_rng_state(rng: random.Random) -> list[Any]:
    """``rng``'s state as JSON-able lists.

    >>> r = random.Random(1); s = python_rng_state(r); a = r.random()
    >>> set_python_rng_state(r, json.loads(json.dumps(s))); r.random() == a
    True
    """
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def set_python_rng_state(rng: random.Random, state: list[Any]) -> None:
    rng.setstate((state[0], tuple(state[1]), state[2]))
