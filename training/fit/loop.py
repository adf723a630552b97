"""The training loop shared by ``purr train editor`` and ``purr train querygen``.

A run is a ``TrainLoopConfig`` (saved as ``train_config.json``), a model with its tokenizer,
train and dev rows, and a loss over a batch of rows. ``fit`` runs AdamW with linear warm-up and
decay, bf16 autocast on CUDA, the dev loss every ``eval_every`` steps, keeps the best
checkpoint (``save_pretrained``: the LoRA adapter, or the whole model with its tokenizer, every
file under 20 MB) and stops early after ``patience`` evaluations without improvement.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from tqdm.auto import tqdm

from retrieval.files import atomic_dir, write_text
from training.fit.resume import (
    RESUME_DIR,
    load_state,
    python_rng_state,
    save_state,
    set_python_rng_state,
)

log = logging.getLogger(__name__)

Loss = Callable[[Sequence[dict[str, Any]], random.Random], Any]


@dataclass
class LoopState:
    """Where ``fit`` is, saved with every evaluation: the next step and what decides it."""

    step: int
    best: float
    bad: int
    curve: list[dict[str, float]]
    order: list[int]
    pos: int
    py_rng: list[Any]


class TrainLoopConfig(BaseModel):
    """The settings every trainer shares (a trainer's config adds its own)."""

    model_config = ConfigDict(extra="forbid")

    data: str
    base: str = Field(description="hub id, local path or packaged:NAME of the base model")
    out: str
    lora: bool = True
    lora_r: int = Field(16, ge=1)
    lora_alpha: int = Field(32, ge=1)
    lr: float = Field(3e-4, gt=0)
    batch_size: int = Field(8, ge=1)
    max_steps: int = Field(1000, ge=1)
    warmup_steps: int = Field(50, ge=0)
    eval_every: int = Field(100, ge=1)
    patience: int = Field(5, ge=1)
    dev_share: float = Field(0.05, gt=0, lt=1)
    dev_limit: int = Field(200, ge=1, description="dev rows scored per evaluation")
    max_length: int = Field(256, ge=16, description="input tokens (per pair for fid)")
    max_target_length: int = Field(96, ge=8)
    seed: int = 0
    device: str = "cpu"
    resume: bool = Field(
        False,
        description="go on from the last evaluation of a run in `out` that was killed or "
        "stopped (its weights, optimizer, schedule, data order and random state)",
    )
    init_adapter: str | None = Field(
        None,
        description="a LoRA adapter folder to continue training (e.g. the shipped editor on "
        "your own domain's rows) instead of a fresh adapter; its rank must equal lora_r",
    )

    @model_validator(mode="after")
    def _init_adapter_is_lora(self) -> TrainLoopConfig:
        if self.init_adapter is None:
            return self
        if not self.lora:
            raise ValueError(
                f"init_adapter={self.init_adapter} continues a LoRA adapter, but lora=false "
                "(--no-lora); drop --no-lora or --init-adapter"
            )
        config = Path(self.init_adapter) / "adapter_config.json"
        if not config.is_file():
            raise ValueError(
                f"init_adapter={self.init_adapter}: no adapter_config.json there; pass the "
                "folder `purr train` saved (e.g. editor/models/purr-editor-causal)"
            )
        r = json.loads(config.read_text(encoding="utf-8")).get("r")
        if r != self.lora_r:
            raise ValueError(
                f"init_adapter={self.init_adapter} has rank r={r} but lora_r={self.lora_r}; "
                f"pass --lora-r {r}"
            )
        return self


def is_dev_row(row: dict[str, Any], share: float, key: str = "query") -> bool:
    """Deterministic split by the row's ``key`` (rows of one query stay together).

    >>> is_dev_row({"query": "who built it"}, 0.5) in (True, False)
    True
    """
    digest = hashlib.sha1(str(row.get(key, row.get("id"))).encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < share


def split_rows(
    rows: list[dict[str, Any]], cfg: TrainLoopConfig, key: str = "query"
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Train and dev rows (dev capped at ``dev_limit``); an error when either is empty."""
    dev = [r for r in rows if is_dev_row(r, cfg.dev_share, key)]
    train = [r for r in rows if not is_dev_row(r, cfg.dev_share, key)]
    if not train or not dev:
        raise ValueError(
            f"{len(rows)} rows split into {len(train)} train / {len(dev)} dev; make more rows "
            "or change --dev-share"
        )
    return train, dev[: cfg.dev_limit]


def with_lora(model: Any, cfg: TrainLoopConfig, task: str) -> Any:
    """``model`` with LoRA on every linear layer when ``cfg.lora`` (continuing
    ``cfg.init_adapter`` when given), in training mode."""
    if cfg.lora and cfg.init_adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, cfg.init_adapter, is_trainable=True)
    elif cfg.lora:
        from peft import LoraConfig, get_peft_model

        lora = LoraConfig(
            task_type=task,
            r=cfg.lora_r,
            lora_alpha=cfg.lora_alpha,
            lora_dropout=0.05,
            target_modules="all-linear",
        )
        model = get_peft_model(model, lora)
    model.train()
    return model


def causal_lm_loss(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[str, str]],
    max_length: int,
    max_target_length: int,
    device: str = "cpu",
) -> Any:
    """Cross-entropy of each ``target`` after its ``prompt``; prompt tokens are ignored.

    Rows are left-padded so every target ends at the last position, and the LM head runs on the
    last ``max target + 1`` positions only (``logits_to_keep``): with Gemma's 262k-token
    vocabulary the head over the whole prompt would cost more than the rest of the model."""
    import torch

    ids, n_target = [], []
    for prompt, target in pairs:
        p = tokenizer(prompt, add_special_tokens=True).input_ids[-max_length:]
        t = tokenizer(target, add_special_tokens=False).input_ids[:max_target_length]
        ids.append(p + t)
        n_target.append(len(t))
    width = max(len(x) for x in ids)
    keep = max(n_target) + 1
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
    labels = torch.full((len(ids), width), -100, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for i, (x, n) in enumerate(zip(ids, n_target, strict=True)):
        input_ids[i, width - len(x) :] = torch.tensor(x)
        labels[i, width - n :] = torch.tensor(x[-n:])
        mask[i, width - len(x) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(
        input_ids=input_ids.to(device),
        attention_mask=mask.to(device),
        position_ids=positions.to(device),
        logits_to_keep=keep,
    ).logits  # (batch, keep, vocab): positions width-keep .. width-1
    target = labels[:, width - keep + 1 :].to(device)  # the tokens those positions predict
    return torch.nn.functional.cross_entropy(
        logits[:, :-1].float().reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=-100
    )


def has_model(out: Path) -> bool:
    """``out`` holds a saved checkpoint (an adapter or a whole model)."""
    return (out / "adapter_config.json").exists() or (out / "config.json").exists()


def save_checkpoint(
    model: Any,
    tokenizer: Any,
    out: Path,
    cfg: TrainLoopConfig,
    state: dict[str, Any] | None = None,
    *,
    best: bool = True,
    resume: Callable[[Path], None] | None = None,
) -> None:
    """The adapter alone (the user loads the base's tokenizer), or the whole model with its
    tokenizer after full training; shards keep every file under 20 MB. The folder is written
    beside ``out`` and swapped in whole, with ``train_config.json`` and ``checkpoint.json`` (the
    step and dev loss), so a run killed at any moment leaves the last whole checkpoint.
    ``best=False`` keeps the saved model and only renews the resume state (``resume(folder)``
    writes it into ``resume/``). ``out`` itself appears only with its first whole checkpoint."""
    with atomic_dir(out, copy_existing=True, skip=(RESUME_DIR,) if resume else ()) as tmp:
        if best:
            model.save_pretrained(tmp, max_shard_size="15MB")
            if not cfg.lora:
                tokenizer.save_pretrained(tmp)
            (tmp / "train_config.json").write_text(cfg.model_dump_json(indent=2) + "\n")
            (tmp / "checkpoint.json").write_text(json.dumps(state or {}, indent=2) + "\n")
        if resume is not None:
            resume(tmp / RESUME_DIR)


def fit(
    cfg: TrainLoopConfig,
    model: Any,
    tokenizer: Any,
    train: list[dict[str, Any]],
    dev: list[dict[str, Any]],
    loss_fn: Loss,
    desc: str = "train",
    progress: bool = True,
    stop: Any = None,
) -> dict[str, Any]:
    """Train ``model`` on ``train`` with ``loss_fn(batch, rng)``; the report (also written as
    ``metrics.json`` beside ``train_config.json`` in ``cfg.out``)."""
    import torch

    torch.manual_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    params = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.01)

    def lr_at(step: int) -> float:
        if step < cfg.warmup_steps:
            return (step + 1) / (cfg.warmup_steps + 1)
        return max(0.0, 1 - (step - cfg.warmup_steps) / max(1, cfg.max_steps - cfg.warmup_steps))

    sched = torch.optim.lr_scheduler.LambdaLR(optim, lr_at)
    use_bf16 = cfg.device.startswith("cuda") and torch.cuda.is_bf16_supported()

    def dev_loss() -> float:
        model.eval()
        total, n = 0.0, 0
        drng = random.Random(cfg.seed + 1)  # the same evidence order at every evaluation
        with torch.no_grad(), torch.autocast("cuda", torch.bfloat16, enabled=use_bf16):
            for i in range(0, len(dev), cfg.batch_size):
                batch = dev[i : i + cfg.batch_size]
                total += float(loss_fn(batch, drng)) * len(batch)
                n += len(batch)
        model.train()
        return total / n

    out = Path(cfg.out)
    if cfg.resume:  # on from the last evaluation of the killed run, exactly
        saved, _ = load_state(out, model, optim, sched, cfg.model_dump(mode="json"))
        loop = LoopState(**saved)
        set_python_rng_state(rng, loop.py_rng)
        curve, best, bad, order, pos = loop.curve, loop.best, loop.bad, loop.order, loop.pos
        first = loop.step
        log.info("resuming at step %d of %d", first, cfg.max_steps)
    else:
        curve = [{"step": 0, "dev_loss": round(dev_loss(), 4)}]
        best, bad, order, pos = curve[0]["dev_loss"], 0, list(range(len(train))), len(train)
        first = 0
    started = time.perf_counter()  # ``out`` appears with the first checkpoint, whole

    def keep_state(step: int) -> Callable[[Path], None]:
        loop = asdict(LoopState(step, best, bad, curve, order, pos, python_rng_state(rng)))
        config = cfg.model_dump(mode="json")
        return lambda folder: save_state(folder, model, optim, sched, loop, config)

    finished = False
    bar = tqdm(range(first, cfg.max_steps), desc=desc, disable=not progress, initial=first)
    for step in bar:
        if stop is not None and stop.requested:  # SIGTERM / Ctrl-C: nothing done is lost
            log.warning("stopped at step %d by %s", step, stop.name)
            save_checkpoint(  # before the first evaluation: the weights so far, unevaluated
                model,
                tokenizer,
                out,
                cfg,
                {"step": step, "dev_loss": None},
                best=not has_model(out),
                resume=keep_state(step),
            )
            break
        if pos + cfg.batch_size > len(order):
            rng.shuffle(order)
            pos = 0
        batch = [train[i] for i in order[pos : pos + cfg.batch_size]]
        pos += cfg.batch_size
        with torch.autocast("cuda", torch.bfloat16, enabled=use_bf16):
            loss = loss_fn(batch, rng)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optim.step()
        sched.step()
        optim.zero_grad(set_to_none=True)
        bar.set_postfix(loss=f"{float(loss.detach()):.3f}", best_dev=f"{best:.3f}")
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.max_steps:
            current = dev_loss()
            curve.append({"step": step + 1, "dev_loss": round(current, 4)})
            improved = current < best - 1e-4 or len(curve) == 2
            if improved:
                best, bad = min(best, current), 0
            else:
                bad += 1
            save_checkpoint(
                model,
                tokenizer,
                out,
                cfg,
                {"step": step + 1, "dev_loss": round(current, 4)},
                best=improved,
                resume=keep_state(step + 1),
            )
            if bad >= cfg.patience:
                log.info("early stop at step %d (dev loss %.4f)", step + 1, current)
                finished = True
                break
    else:
        finished = not (stop is not None and stop.requested)
    bar.close()
    minutes = (time.perf_counter() - started) / 60
    if not has_model(out):
        save_checkpoint(model, tokenizer, out, cfg, {"step": curve[-1]["step"]})
    report = {
        "train_rows": len(train),
        "dev_rows": len(dev),
        "best_dev_loss": round(best, 4),
        "best_dev_perplexity": round(math.exp(min(best, 50)), 3),
        "curve": curve,
        "minutes": round(minutes, 1),
        "device": cfg.device,
        "interrupted": bool(stop is not None and stop.requested),
    }
    write_text(out / "train_config.json", cfg.model_dump_json(indent=2) + "\n")
    write_text(out / "metrics.json", json.dumps(report, indent=2) + "\n")
    if finished:  # a finished run has nothing to resume
        shutil.rmtree(out / RESUME_DIR, ignore_errors=True)
    return report
