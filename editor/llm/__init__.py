"""LLM backends behind one interface: ``complete(prompts, ...)`` and ``chat(conversations, ...)``.

>>> from editor.config import LLMConfig
>>> llm = build(LLMConfig(backend="transformers", model="packaged:smollm2-135m-instruct"))
>>> llm.complete(["The capital of France is"], max_new_tokens=4, temperature=0)  # doctest: +SKIP
[[' Paris.']]
"""

from editor.llm.base import ChatMessage, LLMBackend, LLMError, apply_stop
from editor.llm.registry import available, build, register

__all__ = [
    "ChatMessage",
    "LLMBackend",
    "LLMError",
    "apply_stop",
    "available",
    "build",
    "register",
]
