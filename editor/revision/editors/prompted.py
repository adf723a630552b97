"""The ``prompted`` editor (RARR): a few-shot LLM prompt per evidence ("copy the wrong words, then
the fix"), applied as a span replacement, so the LLM cannot rewrite what it was not asked to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from editor.prompts import conversation_block, load_template, quote
from editor.revision.editors.base import FromBatch, Revision
from editor.types import Evidence, evidence_text

_WRONG = re.compile(r"^\s*(.*?)\s*(?:\n|$)", re.S)

_FIX = re.compile(r"^\s*Fix:\s*(.*?)\s*$", re.M | re.I)


def apply_fix(text: str, completion: str) -> tuple[str, str]:
    """Apply a ``Wrong: SPAN / Fix: NEW`` completion (the prompt ends at ``Wrong:``) to ``text``.

    >>> apply_fix("It was built in 1887.", " 1887\\nFix: 1889")
    ('It was built in 1889.', "'1887' -> '1889'")
    >>> apply_fix("It was built in 1887.", " none")[1]
    'the LLM found nothing wrong'
    >>> apply_fix("It was built in 1887.", " 1850\\nFix: 1889")[1]
    "the LLM's span '1850' is not in the text"
    """
    m = _WRONG.match(completion)
    wrong = (m.group(1) if m else "").strip().strip('"').strip()
    if not wrong or wrong.lower().rstrip(".") in {"none", "nothing", "n/a"}:
        return text, "the LLM found nothing wrong"
    fix = _FIX.search(completion)
    if fix is None:
        return text, f"the LLM named {wrong!r} but gave no fix"
    new = fix.group(1).strip().strip('"').strip()
    if wrong not in text:
        return text, f"the LLM's span {wrong!r} is not in the text"
    if new == wrong:
        return text, "the LLM's fix equals the span"
    return text.replace(wrong, new, 1), f"{wrong!r} -> {new!r}"


class PromptedEditor(FromBatch):
    """RARR's few-shot prompted editor over any LLM backend; one evidence per call (the best
    one when given several), greedy, the fix applied as a span replacement."""

    name = "prompted"

    def __init__(self, llm: Any, prompt: str | None = None, max_new_tokens: int = 48) -> None:
        self.llm = llm
        self.template = load_template(prompt, "editor_rarr.txt", ["evidence", "text"])
        self.max_new_tokens = max_new_tokens

    def render(self, text: str, evidence: Evidence, context: str | None) -> str:
        return (
            self.template.replace("{{context}}", conversation_block(context))
            .replace("{{evidence}}", quote(evidence_text(evidence)))
            .replace("{{text}}", quote(text))
        )

    def edit_batch(
        self, items: Sequence[tuple[str, Sequence[Evidence]]], context: str | None = None
    ) -> list[Revision]:
        todo = [(i, t, ev[0]) for i, (t, ev) in enumerate(items) if ev and t.strip()]
        out = [Revision(t, "no evidence to edit against") for t, _ in items]
        if not todo:
            return out
        prompts = [self.render(t, e, context) for _, t, e in todo]
        completions = self.llm.complete(
            prompts,
            max_new_tokens=self.max_new_tokens,
            temperature=0.0,
            stop=["\n\nEvidence:", "\nEvidence:", "\nText:"],
        )
        for (i, text, _), comp in zip(todo, completions, strict=True):
            new, reason = apply_fix(text, comp[0] if comp else "")
            out[i] = Revision(new, reason)
        return out
