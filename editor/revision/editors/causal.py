"""Causal-LM denoising editor: evidence and claim in, revision out, over a packaged (or any)
causal LM with an optional peft LoRA adapter (trained by ``purr train editor --arch causal``).

The prompt (``editor/prompts/editor_causal.txt`` by default, shared with the trainer) lists up to N
evidence snippets, the dialogue context and the claim, and ends at ``Revision:``; the model
continues with the revised claim on one line. Greedy or beam search. An empty or runaway
answer (no line, or more than twice the claim's length) leaves the claim unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from editor.llm.loading import load_causal
from editor.prompts import load_template
from editor.revision.editors.base import Revision
from editor.revision.editors.model import ModelEditor
from editor.text.words import focus
from editor.types import Evidence, evidence_text

log = logging.getLogger(__name__)

DEFAULT_PROMPT = "editor_causal.txt"

DEFAULT_BASE = "packaged:gemma-3-270m"


def default_causal_adapter() -> Path:
    """The shipped causal editor adapter (LoRA over packaged:gemma-3-270m, model card beside)."""
    return Path(__file__).resolve().parents[2] / "models" / "purr-editor-causal"


def render_causal(
    template: str, text: str, evidence: Sequence[str], context: str | None = None
) -> str:
    """The editor prompt for one claim.

    >>> t = "Evidence:\\n{{evidence}}\\n{{context}}Claim: {{text}}\\nRevision:"
    >>> print(render_causal(t, "Paris is in Spain.", ["Paris is in France."]))
    Evidence:
    [1] Paris is in France.
    Claim: Paris is in Spain.
    Revision:
    """
    lines = "\n".join(f"[{i}] {' '.join(e.split())}" for i, e in enumerate(evidence, 1)) or "(none)"
    ctx = f"Context: {' '.join(context.split())}\n" if context and context.strip() else ""
    return (
        template.replace("{{evidence}}", lines)
        .replace("{{context}}", ctx)
        .replace("{{text}}", " ".join(text.split()))
    )


def _line_end_ids(tokenizer: Any) -> list[int]:
    """End-of-sequence plus the newline token(s), so generation stops with the line."""
    ids = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    for piece in ("\n", "\n\n"):
        enc = tokenizer(piece, add_special_tokens=False).input_ids
        if len(enc) == 1 and enc[0] not in ids:
            ids.append(enc[0])
    return ids


class CausalEditor(ModelEditor):
    """Denoising editor over a causal LM (see the module doc)."""

    name = "causal"

    def __init__(
        self,
        model: str | Any,
        tokenizer: Any = None,
        adapter: str | None = None,
        prompt: str | None = None,
        max_evidence_chars: int = 800,
        prompt_lookup: int = 10,
        **generation: Any,
    ) -> None:
        super().__init__(model, tokenizer, adapter, **generation)
        self.prompt_lookup = prompt_lookup
        self.template = load_template(prompt, DEFAULT_PROMPT, ["evidence", "text"])
        self.max_evidence_chars = max_evidence_chars
        if adapter is None and isinstance(model, str):
            log.warning("causal editor over %s without a trained adapter: expect poor edits", model)

    def _load(self) -> tuple[Any, Any]:
        return load_causal(self.ref, self.adapter, self.device, inference=True)

    def edit_batch(
        self, items: Sequence[tuple[str, Sequence[Evidence]]], context: str | None = None
    ) -> list[Revision]:
        import torch

        if not items:
            return []
        tokenizer, model = self.load()
        prompts = [
            render_causal(
                self.template,
                t,
                [
                    focus(evidence_text(e), t, self.max_evidence_chars)
                    for e in ev[: self.max_evidence]
                ],
                context,
            )
            for t, ev in items
        ]
        common = {
            "max_new_tokens": self.max_new_tokens,
            "num_beams": self.num_beams,
            "do_sample": False,
            "pad_token_id": tokenizer.pad_token_id,
            "eos_token_id": _line_end_ids(tokenizer),  # the revision is one line
        }
        texts: list[str] = []
        with torch.inference_mode():
            if self.prompt_lookup and self.num_beams == 1:
                # prompt-lookup decoding: draft tokens are copied from the prompt (a revision
                # mostly repeats the claim) and checked in one forward pass; same greedy output,
                # one prompt at a time (the drafts differ per row)
                for prompt in prompts:
                    enc = tokenizer([prompt], return_tensors="pt").to(self.device)
                    out = model.generate(
                        **enc, prompt_lookup_num_tokens=self.prompt_lookup, **common
                    )
                    texts += tokenizer.batch_decode(
                        out[:, enc.input_ids.shape[1] :], skip_special_tokens=True
                    )
            else:
                enc = tokenizer(prompts, return_tensors="pt", padding=True).to(self.device)
                out = model.generate(**enc, **common)
                texts = tokenizer.batch_decode(
                    out[:, enc.input_ids.shape[1] :], skip_special_tokens=True
                )
        result = []
        for (text, _), gen in zip(items, texts, strict=True):
            line = gen.strip().split("\n", 1)[0].strip()
            if not line:
                result.append(Revision(text, "the causal editor produced nothing"))
            elif len(line) > 2 * len(text) + 20:
                result.append(Revision(text, "the causal editor's answer ran away; kept the text"))
            else:
                result.append(Revision(line, "causal editor revision"))
        return result

    def score_targets(
        self, items: Sequence[tuple[str, Sequence[str], str]], context: str | None = None
    ) -> list[float]:
        """log P(target | prompt(text, evidence)) for each ``(text, evidence texts, target)``,
        the target written as the trainer writes it (`` <target>\n``)."""
        import torch

        tokenizer, model = self.load()
        out = []
        with torch.inference_mode():
            for text, ev, target in items:
                ev = [focus(e, text, self.max_evidence_chars) for e in ev[: self.max_evidence]]
                prompt = render_causal(self.template, text, ev, context)
                p = tokenizer(prompt).input_ids
                t = tokenizer(" " + target.strip() + "\n", add_special_tokens=False).input_ids
                ids = torch.tensor([p + t], device=self.device)
                logits = model(input_ids=ids).logits[0, len(p) - 1 : -1]  # (target_len, vocab)
                logp = torch.log_softmax(logits.float(), dim=-1)
                out.append(
                    float(logp.gather(-1, torch.tensor(t, device=self.device)[:, None]).sum())
                )
        return out
