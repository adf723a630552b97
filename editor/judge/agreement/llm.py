"""The ``llm`` agreement model: RARR's prompted check with chain of thought, parsed from its last line."""

from __future__ import annotations

import re
from collections.abc import Sequence

from editor.judge.agreement.base import FromBatch, Said, said
from editor.judge.base import Finding
from editor.prompts import conversation_block, load_template, quote
from editor.text.words import answering_sentences
from editor.types import Evidence, evidence_text

_VERDICT_LINE = re.compile(
    r"(?:therefore|so|verdict)[^\n]*?\b(agrees?|disagrees?|irrelevant)\b", re.IGNORECASE
)


def parse_llm_verdict(completion: str) -> tuple[Said, str] | None:
    """The verdict and the reasoning of a chain-of-thought completion; None if it has none.

    >>> parse_llm_verdict("The text says 1887. The evidence says 1889. Therefore: disagrees.")
    ('disagrees', 'The text says 1887. The evidence says 1889.')
    >>> parse_llm_verdict("no idea") is None
    True
    """
    matches = list(_VERDICT_LINE.finditer(completion))
    if not matches:
        return None
    m = matches[-1]
    if m is None:
        return None
    word = m.group(1).lower()
    verdict: Said = (
        "disagrees"
        if word.startswith("disagree")
        else "agrees"
        if word.startswith("agree")
        else "irrelevant"
    )
    reason = completion[: m.start()].strip() or completion.strip()
    return verdict, reason


class LLMAgreement(FromBatch):
    """RARR's prompted agreement check with chain of thought, through any LLM backend.

    The prompt (``prompts/agreement.txt`` by default) shows the query, the text and the evidence
    as quoted data; the completion states both implied answers and ends with
    "Therefore: agrees|disagrees|irrelevant". An unparseable completion counts as
    ``irrelevant`` (no edit), with the raw answer in the reason.
    """

    name = "llm"

    def __init__(self, llm, prompt: str | None = None, max_new_tokens: int = 96) -> None:
        self.llm = llm
        self.template = load_template(prompt, "agreement.txt", ["query", "text", "evidence"])
        self.max_new_tokens = max_new_tokens

    def render(self, text: str, query: str, evidence: Evidence, context: str | None) -> str:
        return (
            self.template.replace("{{context}}", conversation_block(context))
            .replace("{{query}}", quote(query))
            .replace("{{text}}", quote(text))
            .replace("{{evidence}}", quote(evidence_text(evidence)))
        )

    def check_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Finding]:
        prompts = [self.render(t, q, e, context) for t, q, e in items]
        outs = self.llm.complete(
            prompts, max_new_tokens=self.max_new_tokens, temperature=0.0, stop=["\n\n"]
        )
        result = []
        for (text, query, _), out in zip(items, outs, strict=True):
            completion = out[0] if out else ""
            spans = answering_sentences(text, query, 1)
            parsed = parse_llm_verdict(completion)
            if parsed is None:
                result.append(
                    said(
                        "irrelevant",
                        f"the LLM gave no verdict ({completion.strip()[:120]!r})",
                        spans[0] if spans else None,
                    )
                )
            else:
                rule = "llm" if parsed[0] == "disagrees" else None
                result.append(said(parsed[0], parsed[1], spans[0] if spans else None, rule=rule))
        return result
