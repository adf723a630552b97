"""Fusion-in-decoder T5 editor (PURR): the text paired with each of up to N evidence snippets,
each pair encoded separately, the decoder attending over all encodings at once, the revision
written in one pass.

Works with any Hugging Face T5-family checkpoint (``T5ForConditionalGeneration``: T5, Flan-T5,
a local folder) and an optional peft LoRA adapter. The input format, shared with the trainer in
``training/``::

    claim: <text> context: <dialogue context> evidence: <title>. <snippet>

Examples in a batch with fewer snippets than the widest get empty, fully masked passages, so the
decoder never attends to them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from editor.revision.editors.base import Revision
from editor.revision.editors.model import ModelEditor
from editor.text.words import focus
from editor.types import Evidence, evidence_text

log = logging.getLogger(__name__)


def fid_passages(text: str, evidence: Sequence[str], context: str | None = None) -> list[str]:
    """The encoder inputs of one example: one string per evidence snippet.

    >>> fid_passages("Paris is in Spain.", ["Paris is the capital of France."])
    ['claim: Paris is in Spain. evidence: Paris is the capital of France.']
    """
    ctx = f" context: {context.strip()}" if context and context.strip() else ""
    head = f"claim: {text.strip()}{ctx}"
    if not evidence:
        return [head]
    return [f"{head} evidence: {e.strip()}" for e in evidence]


def encode_fid(
    model: Any,
    tokenizer: Any,
    batch: Sequence[Sequence[str]],
    max_length: int,
    device: str = "cpu",
) -> tuple[Any, Any]:
    """Encode every passage of every example separately; return the encoder states joined per
    example, ``(batch, passages * tokens, d_model)``, and the matching attention mask."""

    width = max(len(p) for p in batch)
    flat = [p for passages in batch for p in passages] or [""]
    enc = tokenizer(
        flat, truncation=True, max_length=max_length, padding=True, return_tensors="pt"
    ).to(device)
    encoder = model.get_encoder()
    hidden = encoder(input_ids=enc.input_ids, attention_mask=enc.attention_mask).last_hidden_state
    tokens, dim = hidden.shape[1], hidden.shape[2]
    states = hidden.new_zeros((len(batch), width, tokens, dim))
    mask = enc.attention_mask.new_zeros((len(batch), width, tokens))
    row = 0
    for i, passages in enumerate(batch):
        n = len(passages)
        states[i, :n] = hidden[row : row + n]
        mask[i, :n] = enc.attention_mask[row : row + n]
        row += n
    return states.view(len(batch), width * tokens, dim), mask.view(len(batch), width * tokens)


def fid_loss(
    model: Any,
    tokenizer: Any,
    batch: Sequence[Sequence[str]],
    targets: Sequence[str],
    max_length: int = 256,
    max_target_length: int = 128,
    device: str = "cpu",
) -> Any:
    """Teacher-forced cross-entropy of ``targets`` given the fused passages (the FiD training
    objective, maximise P(y | x, E)); padding positions are ignored."""
    states, mask = encode_fid(model, tokenizer, batch, max_length, device)
    labels = tokenizer(
        list(targets),
        truncation=True,
        max_length=max_target_length,
        padding=True,
        return_tensors="pt",
    ).input_ids.to(device)
    labels[labels == tokenizer.pad_token_id] = -100
    from transformers.modeling_outputs import BaseModelOutput

    out = model(
        encoder_outputs=BaseModelOutput(last_hidden_state=states),
        attention_mask=mask,
        labels=labels,
    )
    return out.loss


def load_seq2seq(ref: str, adapter: str | None, device: str, offline: bool = True) -> tuple:
    """Tokenizer and T5-family model from a packaged:/path/hub reference, with a LoRA adapter."""
    from retrieval.extras import require

    require("llm", f"the fusion-in-decoder editor ({ref})")
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from retrieval.assets import resolve

    resolved = resolve(ref)
    local_only = resolved.source != "hub" or offline
    try:
        tokenizer = AutoTokenizer.from_pretrained(resolved.load_id, local_files_only=local_only)
        model = AutoModelForSeq2SeqLM.from_pretrained(resolved.load_id, local_files_only=local_only)
    except OSError as e:
        raise OSError(
            f"cannot load the FiD editor model '{ref}' ({e}); pass a local T5 folder or a hub id "
            "already in the local Hugging Face cache (this machine does not download models)"
        ) from None
    if adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter)
    model.to(device)
    model.eval()
    return tokenizer, model


class FiDEditor(ModelEditor):
    """The PURR editor over a T5 checkpoint (see the module doc). Greedy or beam search."""

    name = "fid"

    def __init__(
        self,
        model: str | Any,
        tokenizer: Any = None,
        adapter: str | None = None,
        max_input_tokens: int = 256,
        offline: bool = True,
        **generation: Any,
    ) -> None:
        super().__init__(model, tokenizer, adapter, **generation)
        self.max_input_tokens = max_input_tokens
        self.offline = offline

    def _load(self) -> tuple[Any, Any]:
        return load_seq2seq(self.ref, self.adapter, self.device, self.offline)

    def edit_batch(
        self, items: Sequence[tuple[str, Sequence[Evidence]]], context: str | None = None
    ) -> list[Revision]:
        import torch
        from transformers.modeling_outputs import BaseModelOutput

        if not items:
            return []
        tokenizer, model = self.load()
        batch = [
            fid_passages(t, [focus(evidence_text(e), t) for e in ev[: self.max_evidence]], context)
            for t, ev in items
        ]
        with torch.inference_mode():
            states, mask = encode_fid(model, tokenizer, batch, self.max_input_tokens, self.device)
            out = model.generate(
                encoder_outputs=BaseModelOutput(last_hidden_state=states),
                attention_mask=mask,
                max_new_tokens=self.max_new_tokens,
                num_beams=self.num_beams,
                do_sample=False,
            )
        texts = tokenizer.batch_decode(out, skip_special_tokens=True)
        result = []
        for (text, _), passages, new in zip(items, batch, texts, strict=True):
            new = new.strip()
            if not new:
                result.append(Revision(text, "the FiD editor produced nothing"))
            else:
                result.append(Revision(new, f"FiD revision over {len(passages)} passage(s)"))
        return result

    def score_targets(
        self, items: Sequence[tuple[str, Sequence[str], str]], context: str | None = None
    ) -> list[float]:
        """log P(target | text, evidence) for each ``(text, evidence texts, target)``: the sum of
        the target's token log-probabilities (teacher-forced)."""
        import torch
        from transformers.modeling_outputs import BaseModelOutput

        tokenizer, model = self.load()
        batch = [fid_passages(t, list(ev[: self.max_evidence]), context) for t, ev, _ in items]
        with torch.inference_mode():
            states, mask = encode_fid(model, tokenizer, batch, self.max_input_tokens, self.device)
            labels = tokenizer(
                [y for _, _, y in items], padding=True, return_tensors="pt"
            ).input_ids.to(self.device)
            keep = labels != tokenizer.pad_token_id
            labels = labels.masked_fill(~keep, -100)
            logits = model(
                encoder_outputs=BaseModelOutput(last_hidden_state=states),
                attention_mask=mask,
                labels=labels,
            ).logits  # (batch, target_len, vocab)
            logp = torch.log_softmax(logits.float(), dim=-1)
            picked = logp.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
            return (picked * keep).sum(-1).tolist()
