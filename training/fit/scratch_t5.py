"""A T5 built from scratch for the FiD editor, since no pretrained T5 ships offline.

``--base scratch:NAME`` in ``purr train editor --arch fid`` makes one: a byte-level BPE
tokenizer trained on the training rows' own text (claims, revisions, evidence), so every
character round-trips and casing is kept, and a randomly initialised ``T5ForConditionalGeneration``
of the named size. It is then trained in full (no LoRA: there are no pretrained weights to
adapt) and saved with ``save_pretrained`` like any T5 checkpoint, so the FiD editor, and anyone
else, loads it by path. Pad is token 0 (also the decoder start, as in T5), ``</s>`` token 1.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

SPECIALS = ["<pad>", "</s>", "<unk>"]


@dataclass(frozen=True)
class ScratchSize:
    d_model: int
    d_ff: int
    heads: int
    layers: int
    vocab: int


SIZES = {
    # ~9M parameters: trains on a CPU in minutes (tests, smoke runs)
    "t5-mini": ScratchSize(d_model=256, d_ff=1024, heads=4, layers=4, vocab=8000),
    # ~40M parameters: the GPU recipe
    "t5-small": ScratchSize(d_model=512, d_ff=1536, heads=8, layers=6, vocab=16000),
    # tests only
    "t5-tiny": ScratchSize(d_model=32, d_ff=64, heads=2, layers=1, vocab=400),
}


def scratch_size(base: str) -> ScratchSize:
    """The size named by ``scratch:NAME``.

    >>> scratch_size("scratch:t5-mini").d_model
    256
    """
    name = base.split(":", 1)[1] if base.startswith("scratch:") else base
    if name not in SIZES:
        raise ValueError(f"unknown scratch model '{name}'; choose one of {', '.join(SIZES)}")
    return SIZES[name]


def train_tokenizer(texts: Iterable[str], vocab: int) -> Any:
    """A byte-level BPE tokenizer (T5's special tokens, ``</s>`` appended to every input)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", 1)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )


def new_t5(tokenizer: Any, size: ScratchSize) -> Any:
    """A randomly initialised T5 sized ``size`` over ``tokenizer``'s vocabulary."""
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=size.d_model,
        d_kv=size.d_model // size.heads,
        d_ff=size.d_ff,
        num_layers=size.layers,
        num_decoder_layers=size.layers,
        num_heads=size.heads,
        feed_forward_proj="gated-gelu",
        dropout_rate=0.1,
        tie_word_embeddings=True,  # T5 v1.0: shared embeddings, output scaled by d_model^-0.5
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    return T5ForConditionalGeneration(config)


def build_scratch(base: str, texts: Iterable[str]) -> tuple[Any, Any]:
    """Tokenizer (trained on ``texts``) and untrained T5 for ``scratch:NAME``."""
    size = scratch_size(base)
    tokenizer = train_tokenizer(texts, size.vocab)
    return tokenizer, new_t5(tokenizer, size)
