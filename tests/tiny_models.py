"""Tiny randomly initialised models built from configs, for tests of the model-loading paths."""

from __future__ import annotations

from pathlib import Path

from retrieval.assets import packaged_path


def save_tiny_bert_nli(path: Path, id2label: dict[int, str], seed: int = 0) -> Path:
    """A 2-layer BERT sequence classifier with the given labels, saved with its tokenizer."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    tokenizer = BertTokenizerFast.from_pretrained(str(packaged_path("ms-marco-minilm-l12")))
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        initializer_range=0.3,  # random logits far enough apart to tell labels apart
        num_labels=len(id2label),
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    torch.manual_seed(seed)
    BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
