"""The attribution classifier being trained: a base with a new 3-label head (full or LoRA),
batches of pairs, P(supported) over a split and the dev metrics early stopping reads.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from editor.verdicts import SUPPORTED
from training.data.nli import LABELS, NLI_FILES, NLIExample
from training.eval.attribution_metrics import balanced_accuracy, roc_auc
from training.fit.attribution_config import TrainAttributionConfig


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def load_classifier(base: str, cfg: TrainAttributionConfig) -> tuple[Any, Any]:
    """Tokenizer and a 3-label sequence classifier over ``base`` (LoRA-wrapped if asked)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from retrieval.assets import resolve

    load_id = resolve(base).load_id
    tokenizer = AutoTokenizer.from_pretrained(load_id)
    model = AutoModelForSequenceClassification.from_pretrained(
        load_id,
        dtype=torch.float32,  # train in fp32 (bf16 autocast on CUDA) whatever the saved dtype
        num_labels=len(LABELS),
        id2label=dict(enumerate(LABELS)),
        label2id={label: i for i, label in enumerate(LABELS)},
        ignore_mismatched_sizes=True,  # a base with another head gets a fresh 3-way head
    )
    if cfg.init_from:  # start from trained weights (a partial folder loads over its base)
        from editor.llm.partial import is_partial_folder, load_partial

        init = str(Path(cfg.init_from).expanduser())
        model = (
            load_partial(AutoModelForSequenceClassification, init, load_id)
            if is_partial_folder(init)
            else AutoModelForSequenceClassification.from_pretrained(init)
        ).float()
    if cfg.freeze_embeddings:
        model.get_input_embeddings().weight.requires_grad_(False)
    if cfg.lora:
        try:
            from peft import LoraConfig, PeftModel, TaskType, get_peft_model
        except ImportError as e:
            raise ImportError("LoRA training needs peft: pip install 'peft>=0.17'") from e
    if cfg.init_adapter:  # continue a saved adapter (its head and pooler come with it)
        path = str(Path(cfg.init_adapter).expanduser())
        return tokenizer, PeftModel.from_pretrained(model, path, is_trainable=True)
    if cfg.lora:
        names = {n.rsplit(".", 1)[-1] for n, _ in model.named_modules()}
        extra = ["pooler"] if "pooler" in names else []
        lora = LoraConfig(
            task_type=TaskType.SEQ_CLS,
            r=cfg.lora_r,
            lora_alpha=cfg.lora_alpha,
            lora_dropout=cfg.lora_dropout,
            target_modules=cfg.lora_targets,
            modules_to_save=extra or None,  # the classifier head is added by SEQ_CLS
        )
        model = get_peft_model(model, lora)
    return tokenizer, model


def batches(tokenizer: Any, rows: list[NLIExample], max_length: int, batch_size: int):
    for i in range(0, len(rows), batch_size):
        chunk = rows[i : i + batch_size]
        enc = tokenizer(
            [r.premise for r in chunk],
            [r.hypothesis for r in chunk],
            truncation="longest_first",
            max_length=max_length,
            padding=True,
            return_tensors="pt",
        )
        yield chunk, enc


def predict_supported(
    model: Any,
    tokenizer: Any,
    rows: list[NLIExample],
    max_length: int,
    batch_size: int,
    device: str,
    progress: bool = False,
) -> np.ndarray:
    """P(supported) of each row (premises as given, truncated to ``max_length``)."""
    import torch

    model.eval()
    out: list[np.ndarray] = []
    chunks = batches(tokenizer, rows, max_length, batch_size)
    total = math.ceil(len(rows) / batch_size)
    with torch.inference_mode():
        for _, enc in tqdm(chunks, total=total, desc="dev", disable=not progress, leave=False):
            logits = model(**enc.to(device)).logits.float()  # (batch, 3)
            out.append(torch.softmax(logits, -1)[:, 0].cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0)


def dev_metrics(rows: list[NLIExample], p_supported: np.ndarray) -> dict[str, float]:
    """Per-source balanced accuracy (0.5) and ROC-AUC, supported vs rest, and their means over
    all sources (``mean_*``) and over the shared NLI sets alone (``shared_mean_*``, primary:
    the best state is chosen on it, not on the project's own synthetic pairs)."""
    out: dict[str, float] = {}
    for source in sorted({r.source for r in rows}):
        idx = [i for i, r in enumerate(rows) if r.source == source]
        y = np.array([rows[i].label == SUPPORTED for i in idx], dtype=int)
        out[f"{source}/balanced_accuracy"] = balanced_accuracy(y, p_supported[idx])
        out[f"{source}/roc_auc"] = roc_auc(y, p_supported[idx])
    for name in ("balanced_accuracy", "roc_auc"):
        values = [v for k, v in out.items() if k.endswith(name) and not math.isnan(v)]
        out[f"mean_{name}"] = float(np.mean(values)) if values else float("nan")
        shared = [
            v
            for k, v in out.items()
            if k.split("/")[0] in NLI_FILES and k.endswith(name) and not math.isnan(v)
        ]
        out[f"shared_mean_{name}"] = float(np.mean(shared)) if shared else out[f"mean_{name}"]
    return out
