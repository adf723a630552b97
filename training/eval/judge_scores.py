"""A judge read as an attribution model: ``purr eval attribution --model judge:NAME`` (``rules``,
``span``, ``union``, ``learned``) measures each judge's sentence verdicts on the NLI sets as the
verifier's are measured.

Each (premise, hypothesis) pair is one item: the hypothesis is the text and the query, the
premise its one evidence. P(supported) and P(contradicted) are the finding's (for the learned
judge its head's: 1 - P(wrong) and P(wrong)); a judge that gives no probability counts its
verdict as 1 or 0. The combined judges are read without proposing edits (a verdict is all the
NLI sets ask for).
"""

from __future__ import annotations

from collections.abc import Sequence

from editor.judge.base import Finding, Judge
from editor.judge.learned import Assessed, CombinedJudge
from editor.types import EntailmentScores, Evidence
from editor.verdicts import CONTRADICTED, SUPPORTED

JUDGES = ("rules", "span", "union", "learned")


class JudgeScores:
    """``judge`` behind the ``AttributionModel`` interface (see the module doc)."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge

    def score(self, premise: str, hypothesis: str) -> EntailmentScores:
        return self.score_batch([(premise, hypothesis)])[0]

    def score_batch(self, pairs: Sequence[tuple[str, str]]) -> list[EntailmentScores]:
        items = [
            (h, h, Evidence(f"premise-{i}", p, "", "eval", None, h, 1.0))
            for i, (p, h) in enumerate(pairs)
        ]
        return [_scores(f) for f in self._findings(items)]

    def _findings(self, items: list[tuple[str, str, Evidence]]) -> list[Finding]:
        j = self.judge
        if not isinstance(j, CombinedJudge):
            return j.assess_batch(items)
        rules, spans = j.rules.assess_batch(items), j.span.assess_batch(items)
        return [
            j.decide(Assessed(text, ev, r, s, ()))
            for (text, _, ev), r, s in zip(items, rules, spans, strict=True)
        ]


def _scores(f: Finding) -> EntailmentScores:
    sup = f.supported if f.supported is not None else float(f.verdict == SUPPORTED)
    con = f.contradicted if f.contradicted is not None else float(f.verdict == CONTRADICTED)
    return EntailmentScores(sup, con, max(0.0, 1.0 - sup - con))


def judge_model(name: str) -> JudgeScores:
    """The default configuration's judge ``name`` (``JUDGES``) as an attribution model."""
    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline

    if name not in JUDGES:
        raise ValueError(f"judge:{name}: no such judge; use one of {', '.join(JUDGES)}")
    cfg = load_config("default", [f"judge.type={name}"])
    return JudgeScores(Pipeline(Components(cfg, progress=False)).editor.judge)
