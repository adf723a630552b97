"""The step loop the span judge's and the verifiers' trainers share (``span_train``,
``encoder_train``, ``decoder_train``): length-bucketed batches, AdamW's step with clipping and a
linear warm-up and decay, the dev score every ``eval_every`` steps, the best state kept, early
stopping after ``patience`` evaluations without improvement or when time runs out.

Each trainer brings what differs: the loss of a batch, the dev score, what its state is (the
whole model, or the adapter and head alone).
"""

from __future__ import annotations

import argparse
import math
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from training.args import option


def open_bundle(args: argparse.Namespace) -> tuple[Any, dict, Any, list[str]]:
    """A run's start on a token bundle (``args.bundle``): torch seeded with ``args.seed``, a
    random generator of that seed, the bundle's ``meta.json``, its ``tokens.npz`` and the
    sources it names."""
    import json

    import torch

    torch.manual_seed(args.seed)
    meta = json.loads((args.bundle / "meta.json").read_text("utf-8"))
    tokens = np.load(args.bundle / "tokens.npz")
    return np.random.default_rng(args.seed), meta, tokens, meta["sources"]


def epoch_batches(rng, lengths: list[int], batch_size: int) -> list[np.ndarray]:
    """One epoch's batches of row indices: length-sorted within chunks of 50 batches (less
    padding), the batches shuffled.

    >>> bs = epoch_batches(np.random.default_rng(0), [5, 1, 3, 2, 4], 2)
    >>> sorted(len(b) for b in bs), sorted(int(i) for b in bs for i in b)
    ([1, 2, 2], [0, 1, 2, 3, 4])
    """
    perm = rng.permutation(len(lengths))
    size = 50 * batch_size
    batches = []
    for c in (perm[i : i + size] for i in range(0, len(perm), size)):
        c = c[np.argsort([lengths[j] for j in c])]
        batches += [c[i : i + batch_size] for i in range(0, len(c), batch_size)]
    rng.shuffle(batches)
    return batches


def warmup_linear(opt, steps: int):
    """Linear warm-up over 6% of ``steps``, then linear decay to zero."""
    import torch

    warm = max(1, int(0.06 * steps))
    return torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )


def whole_state(model) -> dict:
    """A CPU copy of every tensor of ``model``'s state."""
    return {k: v.detach().clone().cpu() for k, v in model.state_dict().items()}


@dataclass
class Fitted:
    """What a run of ``fit_steps`` leaves: the best dev score and the state that had it."""

    best: float
    state: Any
    step: int
    seen: int
    seconds: float


def fit_steps(
    params: Sequence[Any],
    opt: Any,
    steps: int,
    batches: Callable[[], Sequence[np.ndarray]],
    loss_of: Callable[[np.ndarray], Any],
    evaluate: Callable[[int, float], float],
    snapshot: Callable[[], Any],
    *,
    eval_every: int,
    patience: int = 0,
    max_seconds: float = 0,
    first: bool = True,
    keep_on_error: bool = False,
) -> Fitted:
    """Train for ``steps`` optimizer steps over epochs of ``batches()``.

    ``loss_of(batch)`` is the batch's loss; ``evaluate(step, loss)`` the dev score (higher is
    better), asked at step 0 when ``first`` (the starting state is the one to beat), every
    ``eval_every`` steps, at the last step and when ``max_seconds`` run out; ``snapshot()`` the
    state kept for the best score. ``patience`` > 0 stops after that many evaluations without
    improvement. ``keep_on_error``: an exception ends the run with the best state so far (a long
    GPU run keeps what it learned) instead of propagating.
    """
    sched = warmup_linear(opt, steps)
    best, state = (evaluate(0, math.nan), snapshot()) if first else (-math.inf, None)
    step = seen = bad = 0
    started = time.perf_counter()
    stop = steps <= 0
    try:
        while not stop:
            for b in batches():
                loss = loss_of(b)
                loss.backward()
                _clip(params)
                opt.step(), sched.step(), opt.zero_grad(set_to_none=True)
                step, seen = step + 1, seen + len(b)
                out_of_time = bool(max_seconds) and time.perf_counter() - started > max_seconds
                if step % eval_every == 0 or step >= steps or out_of_time:
                    primary = evaluate(step, loss.item())
                    if primary > best:
                        best, bad, state = primary, 0, snapshot()
                    else:
                        bad += 1
                stop = step >= steps or out_of_time or bool(patience and bad >= patience)
                if stop:
                    break
    except Exception:
        if not keep_on_error:
            raise
        traceback.print_exc()
    return Fitted(best, state, step, seen, time.perf_counter() - started)


def _clip(params: Sequence[Any]) -> None:
    import torch

    torch.nn.utils.clip_grad_norm_(params, 1.0)


def add_number_flags(p: argparse.ArgumentParser, **defaults: float) -> None:
    """A ``--flag`` per keyword, in order (``batch_size=16`` is ``--batch-size``, an int of
    default 16): the plain numbers of a trainer's command line."""
    for name, default in defaults.items():
        p.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)


def add_stop_flags(p: argparse.ArgumentParser) -> None:
    """``--max-seconds`` and ``--limit``: when a run stops early, and a smoke run's size."""
    option(p, "--max-seconds", float, 0, "stop training after this long")
    option(p, "--limit", int, 0, "a smoke run on this many train rows")
