"""Agreement model: do the text and a piece of evidence imply the same answer to a query?

``check(text, query, evidence, context) -> Finding`` from a word ``agrees``,
``disagrees`` or ``irrelevant`` and a reason. Only on ``disagrees`` does the revision loop call
the editor (RARR's gate; without it the paper saw over-editing, F1_AP 68.1 -> 62.8 on NQ).

Two implementations, chosen by ``agreement.type``:

- ``nli`` (default): question-guided NLI. The sentences of the text that answer the query are
  found by content-word overlap with the query (a sentence query is the sentence itself; an
  entity question shares its focus words), decontextualised against the passage and dialogue
  context, and scored against the evidence by the attribution model. ``disagrees`` when the
  best-matching sentence's P(contradicted) reaches ``judge.contradicted_min`` and exceeds its
  P(supported); ``agrees`` when P(supported) reaches ``judge.supported_min``; else ``irrelevant``.
- ``llm``: RARR's prompted check with chain of thought: the LLM states the answer the text
  implies, the answer the evidence implies, then judges. Parsed from the last line.

Both return where in the text the judged sentence lies (``span``), so an editor can work on
that sentence alone.

Contract: ``base.py``; ``nli.py`` and ``llm.py`` are registered here.
"""

from __future__ import annotations

from editor.judge.agreement.base import AgreementModel, Said, build, register, said
from editor.judge.agreement.llm import LLMAgreement, parse_llm_verdict
from editor.judge.agreement.nli import NLIAgreement

__all__ = [
    "AgreementModel",
    "LLMAgreement",
    "NLIAgreement",
    "Said",
    "build",
    "parse_llm_verdict",
    "register",
    "said",
]

register(
    "nli",
    lambda cfg, attribution, llm, policy, parser: NLIAgreement(
        attribution(),
        policy.contradicted_min,
        policy.supported_min,
        cfg.sentences_per_query,
        parser=parser,
    ),
)
register(
    "llm",
    lambda cfg, attribution, llm, policy, parser: LLMAgreement(
        llm(), cfg.prompt, cfg.max_new_tokens
    ),
)
