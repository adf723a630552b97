"""Loading a causal LM for inference or training: a hub id, a local folder or ``packaged:NAME``
(converted once to safetensors in the cache), with a LoRA adapter merged (cached) or attached.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from retrieval.extras import require
from retrieval.settings import Settings


def load_causal(
    ref: str,
    adapter: str | None,
    device: str,
    cache_dir: Path | None = None,
    inference: bool = False,
) -> tuple[Any, Any]:
    """Tokenizer and causal LM (packaged GGUF models converted once into the cache), with a
    LoRA adapter merged in when given (the merge is cached too). ``inference``: read the
    tokenizer with ``RawTokenizer`` where the files allow (2 s faster for Gemma 3)."""
    require("llm", f"a causal LM on local weights ({ref})")
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from editor.llm.fast_tokenizer import RawTokenizer
    from editor.llm.model_files import locate_model, merged_model

    cache = cache_dir or Settings().cache_dir
    location = locate_model(ref, cache)
    try:
        if inference and RawTokenizer.supports(location.load_id):
            tokenizer = RawTokenizer(location.load_id)
        else:
            tokenizer = AutoTokenizer.from_pretrained(location.load_id, local_files_only=True)
        AutoConfig.from_pretrained(location.load_id, local_files_only=True)
    except OSError as e:
        raise OSError(
            f"cannot load the causal editor base '{ref}' ({e}); use packaged:gemma-3-270m, "
            "a local folder, or a hub id already in the local cache"
        ) from None
    if adapter:
        if not (Path(adapter) / "adapter_config.json").is_file():
            raise FileNotFoundError(
                f"editor.adapter {adapter} has no adapter_config.json; pass the folder that "
                "`purr train editor --arch causal` wrote"
            )

        def merge() -> Any:
            from peft import PeftModel

            base = AutoModelForCausalLM.from_pretrained(location.load_id, local_files_only=True)
            with warnings.catch_warnings():  # peft asks a deprecated transformers property
                warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*")
                return PeftModel.from_pretrained(base, adapter).merge_and_unload()

        model = merged_model(adapter, location.load_id, cache, merge, AutoModelForCausalLM)
    else:
        model = AutoModelForCausalLM.from_pretrained(location.load_id, local_files_only=True)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.to(device)
    model.eval()
    return tokenizer, model
