"""A causal LM's tokenizer read straight from ``tokenizer.json``, for inference.

``transformers.AutoTokenizer`` takes 2.5-3 s to open Gemma 3's 262k-token vocabulary on a
2-core CPU: ``tokenizers`` parses the file (1 s), then ``transformers`` parses the same 33 MB
JSON again for its added tokens and copies them. ``RawTokenizer`` keeps the first part only and
offers the calls the causal editor makes (encode with left padding to tensors, batch decode,
the special token ids), with the same ids as ``AutoTokenizer`` (tested). Training keeps the
``transformers`` tokenizer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Encoded:
    """``input_ids`` and ``attention_mask`` as lists, or as tensors after ``return_tensors``."""

    input_ids: Any
    attention_mask: Any

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def keys(self) -> list[str]:
        return ["input_ids", "attention_mask"]

    def to(self, device: str) -> Encoded:
        return Encoded(self.input_ids.to(device), self.attention_mask.to(device))


def _token(value: Any) -> str | None:
    if isinstance(value, dict):  # older tokenizer_config.json: {"content": "<eos>", ...}
        return value.get("content")
    return value


class RawTokenizer:
    """The subset of a ``transformers`` fast tokenizer that generation needs."""

    def __init__(self, folder: str | Path, padding_side: str = "left"):
        from tokenizers import Tokenizer

        folder = Path(folder)
        self._tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        config = json.loads((folder / "tokenizer_config.json").read_text("utf-8"))
        self.padding_side = padding_side
        self.eos_token = _token(config.get("eos_token"))
        self.pad_token = _token(config.get("pad_token")) or self.eos_token
        self.eos_token_id = self._id(self.eos_token)
        self.pad_token_id = self._id(self.pad_token)

    @classmethod
    def supports(cls, folder: str | Path) -> bool:
        """Whether ``folder`` has the files this reader needs."""
        folder = Path(folder)
        return (folder / "tokenizer.json").is_file() and (
            folder / "tokenizer_config.json"
        ).is_file()

    def _id(self, token: str | None) -> int | None:
        return None if token is None else self._tok.token_to_id(token)

    def __call__(
        self,
        texts: str | Sequence[str],
        add_special_tokens: bool = True,
        return_tensors: str | None = None,
        padding: bool = False,
    ) -> Encoded:
        single = isinstance(texts, str)
        batch = [texts] if single else list(texts)
        ids = [e.ids for e in self._tok.encode_batch(batch, add_special_tokens=add_special_tokens)]
        if return_tensors is None:
            masks = [[1] * len(x) for x in ids]
            return Encoded(ids[0], masks[0]) if single else Encoded(ids, masks)
        if return_tensors != "pt":
            raise ValueError(f"return_tensors must be 'pt' or None, got {return_tensors!r}")
        import torch

        width = max(len(x) for x in ids)
        if len({len(x) for x in ids}) > 1 and not padding:
            raise ValueError("texts of different lengths need padding=True")
        pad = self.pad_token_id if self.pad_token_id is not None else 0
        out = torch.full((len(ids), width), pad, dtype=torch.long)  # (batch, seq)
        mask = torch.zeros((len(ids), width), dtype=torch.long)  # (batch, seq)
        for i, row in enumerate(ids):
            span = (
                slice(width - len(row), width)
                if self.padding_side == "left"
                else slice(0, len(row))
            )
            out[i, span] = torch.tensor(row, dtype=torch.long)
            mask[i, span] = 1
        return Encoded(out, mask)

    def batch_decode(self, rows: Any, skip_special_tokens: bool = False) -> list[str]:
        rows = rows.tolist() if hasattr(rows, "tolist") else [list(r) for r in rows]
        return self._tok.decode_batch(rows, skip_special_tokens=skip_special_tokens)
