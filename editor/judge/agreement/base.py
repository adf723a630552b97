"""The agreement stage's contract: the ``Agreement`` verdict, the ``AgreementModel`` Protocol and
its registry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from editor.attribution.base import AttributionModel
from editor.config import AgreementConfig
from editor.registry import Registry
from editor.result import Flag
from editor.types import Evidence

Verdict = Literal["agrees", "disagrees", "irrelevant"]


def slot_rule(reason: str) -> str:
    """The slot check's rule behind a contradiction, read from its reason.

    >>> slot_rule("'Smith' and 'Jones' trade places"), slot_rule("'1887' vs '1889'")
    ('role', 'slot')
    """
    if "trade places" in reason:
        return "role"
    return "negation" if "negates" in reason else "slot"


@dataclass(frozen=True)
class Agreement:
    """The verdict on one (text, query, evidence) triple.

    ``span`` is the (start, end) character range of the sentence of the text that was judged
    (None when no sentence matched the query); ``scores`` the model's numbers behind it.
    ``rule``: what found a disagreement (``Step.rule``; None when there is none). ``flags``: the
    words of the text the evidence contradicts or does not state, where the model names them
    (a judge that names them); a disagreement without them flags its whole sentence
    (``editor.judge.Finding.named``).
    """

    verdict: Verdict
    reason: str
    span: tuple[int, int] | None = None
    supported: float | None = None
    contradicted: float | None = None
    rule: str | None = None
    flags: tuple[Flag, ...] = ()

    @property
    def disagrees(self) -> bool:
        return self.verdict == "disagrees"


class AgreementModel(Protocol):
    """Decides whether ``text`` and ``evidence`` imply the same answer to ``query``."""

    def check(
        self, text: str, query: str, evidence: Evidence, context: str | None = None
    ) -> Agreement: ...

    def check_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Agreement]: ...


class FromBatch:
    """``check`` as a batch of one."""

    def check(
        self, text: str, query: str, evidence: Evidence, context: str | None = None
    ) -> Agreement:
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
