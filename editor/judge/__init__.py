"""The judge: the one place that decides what is wrong in a sentence, which words, what should
replace them, and whether an edit stands.

``assess_batch([(text, query, evidence)], context) -> [Finding]`` and ``accept(edit, finding,
context) -> Decision`` (contract: ``base.py``). The revision loop, the
findings and the report's sentence verdicts read the same ``Finding``. One setting picks the
judge (``judge.type``):

- ``rules`` (default): the agreement gate (question-guided NLI with the slot checks, or an
  LLM) decides, the configured editor proposes, ``EditAcceptance`` (the verifier, the form
  rules, a sentence of evidence stating the revised fact) accepts (``rules.py``);
- ``span``: one cross-encoder flags the words, points at the evidence's words for them, writes
  the revision and accepts it (``span.py``);
- ``union``: both, the span judge's edit where it makes one, else the rules judge's
  (``learned.py``);
- ``learned``: both, decided by a head trained on errors people and LLMs wrote (``judge.head``,
  ``learned.py``): edits applied only where it is sure, suggested where it is not.

Register another with ``register(name, factory)``.
"""

from __future__ import annotations

from typing import Any

from editor.judge.base import (
    Applicability,
    Decision,
    Finding,
    Judge,
    Proposal,
    Verdict,
    assess,
    available,
    build,
    register,
)

__all__ = [
    "Applicability",
    "Decision",
    "Finding",
    "Judge",
    "Proposal",
    "Verdict",
    "assess",
    "available",
    "build",
    "register",
]


def _rules(cfg: Any, attribution: Any, llm: Any, parser: Any, **_: Any) -> Judge:
    from editor.judge.acceptance import ACCEPTANCE_RULES, EditAcceptance
    from editor.judge.agreement import NLIAgreement
    from editor.judge.agreement import build as build_agreement
    from editor.judge.agreement.base import GATE_RULES
    from editor.judge.rules import RulesJudge

    gate = None
    if cfg.revision.gate:
        gate = build_agreement(cfg.agreement, attribution, llm, cfg.judge, parser)
        if isinstance(gate, NLIAgreement):
            gate.off = frozenset(cfg.judge.rules_off) & set(GATE_RULES)
        if cfg.editor.answers and "question" not in cfg.judge.rules_off:
            from editor.judge.agreement.question import QuestionAgreement

            gate = QuestionAgreement(gate)
        from editor.reader import shared_reader, wanted

        if wanted(cfg):
            from editor.judge.agreement.reader import ReaderAgreement

            policy = cfg.judge.reader
            reader = shared_reader(policy.model, policy.quantize)
            gate = ReaderAgreement(gate, reader, policy, attribution)
    acceptance = None
    if cfg.judge.verify_edits:  # the model loads on first score
        acceptance = EditAcceptance(
            attribution(),
            cfg.judge.accept_min_supported,
            contradicted_min=cfg.judge.contradicted_min,
            parser=parser,
            off=frozenset(cfg.judge.rules_off) & set(ACCEPTANCE_RULES),
        )
    return RulesJudge(gate, acceptance)


def _span(cfg: Any, attribution: Any, llm: Any, parser: Any, **_: Any) -> Judge:
    from editor.judge.span import SpanJudgeOfFixes
    from editor.judge.span_fix import shared_fixer

    j = cfg.judge
    fixer = shared_fixer(j.model, j.guards, j.device, j.quantize)
    return SpanJudgeOfFixes(fixer, cfg.agreement.sentences_per_query, parser)


def _combined(learned: bool):
    def make(cfg: Any, attribution: Any, llm: Any, parser: Any, **_: Any) -> Judge:
        from editor.judge.learned import CombinedJudge
        from editor.judge.signals import Head, default_head

        head = Head.load(cfg.judge.head or default_head()) if learned else None
        rules = _rules(cfg, attribution, llm, parser)
        return CombinedJudge(rules, _span(cfg, attribution, llm, parser), head)

    return make


register("rules", _rules)
register("span", _span)
register("union", _combined(False))
register("learned", _combined(True))
