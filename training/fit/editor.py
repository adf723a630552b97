"""``purr train editor``: train a denoising editor on ``purr data make`` rows, maximising
P(clean | corrupted, evidence).

- ``--arch fid``: a T5-family model read as fusion-in-decoder (editor/revision/editors/fid.py): the corrupted
  statement paired with each of 4 evidence snippets (E+ first filled up with hard negatives E-,
  in shuffled order, as in PURR), each pair encoded separately. ``--base scratch:t5-mini``
  builds the T5 (training/fit/scratch_t5.py) when no pretrained one is at hand.
- ``--arch causal``: a causal LM on the editor prompt (editor/prompts/editor_causal.txt) with
  the loss on the revision tokens only.

LoRA (peft, every linear layer) or full fine-tuning, dev split by query (never by row); the
loop, checkpoints and reports are training/fit/loop.py's.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from training.data.seeds import read_editor_rows
from training.fit.loop import TrainLoopConfig, causal_lm_loss, fit, split_rows, with_lora


class EditorTrainConfig(TrainLoopConfig):
    """Everything that determines an editor training run (saved as train_config.json)."""

    arch: Literal["fid", "causal"]
    base: str = Field(
        description="hub id, local path or packaged:NAME of the base model; fid also "
        "scratch:t5-mini|t5-small (a T5 trained from scratch, training/fit/scratch_t5.py)"
    )
    n_evidence: int = Field(4, ge=1, le=16)

    @model_validator(mode="after")
    def _scratch_is_full_fid(self) -> EditorTrainConfig:
        if self.base.startswith("scratch:"):
            if self.arch != "fid":
                raise ValueError(
                    f"base={self.base} builds a T5, which only arch=fid trains; use --arch fid "
                    "or a causal base such as packaged:gemma-3-270m"
                )
            if self.lora:
                raise ValueError(
                    f"base={self.base} has no pretrained weights for lora=true to adapt; "
                    "pass --no-lora"
                )
        return self


# the settings `purr train editor` takes as --flags (and the model card writes back)
CLI_FIELDS = (
    "lora_r", "lora_alpha", "lr", "batch_size", "max_steps", "warmup_steps", "eval_every",
    "patience", "dev_share", "dev_limit", "n_evidence", "max_length", "max_target_length", "seed",
)  # fmt: skip


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
            from editor.prompts import load_template
            from editor.revision.editors.causal import DEFAULT_PROMPT

            self.template = load_template(None, DEFAULT_PROMPT, ["evidence", "text"])

    def loss(self, rows: Sequence[dict[str, Any]], rng: random.Random) -> Any:
        if self.cfg.arch == "fid":
            from editor.revision.editors.fid import fid_loss, fid_passages

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
    """Cross-entropy of `` <clean>\n`` after the editor prompt (training/fit/loop.py)."""
    from editor.revision.editors.causal import render_causal

    cfg = obj.cfg
    pairs = [
        (
            render_causal(obj.template, r["corrupted"], evidence_set(r, cfg.n_evidence, rng)),
            " " + r["clean"].strip() + "\n",
        )
        for r in rows
    ]
    return causal_lm_loss(
        obj.model, obj.tokenizer, pairs, cfg.max_length, cfg.max_target_length, cfg.device
    )


def row_texts(rows: Sequence[dict[str, Any]]) -> Iterator[str]:
    """Every text of the rows (what a scratch tokenizer learns its vocabulary from)."""
    for r in rows:
        yield r["clean"]
        yield r["corrupted"]
        yield from r["evidence_pos"]
        yield from r["evidence_neg"]


def load_base(cfg: EditorTrainConfig, rows: Sequence[dict[str, Any]] = ()) -> tuple[Any, Any]:
    """Tokenizer and trainable model (with LoRA when asked); ``scratch:`` bases are built
    from ``rows``' text."""
    if cfg.base.startswith("scratch:"):
        from training.fit.scratch_t5 import build_scratch

        tokenizer, model = build_scratch(cfg.base, row_texts(rows))
        model.to(cfg.device)
        model.train()
        return tokenizer, model
    if cfg.arch == "fid":
        from editor.revision.editors.fid import load_seq2seq

        tokenizer, model = load_seq2seq(cfg.base, None, cfg.device)
        task = "SEQ_2_SEQ_LM"
    else:
        from editor.llm.loading import load_causal

        tokenizer, model = load_causal(cfg.base, None, cfg.device)
        tokenizer.padding_side = "right"
        task = "CAUSAL_LM"
    return tokenizer, with_lora(model, cfg, task)


def train_editor(cfg: EditorTrainConfig, progress: bool = True, stop: Any = None) -> dict[str, Any]:
    import torch

    torch.manual_seed(cfg.seed)
    train, dev = split_rows(read_editor_rows(Path(cfg.data)), cfg)
    tokenizer, model = load_base(cfg, train)
    obj = _Objective(cfg, model, tokenizer)
    desc = f"train editor ({cfg.arch})"
    return fit(cfg, model, tokenizer, train, dev, obj.loss, desc, progress, stop)
