"""The rules judge's gates: the ``AgreementModel`` Protocol (a gate's word on each (text,
query, evidence) as a ``Finding``, ``said``) and its registry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from editor.attribution.base import AttributionModel
from editor.config import AgreementConfig
from editor.judge.base import Finding, Verdict
from editor.registry import Registry
from editor.types import Evidence

Said = Literal["agrees", "disagrees", "irrelevant"]
"""a gate's word (RARR's agreement model says one of these)"""


GATE_RULES = ("slot", "role", "negation", "nli")
"""The gate's rule families: the slot check naming a different value (``slot``), two names
trading places (``role``), a negation (``negation``), and the NLI model's contradiction."""


def slot_rule(reason: str) -> str:
    """The slot check's rule behind a contradiction, read from its reason.

    >>> slot_rule("'Smith' and 'Jones' trade places"), slot_rule("'1887' vs '1889'")
    ('role', 'slot')
    """
    if "trade places" in reason:
        return "role"
    return "negation" if "negates" in reason else "slot"


def said(
    word: Said,
    reason: str,
    span: tuple[int, int] | None = None,
    supported: float | None = None,
    contradicted: float | None = None,
    rule: str | None = None,
) -> Finding:
    """A gate's three-way word on one (text, query, evidence) as the judge's ``Finding``:
    ``disagrees`` is a contradiction that asks for an edit, ``agrees`` support, ``irrelevant``
    not stated (not checkable where no sentence of the text answers the query: ``span`` None).
    ``rule``: what found a disagreement (``Step.rule``).

    >>> said("disagrees", "NLI", (0, 5), rule="nli").verdict, said("irrelevant", "none").verdict
    ('contradicted', 'not_checkable')
    """
    verdict: Verdict
    if word == "agrees":
        verdict = "supported"
    elif word == "disagrees":
        verdict = "contradicted"
    else:
        verdict = "not_checkable" if span is None else "not_stated"
    opens = word == "disagrees"
    return Finding(verdict, reason, span, supported, contradicted, rule, opens=opens)


class AgreementModel(Protocol):
    """Decides whether ``text`` and ``evidence`` imply the same answer to ``query``."""

    def check(
        self, text: str, query: str, evidence: Evidence, context: str | None = None
    ) -> Finding: ...

    def check_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Finding]: ...


class FromBatch:
    """``check`` as a batch of one."""

    def check(
        self, text: str, query: str, evidence: Evidence, context: str | None = None
    ) -> Finding:
        return self.check_batch([(text, query, evidence)], context)[0]  # type: ignore[attr-defined]


AgreementFactory = Callable[..., AgreementModel]

_AGREEMENT: Registry[AgreementFactory] = Registry("agreement model type", "agreement.type")

register = _AGREEMENT.register
"""Make ``factory(cfg, attribution=..., llm=...)`` buildable as ``agreement.type=name``."""

available = _AGREEMENT.available
"""The names ``build`` accepts."""


def build(
    cfg: AgreementConfig,
    attribution: Callable[[], AttributionModel],
    llm: Callable[[], object],
) -> AgreementModel:
    """The agreement model of ``cfg.type``; ``attribution``/``llm`` are called only if needed."""
    return _AGREEMENT.get(cfg.type)(cfg, attribution=attribution, llm=llm)
