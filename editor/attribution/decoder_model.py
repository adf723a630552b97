"""A decoder LM as a 3-way verifier: the packaged Gemma-3-270M read as a pair classifier.

The pair is one prompt, ``<bos>Evidence: {premise}\\nClaim: {hypothesis}\\nSupported?``, the
premise cut from its end so the whole fits ``max_length`` tokens; the final hidden state of the
last token (after the model's own final norm) goes through a linear head to the three labels of
``editor.attribution.nli.LABELS``. The backbone is fine-tuned with LoRA on every linear layer; the
word embeddings stay frozen, so a vocabulary cut to the tokens a data set uses (``keep``) gives
the same outputs as the full one.

The weights come from the packaged GGUF file. ``GGUF_TO_HF`` names each tensor as transformers
does; the GGUF stores Gemma's RMSNorm weights plus one (checked against transformers' own
conversion: every tensor equal).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

TEMPLATE = ("Evidence: ", "\nClaim: ", "\nSupported?")

GGUF_TO_HF = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "attn_norm": "input_layernorm",
    "post_attention_norm": "post_attention_layernorm",
    "ffn_norm": "pre_feedforward_layernorm",
    "post_ffw_norm": "post_feedforward_layernorm",
    "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm",
}
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def hf_name(gguf_name: str) -> str:
    """The transformers name of a GGUF tensor of a Gemma-3 text model (backbone, no prefix)."""
    if gguf_name == "token_embd.weight":
        return "embed_tokens.weight"
    if gguf_name == "output_norm.weight":
        return "norm.weight"
    blk, index, kind, _ = gguf_name.split(".")
    if blk != "blk" or kind not in GGUF_TO_HF:
        raise ValueError(f"unexpected tensor {gguf_name!r} in a Gemma-3 GGUF file")
    return f"layers.{index}.{GGUF_TO_HF[kind]}.weight"


def is_norm(gguf_name: str) -> bool:
    return gguf_name.endswith("norm.weight")


def encode_pair(tokenizer: Any, premise: str, hypothesis: str, max_length: int) -> list[int]:
    """Token ids of one pair; the premise loses its end first, the claim is kept whole where
    it fits (a claim longer than the budget is cut too, keeping at least 16 premise tokens)."""
    head, mid, tail = TEMPLATE
    enc = tokenizer([head + premise, mid + hypothesis + tail], add_special_tokens=False)[
        "input_ids"
    ]
    prem, rest = list(enc[0]), list(enc[1])
    bos = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    budget = max_length - len(bos)
    if len(rest) > budget - 16:
        rest = rest[: budget - 16 - 1] + rest[-1:]
    return bos + prem[: budget - len(rest)] + rest


def build_model(config: dict[str, Any], vocab_size: int, n_labels: int = 3) -> Any:
    """An untrained verifier of the given Gemma-3 text config, with ``vocab_size`` rows."""
    import torch
    from transformers import Gemma3TextConfig, Gemma3TextModel

    cfg = {k: v for k, v in config.items() if not k.startswith("_") and k != "architectures"}
    cfg["vocab_size"] = vocab_size
    text_config = Gemma3TextConfig(**cfg)

    class DecoderVerifier(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.backbone = Gemma3TextModel(text_config)
            self.head = torch.nn.Linear(text_config.hidden_size, n_labels)

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.backbone(
                input_ids=input_ids, attention_mask=attention_mask, use_cache=False
            ).last_hidden_state
            last = attention_mask.sum(1) - 1
            pooled = hidden[torch.arange(hidden.size(0), device=hidden.device), last]
            return self.head(pooled.float())

    return DecoderVerifier()


def pad_batch(rows: Sequence[np.ndarray], pad_id: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Right-padded ids and their attention mask."""
    width = max(len(r) for r in rows)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
        mask[i, : len(r)] = 1
    return ids, mask


def adapter_state(model: Any) -> dict[str, Any]:
    """The LoRA weights (peft's names under ``backbone.``) and the head, fp16: what
    ``adapter.safetensors`` holds."""
    from peft import get_peft_model_state_dict

    state = {f"backbone.{k}": v for k, v in get_peft_model_state_dict(model.backbone).items()}
    state |= {f"head.{k}": v for k, v in model.head.state_dict().items()}
    return {k: v.detach().half().contiguous().cpu() for k, v in state.items()}


def read_adapter(path: Any) -> dict[str, Any]:
    """An ``adapter.safetensors`` (as ``adapter_state`` writes it) as fp32 tensors under the
    names a model with the LoRA injected has (peft's ``default`` adapter)."""
    from safetensors.torch import load_file

    return {
        k.replace(".lora_A.weight", ".lora_A.default.weight").replace(
            ".lora_B.weight", ".lora_B.default.weight"
        ): v.float()
        for k, v in load_file(str(path)).items()
    }


def merge_lora(model: Any) -> None:
    """Fold every injected LoRA into its layer's weights: the same outputs, no LoRA cost."""
    for module in model.modules():
        if hasattr(module, "lora_A") and hasattr(module, "merge"):
            module.merge()
