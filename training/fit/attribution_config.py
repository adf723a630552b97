"""``purr train attribution``'s settings: one pydantic model, saved as ``training_config.json``
beside every trained attribution model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from training.data.nli import NLI_FILES
from training.data.nli_sources import expand, trainable


class TrainAttributionConfig(BaseModel):
    """Everything a training run depends on; saved as ``training_config.json`` in ``out``."""

    model_config = ConfigDict(extra="forbid")

    out: str = Field(description="Output folder (created).")
    base: str = Field(
        "packaged:all-minilm-l6-v2", description="Base encoder: packaged:, path or hub id."
    )
    data_dir: str | None = Field(None, description="shared/data folder; None = ../shared/data.")
    sources: list[str] = Field(
        default_factory=lambda: list(NLI_FILES),
        description="NLI sets (training.data.nli_sources) or aliases: shared, extra. 'dev'-use sets "
        "are measured, never trained on; 'eval'-only sets are refused.",
    )
    splits: str | None = Field(
        None,
        description="Prepared train/dev examples (written by save_splits) to train on instead "
        "of preparing them from data_dir.",
    )
    save_splits: str | None = Field(
        None, description="Write the prepared train/dev examples here (.jsonl, .gz or .xz)."
    )
    wiki_articles: int = Field(3000, ge=0, description="Articles for synthetic pairs (0 = none).")
    role_swaps: float = Field(
        0.0, ge=0, le=1, description="Share of synthetic articles that add a role-swap pair."
    )
    same_article_neutrals: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Share of synthetic articles that add the sentence against the article's "
        "other sentences as not_supported (about the subject, not stating the fact).",
    )
    multi_facts: int = Field(
        0,
        ge=0,
        description="Articles for multi-fact pairs (training.data.nli_multifact: two facts "
        "fused in one claim, supported by both sentences, not supported with one left out; "
        "0 = none).",
    )
    paraphrases: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Share of each source's train rows also given reworded (training.data."
        "nli_paraphrase: a time or place phrase fronted, active to passive, a copula inverted; "
        "same label), as source NAME-paraphrase.",
    )
    edit_pairs: bool = Field(
        False,
        description="Add sentence-level contrast pairs from SummEdits' minimal edits "
        "(training.data.nli_contrast; needs summedits among the sources).",
    )
    make_rows: list[str] = Field(
        default_factory=list,
        description="`purr data make` rows to add as pairs (training.data.nli_pairs): the clean "
        "statement supported and its corruption contradicted by the same evidence.",
    )
    init_adapter: str | None = Field(
        None,
        description="A saved LoRA attribution adapter to continue training (lora=True, its r).",
    )
    init_from: str | None = Field(
        None,
        description="A trained attribution folder (full or partial weights over ``base``) whose "
        "weights start the run, e.g. the shipped model to distil into.",
    )
    teacher: str | None = Field(
        None,
        description="A teacher's 3-way probabilities of the train rows (``probs.npz`` of "
        "training.fit.decoder_train, rows in the order of ``splits``): distil from them.",
    )
    distill: float = Field(
        0.5, ge=0, le=1, description="Weight of the teacher's soft labels in the loss."
    )
    limit_per_source: int | None = Field(None, ge=1, description="Cap on train rows per source.")
    dev_limit_per_source: int | None = Field(600, ge=1, description="Cap on dev rows per source.")
    dev_fraction: float = Field(0.15, gt=0, lt=1, description="Share of documents held out.")
    lora: bool = Field(False, description="Train a LoRA adapter + head instead of all weights.")
    lora_r: int = Field(16, ge=1)
    lora_alpha: int = Field(32, ge=1)
    lora_dropout: float = Field(0.1, ge=0, lt=1)
    lora_targets: list[str] | str = Field(
        "all-linear",
        description="LoRA target modules: 'all-linear' (every Linear but the head) or names "
        "such as ['query', 'value'].",
    )
    merge_lora: bool = Field(False, description="Save the LoRA model merged (a full folder).")
    freeze_embeddings: bool = Field(
        False,
        description="Full fine-tuning: keep the word embeddings as in the base and save only the "
        "weights that change, in half precision (a folder with purr_base.json that loads over "
        "the base; the embeddings alone are 47 MB in fp32).",
    )
    max_length: int = Field(256, ge=16, le=8192, description="Tokens per pair.")
    batch_size: int = Field(16, ge=1)
    lr: float | None = Field(None, gt=0, description="None: 3e-5 full, 5e-4 LoRA.")
    epochs: float = Field(1.0, gt=0)
    max_steps: int | None = Field(None, ge=1, description="Overrides epochs when set.")
    warmup_ratio: float = Field(0.06, ge=0, lt=1)
    weight_decay: float = Field(0.01, ge=0)
    grad_clip: float = Field(1.0, gt=0)
    balance: Literal["sampler", "loss", "none"] = Field(
        "sampler", description="Class balance: weighted sampling, weighted loss, or none."
    )
    eval_every: int = Field(200, ge=1, description="Steps between dev evaluations.")
    patience: int = Field(5, ge=1, description="Evaluations without improvement before stopping.")
    seed: int = 0
    device: str = Field("auto", description="auto = cuda when available, else cpu.")
    bf16: bool = Field(True, description="bf16 autocast on CUDA (ignored on CPU).")
    progress: bool = True
    resume: bool = Field(
        False,
        description="go on from the last evaluation of a run in `out` that was killed or "
        "stopped (weights, optimizer, schedule, data order, generators, best so far)",
    )

    @field_validator("sources")
    @classmethod
    def _sources(cls, value: list[str]) -> list[str]:
        return trainable(expand(value))

    @model_validator(mode="after")
    def _check(self) -> TrainAttributionConfig:
        if self.freeze_embeddings and self.lora:
            raise ValueError(
                "freeze_embeddings applies to full fine-tuning, but lora=True; drop one of them"
            )
        if self.merge_lora and not self.lora:
            raise ValueError("merge_lora needs lora=True; drop merge_lora or pass lora")
        if self.edit_pairs and "summedits" not in self.sources:
            raise ValueError(
                f"edit_pairs uses the SummEdits documents, but sources are {self.sources}; "
                "add summedits to sources or drop edit_pairs"
            )
        if self.init_adapter is not None:
            if not self.lora:
                raise ValueError(
                    "init_adapter continues a LoRA adapter, but lora=False; pass --lora or "
                    "drop --init-adapter"
                )
            saved = Path(self.init_adapter).expanduser() / "adapter_config.json"
            if not saved.is_file():
                raise ValueError(
                    f"init_adapter {self.init_adapter}: no adapter_config.json there; pass a "
                    "folder written by purr train attribution --lora"
                )
            r = json.loads(saved.read_text()).get("r")
            if r != self.lora_r:
                raise ValueError(
                    f"init_adapter {self.init_adapter} has LoRA rank {r} but lora_r is "
                    f"{self.lora_r}; set --lora-r {r}"
                )
        return self

    @property
    def resolved_lr(self) -> float:
        return self.lr if self.lr is not None else (5e-4 if self.lora else 3e-5)
