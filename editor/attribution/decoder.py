"""The large verifier: a decoder LM read as a 3-way NLI classifier (``attribution.model=large``).

An artefact folder holds ``decoder.json`` (the base model reference, the LoRA settings, the
token budget), ``adapter.safetensors`` (the LoRA weights and the linear head, fp16) and its
model card. The base is loaded like any causal LM of ``llm.model`` (the packaged Gemma-3-270M:
converted once from its GGUF into the user cache), the adapter merged into its linear layers,
and pairs scored as ``editor.attribution.decoder_model`` formats them. Long premises are
windowed like every ``ChunkedNLI`` model.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np

from editor.attribution.decoder_model import (
    LORA_TARGETS,
    TEMPLATE,
    build_model,
    encode_pair,
    merge_lora,
    pad_batch,
    read_adapter,
)
from editor.attribution.hf import quantize_int8
from editor.attribution.nli import ChunkedNLI
from retrieval.assets import AssetNotFoundError
from retrieval.collector import collector_paused

MANIFEST = "decoder.json"
ADAPTER = "adapter.safetensors"


def is_decoder_folder(path: Path) -> bool:
    return (path / MANIFEST).is_file()


class DecoderNLI(ChunkedNLI):
    """A decoder-LM verifier from an artefact folder; loads on first use, once."""

    def __init__(
        self,
        path: str | Path,
        *,
        batch_size: int,
        overlap: int,
        device: str,
        cache_dir: Path,
        quantize: str = "none",
    ) -> None:
        if quantize not in {"none", "int8"}:
            raise ValueError(f"quantize must be 'none' or 'int8', got {quantize!r}")
        self.path = Path(path)
        self.quantize = quantize
        try:
            self.manifest = json.loads((self.path / MANIFEST).read_text("utf-8"))
        except (OSError, ValueError) as e:
            raise AssetNotFoundError(
                f"{self.path / MANIFEST} is missing or not JSON ({e}); reinstall purr or point "
                "attribution.model at a folder written by training.fit.decoder_train"
            ) from None
        super().__init__(int(self.manifest["max_length"]), batch_size, overlap)
        self.device = device
        self.cache_dir = Path(cache_dir)
        self._lock = threading.Lock()
        self._model: Any = None
        self._tokenizer: Any = None
        self._overhead_tokens: int | None = None

    def load(self) -> None:
        """Load the base, merge the adapter (otherwise the first call does); idempotent."""
        with self._lock:
            if self._model is None:
                with collector_paused():
                    self._load()

    def _load(self) -> None:
        from peft import LoraConfig, inject_adapter_in_model
        from safetensors.torch import load_file
        from transformers import AutoTokenizer

        from editor.llm.model_files import locate_model

        folder = Path(locate_model(self.manifest["base"], self.cache_dir).load_id)
        tokenizer = AutoTokenizer.from_pretrained(folder)
        config = json.loads((folder / "config.json").read_text("utf-8"))
        model = build_model(config, int(config["vocab_size"]))
        base = load_file(str(next(folder.glob("*.safetensors"))))
        backbone = {k.removeprefix("model."): v for k, v in base.items() if k.startswith("model.")}
        model.backbone.load_state_dict(backbone)
        lora = self.manifest["lora"]
        inject_adapter_in_model(
            LoraConfig(r=lora["r"], lora_alpha=lora["alpha"], target_modules=list(LORA_TARGETS)),
            model.backbone,
        )
        result = model.load_state_dict(read_adapter(self.path / ADAPTER), strict=False)
        if result.unexpected_keys or any("lora_" in k or "head" in k for k in result.missing_keys):
            raise AssetNotFoundError(
                f"{self.path / ADAPTER} does not fit {self.manifest['base']} "
                f"(unexpected {result.unexpected_keys[:3]}); re-export the adapter"
            )
        merge_lora(model.backbone)  # the adapter folded into the weights: no LoRA cost per pair
        model = model.to(self.device).eval()
        if self.quantize == "int8":
            model = quantize_int8(model, self.device)
        self._tokenizer = tokenizer
        self._model = model
        head, mid, tail = TEMPLATE
        self._overhead_tokens = 1 + len(
            tokenizer(head + mid + tail, add_special_tokens=False)["input_ids"]
        )

    @property
    def config(self) -> Any:
        """The base model's configuration (loads the model on first use)."""
        self.load()
        return self._model.backbone.config

    def _token_lengths(self, texts: list[str]) -> list[int]:
        self.load()
        with self.tokenizer_lock:
            ids = self._tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]
        return [len(x) for x in ids]

    def _overhead(self) -> int:
        self.load()
        assert self._overhead_tokens is not None
        return self._overhead_tokens

    def _pair_probabilities(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        import torch

        self.load()
        with self.tokenizer_lock:
            rows = [
                np.array(encode_pair(self._tokenizer, p, h, self.max_length), dtype=np.int64)
                for p, h in pairs
            ]
        ids, mask = pad_batch(rows, pad_id=int(self._tokenizer.pad_token_id or 0))
        with torch.inference_mode():
            logits = self._model(
                torch.from_numpy(ids).to(self.device), torch.from_numpy(mask).to(self.device)
            )
        return torch.softmax(logits.float(), -1).cpu().numpy()
