"""The distilled query generator (PURR): a small causal LM trained by ``purr train querygen``
on the prompted generator's questions, run once, greedily, over a short prompt without the
few-shot examples (``prompts/querygen_trained.txt``).

The model writes ``- question`` lines and ends with its end-of-sequence token; questions are
parsed and kept only when grounded in the passage, as for the prompted generator. Nothing
usable falls back to one query per sentence, with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from editor.prompts import load_template
from editor.research.querygen.base import WritingGenerator
from editor.research.querygen.llm import grounded, render_prompt
from editor.research.querygen.questions import parse_questions
from editor.research.querygen.simple import SentenceQueryGenerator
from editor.text.document import TextParser

log = logging.getLogger(__name__)

TRAINED_PROMPT = "querygen_trained.txt"


def load_trained_prompt(path: str | Path | None = None) -> str:
    """The trained generator's prompt template (shared with ``purr train querygen``)."""
    return load_template(path, TRAINED_PROMPT, (), "querygen.prompt")


def questions_target(questions: Sequence[str]) -> str:
    """What the model learns to write for ``questions`` (before its end-of-sequence token).

    >>> questions_target(["Who built it?", "When?"])
    '- Who built it?\\n- When?'
    """
    return "\n".join(f"- {q.strip()}" for q in questions)


class TrainedQueryGenerator(WritingGenerator):
    """Questions from a distilled causal LM (see the module doc)."""

    name = "trained"
    no_questions = (
        "the trained query generator wrote no usable question for a %d-character passage; "
        "one query per sentence"
    )

    def __init__(
        self,
        model: str,
        adapter: str | None = None,
        max_queries: int = 16,
        prompt: str | Path | None = None,
        max_new_tokens: int = 128,
        device: str = "cpu",
        parser: TextParser | None = None,
    ) -> None:
        if max_queries < 1:
            raise ValueError(f"max_queries must be >= 1, got {max_queries}")
        self.ref = model
        self.adapter = adapter
        self.max_queries = max_queries
        self.template = load_trained_prompt(prompt)
        self.max_new_tokens = max_new_tokens
        self.device = device
        self.fallback = SentenceQueryGenerator(max_queries, parser=parser)
        self._loaded: tuple[Any, Any] | None = None

    def load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            from editor.llm.loading import load_causal

            self._loaded = load_causal(self.ref, self.adapter, self.device)
        return self._loaded

    def _write(self, texts: list[str], contexts: list[str | None]) -> list[list[str]]:
        import torch

        tokenizer, model = self.load()
        prompts = [render_prompt(self.template, t, c) for t, c in zip(texts, contexts, strict=True)]
        enc = tokenizer(prompts, return_tensors="pt", padding=True).to(self.device)
        with torch.inference_mode():
            out = model.generate(
                **enc,
                max_new_tokens=self.max_new_tokens,
                do_sample=False,
                pad_token_id=tokenizer.pad_token_id,
            )
        outputs = tokenizer.batch_decode(out[:, enc.input_ids.shape[1] :], skip_special_tokens=True)
        return [
            grounded(parse_questions(o), t, c)
            for o, t, c in zip(outputs, texts, contexts, strict=True)
        ]
