"""``purr train editor``: train a denoising editor on ``purr data make`` rows, maximising
P(clean | corrupted, evidence).

- ``--arch fid``: a T5-family model read as fusion-in-decoder (editor/fid.py): the corrupted
  statement paired with each of 4 evidence snippets (E+ first filled up with hard negatives E-,
  in shuffled order, as in PURR), each pair encoded separately.
- ``--arch causal``: a causal LM on the editor prompt (editor/prompts/editor_causal.txt) with
  the loss on the revision tokens only.

LoRA (peft, every linear layer) or full fine-tuning; AdamW with linear warm-up and decay; bf16
autocast on CUDA; validation loss on a held-out split (by query, never by row) every
``--eval-every`` steps, the best checkpoint kept (``save_pretrained``: the adapter, or the whole
model), early stopping after ``--patience`` evaluations without improvement. The resolved
settings (``train_config.json``) and the curve (``metrics.json``) are saved beside it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from tqdm.auto import tqdm

log = logging.getLogger(__name__)


class EditorTrainConfig(BaseModel):
    """Everything that determines a training run (saved as train_config.json)."""

    model_config = ConfigDict(extra="forbid")

    data: str
    arch: Literal["fid", "causal"]
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
    n_evidence: int = Field(4, ge=1, le=16)
    max_length: int = Field(256, ge=16, description="fid: tokens per pair; causal: prompt")
    max_target_length: int = Field(96, ge=8)
    seed: int = 0
    device: str = "cpu"


# the settings `purr train editor` takes as --flags (and the model card writes back)
CLI_FIELDS = (
    "lora_r", "lora_alpha", "lr", "batch_size", "max_steps", "warmup_steps", "eval_every",
    "patience", "dev_share", "dev_limit", "n_evidence", "max_length", "max_target_length", "seed",
)  # fmt: skip


def is_dev_row(row: dict[str, Any], share: float) -> bool:
    """Deterministic split by the row's query (rows of one query stay together).

    >>> is_dev_row({"query": "who built it"}, 0.5) in (True, False)
    True
    """
    digest = hashlib.sha1(str(row.get("query", row.get("id"))).encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < share


def read_rows(path: Path) -> list[dict[str, Any]]:
    from retrieval.corpus import jsonl_rows

    rows = []
    need = {"corrupted", "clean", "evidence_pos", "evidence_neg"}
    for lineno, row in jsonl_rows(path):
        if not isinstance(row, dict) or not need <= set(row):
            raise ValueError(
                f"{path}:{lineno}: a row needs {sorted(need)} (make them with `purr data make`)"
            )
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no rows")
    return rows


def evidence_set(row: dict[str, Any], n: int, rng: random.Random) -> list[str]:
    """E+ filled up to ``n`` with hard negatives, shuffled (PURR's 4 evidence per example)."""
    ev = list(row["evidence_pos"][:n])
    ev += list(row["evidence_neg"][: n - len(ev)])
    rng.shuffle(ev)
    return ev


class _Objective:
    """The training loss of one architecture over a batch of rows."""

    def __init__(self, cfg: EditorTrainConfig, model: Any, tokenizer: Any) -> None:
        self.cfg = cfg
        self.model = model
        self.tokenizer = tokenizer
        if cfg.arch == "causal":
            from editor.agreement import load_template
            from editor.causal import DEFAULT_PROMPT

            self.template = load_template(None, DEFAULT_PROMPT, ["evidence", "text"])

    def loss(self, rows: Sequence[dict[str, Any]], rng: random.Random) -> Any:
        if self.cfg.arch == "fid":
            from editor.fid import fid_loss, fid_passages

            batch = [
                fid_passages(r["corrupted"], evidence_set(r, self.cfg.n_evidence, rng))
                for r in rows
            ]
            return fid_loss(
                self.model,
                self.tokenizer,
                batch,
                [r["clean"] for r in rows],
                self.cfg.max_length,
                self.cfg.max_target_length,
                self.cfg.device,
            )
        return causal_loss(self, rows, rng)


def causal_loss(obj: _Objective, rows: Sequence[dict[str, Any]], rng: random.Random) -> Any:
    """Cross-entropy of `` <clean>\n`` after the editor prompt; prompt tokens are ignored.

    Rows are left-padded so every target ends at the last position, and the LM head runs on the
    last ``max target + 1`` positions only (``logits_to_keep``): with Gemma's 262k-token
    vocabulary the head over the whole prompt would cost more than the rest of the model."""
    import torch

    from editor.causal import render_causal

    tok, cfg = obj.tokenizer, obj.cfg
    ids, n_target = [], []
    for r in rows:
        prompt = render_causal(obj.template, r["corrupted"], evidence_set(r, cfg.n_evidence, rng))
        p = tok(prompt, add_special_tokens=True).input_ids[-cfg.max_length :]
        t = tok(" " + r["clean"].strip() + "\n", add_special_tokens=False).input_ids
        t = t[: cfg.max_target_length]
        ids.append(p + t)
        n_target.append(len(t))
    width = max(len(x) for x in ids)
    keep = max(n_target) + 1
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
    labels = torch.full((len(ids), width), -100, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for i, (x, n) in enumerate(zip(ids, n_target, strict=True)):
        input_ids[i, width - len(x) :] = torch.tensor(x)
        labels[i, width - n :] = torch.tensor(x[-n:])
        mask[i, width - len(x) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    logits = obj.model(
        input_ids=input_ids.to(cfg.device),
        attention_mask=mask.to(cfg.device),
        position_ids=positions.to(cfg.device),
        logits_to_keep=keep,
    ).logits  # (batch, keep, vocab): positions width-keep .. width-1
    target = labels[:, width - keep + 1 :].to(cfg.device)  # the tokens those positions predict
    return torch.nn.functional.cross_entropy(
        logits[:, :-1].float().reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=-100
    )


def load_base(cfg: EditorTrainConfig) -> tuple[Any, Any]:
    """Tokenizer and trainable model (with LoRA when asked)."""
    if cfg.arch == "fid":
        from editor.fid import load_seq2seq

        tokenizer, model = load_seq2seq(cfg.base, None, cfg.device)
        task = "SEQ_2_SEQ_LM"
    else:
        from editor.causal import load_causal

        tokenizer, model = load_causal(cfg.base, None, cfg.device)
        tokenizer.padding_side = "right"
        task = "CAUSAL_LM"
    if cfg.lora:
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
    return tokenizer, model


def _save(model: Any, tokenizer: Any, out: Path, cfg: EditorTrainConfig) -> None:
    """The adapter alone (the editor loads the base's tokenizer), or the whole model with its
    tokenizer after full fine-tuning."""
    model.save_pretrained(out)
    if not cfg.lora:
        tokenizer.save_pretrained(out)


def train_editor(cfg: EditorTrainConfig, progress: bool = True) -> dict[str, Any]:
    import torch

    torch.manual_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    rows = read_rows(Path(cfg.data))
    dev = [r for r in rows if is_dev_row(r, cfg.dev_share)]
    train = [r for r in rows if not is_dev_row(r, cfg.dev_share)]
    if not train or not dev:
        raise ValueError(
            f"{len(rows)} rows split into {len(train)} train / {len(dev)} dev; make more rows "
            "or change --dev-share"
        )
    dev = dev[: cfg.dev_limit]
    tokenizer, model = load_base(cfg)
    obj = _Objective(cfg, model, tokenizer)
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
                total += float(obj.loss(batch, drng)) * len(batch)
                n += len(batch)
        model.train()
        return total / n

    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    curve: list[dict[str, float]] = [{"step": 0, "dev_loss": round(dev_loss(), 4)}]
    best, bad, order, pos = curve[0]["dev_loss"], 0, list(range(len(train))), len(train)
    started = time.perf_counter()
    bar = tqdm(range(cfg.max_steps), desc=f"train editor ({cfg.arch})", disable=not progress)
    for step in bar:
        if pos + cfg.batch_size > len(order):
            rng.shuffle(order)
            pos = 0
        batch = [train[i] for i in order[pos : pos + cfg.batch_size]]
        pos += cfg.batch_size
        with torch.autocast("cuda", torch.bfloat16, enabled=use_bf16):
            loss = obj.loss(batch, rng)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optim.step()
        sched.step()
        optim.zero_grad(set_to_none=True)
        bar.set_postfix(loss=f"{float(loss.detach()):.3f}", best_dev=f"{best:.3f}")
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.max_steps:
            current = dev_loss()
            curve.append({"step": step + 1, "dev_loss": round(current, 4)})
            if current < best - 1e-4 or len(curve) == 2:
                best, bad = min(best, current), 0
                _save(model, tokenizer, out, cfg)
            else:
                bad += 1
                if bad >= cfg.patience:
                    log.info("early stop at step %d (dev loss %.4f)", step + 1, current)
                    break
    bar.close()
    minutes = (time.perf_counter() - started) / 60
    if not (out / "adapter_config.json").exists() and not (out / "config.json").exists():
        _save(model, tokenizer, out, cfg)
    report = {
        "train_rows": len(train),
        "dev_rows": len(dev),
        "best_dev_loss": round(best, 4),
        "best_dev_perplexity": round(math.exp(min(best, 50)), 3),
        "curve": curve,
        "minutes": round(minutes, 1),
        "device": cfg.device,
    }
    (out / "train_config.json").write_text(cfg.model_dump_json(indent=2) + "\n")
    (out / "metrics.json").write_text(json.dumps(report, indent=2) + "\n")
    return report
