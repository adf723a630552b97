"""The span judge's network: one BERT cross-encoder over ``[question] claim [SEP] evidence``
with three heads, and the one encoding of a pair that training and inference share.

- ``pair``: supported / contradicted / not enough, from the pooled [CLS] (the verifier's head);
- ``token``: per claim token, O / B-C / I-C / B-U / I-U (C: the evidence states another value;
  U: the evidence does not say);
- ``pointer``: start and end logits over the evidence tokens for the span marked ``« »`` in the
  claim: the evidence words that state the right value; [CLS] (position 0) means "none".

Needs numpy, torch and transformers only (it also runs where purr is not installed).
"""

from __future__ import annotations

import numpy as np

TOKEN_TAGS = ("O", "B-C", "I-C", "B-U", "I-U")
MARK_OPEN, MARK_CLOSE = "«", "»"
IGNORE = -100


def first_segment(claim: str, question: str = "") -> tuple[str, int]:
    """The first segment's text and where the claim starts in it."""
    if not question.strip():
        return claim, 0
    prefix = question.strip() + " [SEP] "
    return prefix + claim, len(prefix)


def marked(claim: str, start: int, end: int) -> tuple[str, list[int]]:
    """``claim`` with ``« »`` around ``[start, end)`` and, for each character of the marked
    text, the claim character it came from (-1 for the marks).

    >>> marked("He was a Catholic priest.", 9, 17)[0]
    'He was a « Catholic » priest.'
    """
    text = claim[:start] + MARK_OPEN + " " + claim[start:end] + " " + MARK_CLOSE + claim[end:]
    origin = list(range(start)) + [-1, -1] + list(range(start, end)) + [-1, -1]
    origin += list(range(end, len(claim)))
    return text, origin


def encode_batch(tokenizer, firsts: list[str], evidences: list[str], max_length: int):
    """Encodings of ``(first segment, evidence)`` pairs, the evidence truncated to fit.

    ``tokenizer`` is a ``tokenizers.Tokenizer``; its truncation and padding are set here."""
    tokenizer.enable_truncation(max_length, strategy="longest_first")
    tokenizer.no_padding()
    return tokenizer.encode_batch(list(zip(firsts, evidences, strict=True)))


def layout(enc) -> tuple[int, list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """The first segment's length (with [CLS] and [SEP]) and the tokens of each segment with
    their character offsets."""
    firsts, seconds = [], []
    for i, (seq, (a, b)) in enumerate(zip(enc.sequence_ids, enc.offsets, strict=True)):
        if seq == 0:
            firsts.append((i, a, b))
        elif seq == 1:
            seconds.append((i, a, b))
    segment = seconds[0][0] if seconds else len(enc.ids)
    return segment, firsts, seconds


def build_model(config_kwargs: dict):
    """The network with fresh heads over a BERT built from ``config_kwargs``."""
    import torch
    from transformers import BertConfig, BertModel

    class SpanJudgeModel(torch.nn.Module):
        def __init__(self, config: BertConfig):
            super().__init__()
            self.config = config
            self.bert = BertModel(config, add_pooling_layer=True)
            self.dropout = torch.nn.Dropout(config.hidden_dropout_prob)
            self.classifier = torch.nn.Linear(config.hidden_size, 3)
            self.token = torch.nn.Linear(config.hidden_size, len(TOKEN_TAGS))
            self.pointer = torch.nn.Linear(config.hidden_size, 2)

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            seq = self.dropout(out.last_hidden_state)  # (batch, seq_len, hidden)
            pair = self.classifier(self.dropout(out.pooler_output))  # (batch, 3)
            tokens = self.token(seq)  # (batch, seq_len, 5)
            start, end = self.pointer(seq).unbind(-1)  # (batch, seq_len) each
            # the pointer may land on [CLS] ("none") or an evidence token only
            allowed = (token_type_ids == 1) & (attention_mask == 1)
            allowed[:, 0] = True
            neg = torch.finfo(start.dtype).min
            start = start.masked_fill(~allowed, neg)
            end = end.masked_fill(~allowed, neg)
            return pair, tokens, start, end

    return SpanJudgeModel(BertConfig(**config_kwargs))


def pad(rows: list[np.ndarray], segments: list[int]):
    """ids, attention mask and token types (1 from the second segment on) of a batch."""
    width = max(len(r) for r in rows)
    ids = np.zeros((len(rows), width), np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for i, (r, s) in enumerate(zip(rows, segments, strict=True)):
        ids[i, : len(r)], mask[i, : len(r)], types[i, s : len(r)] = r, 1, 1
    return ids, mask, types
