"""Shared test helpers: the real `purr` command as a subprocess, and tiny randomly initialised
models built from configs for the model-loading paths."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from retrieval.assets import packaged_path

# the result contract of DESIGN.md: Pipeline.edit, purr edit --json and POST /v1/edit
CONTRACT_KEYS = frozenset(
    "original revised context queries evidence steps report status warnings timings_ms".split()
)


def save_tiny_bert_nli(path: Path, id2label: dict[int, str] | None, seed: int = 0) -> Path:
    """A 2-layer BERT sequence classifier with the given labels (a bare encoder when
    ``id2label`` is None), saved with the packaged MiniLM WordPiece tokenizer."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizerFast

    tokenizer = BertTokenizerFast.from_pretrained(str(packaged_path("ms-marco-minilm-l12")))
    size = dict(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    torch.manual_seed(seed)
    if id2label is None:
        BertModel(BertConfig(**size)).save_pretrained(path)
    else:
        config = BertConfig(
            **size,
            initializer_range=0.3,  # random logits far enough apart to tell labels apart
            num_labels=len(id2label),
            id2label=id2label,
            label2id={v: k for k, v in id2label.items()},
        )
        BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def save_tiny_t5(
    path: Path, words: list[str], seed: int = 0, d_model: int = 32, init: float = 3.0
) -> Path:
    """A tiny random T5 (2 layers, d_model 32) with a lower-casing word-level tokenizer over
    ``words`` (which must start with ``<pad> </s> <unk>``), saved to ``path``."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    assert words[:3] == ["<pad>", "</s>", "<unk>"], "words must start with <pad> </s> <unk>"
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.normalizer = normalizers.Lowercase()
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.post_processor = processors.TemplateProcessing(  # like T5: append </s>
        single="$A </s>", pair="$A $B </s>", special_tokens=[("</s>", 1)]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    config = T5Config(
        vocab_size=len(words),
        d_model=d_model,
        d_ff=2 * d_model,
        d_kv=d_model // 2,
        num_layers=2,
        num_heads=2,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
        initializer_factor=init,
    )
    torch.manual_seed(seed)
    T5ForConditionalGeneration(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def run_purr(
    *args: str, env: dict[str, str] | None = None, timeout: int = 600
) -> subprocess.CompletedProcess:
    """``purr ARGS...`` as a user runs it (offline), capturing its output."""
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "serve.cli", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )
