"""The MiniCheck checkers (Tang, Laban and Durrett 2024) behind the attribution Protocol.

- ``minicheck-t5``: MiniCheck-Flan-T5 (``lytang/MiniCheck-Flan-T5-Large``). The input is
  ``"predict: " + document + "</s>" + claim``; P(supported) is the softmax of the first decoder
  step over "▁1" against "▁" (the same two tokens TRUE reads), so it is ``T5TrueNLI`` with
  MiniCheck's input. Long documents are scored in windows, the best window counting (MiniCheck
  takes the maximum over chunks too).
- ``llm-check``: a chat LLM asked whether the document supports the claim, answered "Yes" or
  "No" (``bespokelabs/Bespoke-MiniCheck-7B``, or any chat model); P(supported) is the
  probability of "Yes" against "No" at the first answer token, read from the model's next-token
  distribution (transformers) or its top log-probabilities (vLLM, ``engine="vllm"``, a GPU).
  The prompt is ``editor/prompts/llm_check.txt``: the instruction as the system turn, then
  ``Document: ...`` and ``Claim: ...``, the format Bespoke-MiniCheck was trained on.

Both are two-way (``contradicted`` is 0.0).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from editor.attribution.hf import T5TrueNLI, _HFModel
from editor.prompts import load_template


class MiniCheckT5NLI(T5TrueNLI):
    """MiniCheck-Flan-T5 (see the module doc)."""

    premise_prefix = "predict: "

    def _format_hypothesis(self, hypothesis: str) -> str:
        self.load()
        return f"{self._tokenizer.eos_token}{hypothesis}"


def conversation(instruction: str, premise: str, hypothesis: str) -> list[dict[str, str]]:
    """The chat turns that ask a checker about one (document, claim) pair.

    >>> conversation("Answer Yes or No.", "It opened in 1889.", "It opened in 1887.")[1]["content"]
    'Document: It opened in 1889.\\nClaim: It opened in 1887.'
    """
    return [
        {"role": "system", "content": instruction},
        {"role": "user", "content": f"Document: {premise}\nClaim: {hypothesis}"},
    ]


def yes_share(p_yes: float, p_no: float) -> float:
    """P(Yes) against P(No): the checker's P(supported); 0.5 when it gives neither any weight.

    >>> yes_share(0.75, 0.25), yes_share(0.0, 0.0)
    (0.75, 0.5)
    """
    total = p_yes + p_no
    return 0.5 if total <= 0 else p_yes / total


class LLMCheckNLI(_HFModel):
    """A chat LLM as the checker (see the module doc). ``engine``: ``transformers`` (CPU or a
    GPU, any causal LM with a chat template) or ``vllm`` (a GPU, ``pip install
    'purr-edit[vllm]'``)."""

    three_way = False

    def __init__(
        self,
        model_id_or_path: str,
        max_length: int = 2048,
        batch_size: int = 4,
        *,
        engine: str = "transformers",
        prompt: str | None = None,
        **loading: Any,
    ) -> None:
        if engine not in {"transformers", "vllm"}:
            raise ValueError(f"engine must be 'transformers' or 'vllm', got {engine!r}")
        super().__init__(model_id_or_path, max_length, batch_size, **loading)
        self.engine = engine
        self.instruction = load_template(prompt, "llm_check.txt").strip()
        self._answer_ids: tuple[list[int], list[int]] = ([], [])
        self._overhead_tokens = 0

    def _load(self) -> None:
        from transformers import AutoTokenizer

        if self.engine == "vllm":
            try:
                from vllm import LLM
            except ImportError:
                raise ImportError(
                    "attribution engine vllm needs vLLM: pip install 'purr-edit[vllm]' (a GPU)"
                ) from None
            self._model = LLM(model=self.model_ref, max_model_len=self.max_length + 64)
            self._tokenizer = AutoTokenizer.from_pretrained(self.model_ref)
        else:  # packaged GGUF chat models convert once into the cache, like the editor's
            from editor.llm.loading import load_causal

            self._tokenizer, self._model = load_causal(self.model_ref, None, self.device)
        tok = self._tokenizer
        if not getattr(tok, "chat_template", None):
            raise ValueError(
                f"'{self.model_ref}' has no chat template; llm-check needs a chat model"
            )
        vocab = tok.convert_ids_to_tokens(list(range(len(tok))))
        words = [tok.convert_tokens_to_string([t]).strip().lower() for t in vocab]
        self._answer_ids = (
            [i for i, w in enumerate(words) if w == "yes"],
            [i for i, w in enumerate(words) if w == "no"],
        )
        if not self._answer_ids[0] or not self._answer_ids[1]:
            raise ValueError(f"the tokenizer of '{self.model_ref}' has no 'Yes' or 'No' token")
        empty = self._prompt("", "")
        self._overhead_tokens = len(tok(empty, add_special_tokens=False)["input_ids"])

    def _prompt(self, premise: str, hypothesis: str) -> str:
        return self._tokenizer.apply_chat_template(
            conversation(self.instruction, premise, hypothesis),
            add_generation_prompt=True,
            tokenize=False,
        )

    def _overhead(self) -> int:
        self.load()
        return self._overhead_tokens

    def _pair_probabilities(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        self.load()
        prompts = [self._prompt(p, h) for p, h in pairs]
        if self.engine == "vllm":
            supported = self._vllm_yes(prompts)
        else:
            supported = self._transformers_yes(prompts)
        p = np.asarray(supported, dtype=float)
        return np.stack([p, np.zeros_like(p), 1.0 - p], axis=1)  # (batch, 3)

    def _transformers_yes(self, prompts: list[str]) -> list[float]:
        import torch

        tok = self._tokenizer
        with self.tokenizer_lock:
            side, tok.padding_side = tok.padding_side, "left"
            if tok.pad_token is None:
                tok.pad_token = tok.eos_token
            batch = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
            tok.padding_side = side
        with torch.inference_mode():
            logits = self._model(**{k: v.to(self.device) for k, v in batch.items()}).logits
        probs = torch.softmax(logits[:, -1, :].float(), dim=-1)  # (batch, vocab): next token
        yes, no = (torch.tensor(ids) for ids in self._answer_ids)
        return [yes_share(float(row[yes].sum()), float(row[no].sum())) for row in probs]

    def _vllm_yes(self, prompts: list[str]) -> list[float]:
        from vllm import SamplingParams

        params = SamplingParams(temperature=0.0, max_tokens=1, logprobs=20)
        out = []
        yes, no = (set(ids) for ids in self._answer_ids)
        for response in self._model.generate(prompts, params, use_tqdm=False):
            top: dict[int, Any] = response.outputs[0].logprobs[0]
            p_yes = sum(math.exp(lp.logprob) for i, lp in top.items() if i in yes)
            p_no = sum(math.exp(lp.logprob) for i, lp in top.items() if i in no)
            out.append(yes_share(p_yes, p_no))
        return out
