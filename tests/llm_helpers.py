"""Shared helpers of the LLM tests: the packaged SmolLM2 loaded once per process, and a real
uvicorn server on a free loopback port."""

from __future__ import annotations

import functools
from pathlib import Path

from editor.llm.transformers_backend import TransformersBackend
from serve import loopback_web

SMOLLM = "packaged:smollm2-135m-instruct"


@functools.cache
def smollm() -> TransformersBackend:
    """SmolLM2-135M-Instruct, greedy by default (converted once into the cache, then ~3 s)."""
    backend = TransformersBackend(SMOLLM, max_new_tokens=16, temperature=0.0)
    backend.load()
    return backend


def save_tiny_decoder(
    out: Path,
    model_class,
    *,
    token_ids: tuple[str, ...] = ("pad_token_id",),
    chat_template: bool = True,
    **config,
) -> Path:
    """A tiny random causal LM of ``model_class`` (hidden size 32, 2 layers, seed 0) over
    SmolLM2's tokenizer, saved with that tokenizer to ``out``; ``token_ids`` names the
    tokenizer's special-token ids the model's config takes, ``config`` the rest of it, and
    ``chat_template=False`` saves the tokenizer without its chat template."""
    import torch

    tokenizer = smollm().tokenizer
    cfg = model_class.config_class(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        **{name: getattr(tokenizer, name) for name in token_ids},
        **config,
    )
    torch.manual_seed(0)
    model_class(cfg).save_pretrained(out)
    saved = tokenizer.__class__.from_pretrained(smollm().location.load_id)
    if not chat_template:
        saved.chat_template = None
    saved.save_pretrained(out)
    return out


free_port = loopback_web.free_port
serve = loopback_web.serve_app
"""Run an app with uvicorn in a background thread; yields its base URL."""
