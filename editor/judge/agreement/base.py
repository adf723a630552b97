"""The rules judge's gates: the ``AgreementModel`` Protocol (a gate's ``Finding`` on each
(text, query, evidence), in the judge's verdicts; ``said`` reads an LLM gate's three words) and
its registry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from editor.attribution.base import AttributionModel
from editor.config import AgreementConfig, JudgeConfig
from editor.judge.base import Finding
from editor.registry import Registry
from editor.result import Flag
from editor.text.document import TextParser
from editor.types import Evidence
from editor.verdicts import Verdict

Said = Literal["agrees", "disagrees", "irrelevant"]
"""an LLM gate's word (RARR's agreement prompt asks for one of these)"""


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


def slot_flags(
    text: str, span: tuple[int, int], reading: str, claim_span: tuple[int, int], fix: str | None
) -> tuple[Flag, ...]:
    """The words of ``text[span]`` the slot check named (``claim_span`` in ``reading``, the
    sentence as the check read it, decontextualised), with the evidence's words as their fix;
    none where those words are not in the sentence as written (then the sentence is named).

    >>> slot_flags("Yes. It is 500 m tall.", (5, 22), "The tower is 500 m tall.", (13, 18), "330 m")
    (Flag(start=11, end=16, kind='contradicted', fix='330 m'),)
    >>> slot_flags("It is tall.", (0, 11), "The tower is 500 m tall.", (13, 18), "330 m")
    ()
    """
    words = reading[claim_span[0] : claim_span[1]].strip()
    sentence = text[span[0] : span[1]]
    found, at = [], sentence.find(words) if words else -1
    while at >= 0:
        found.append(at)
        at = sentence.find(words, at + 1)
    if not found:
        return ()
    shift = len(reading) - len(sentence)  # decontextualising mostly grows the sentence's start
    at = min(found, key=lambda i: abs(i + shift - claim_span[0]))
    return (Flag(span[0] + at, span[0] + at + len(words), "contradicted", fix),)


def said(
    word: Said,
    reason: str,
    span: tuple[int, int] | None = None,
    supported: float | None = None,
    contradicted: float | None = None,
    rule: str | None = None,
    flags: tuple[Flag, ...] = (),
) -> Finding:
    """An LLM gate's three-way word (RARR's prompt: ``editor/prompts/agreement.txt``) on one
    (text, query, evidence) as the judge's ``Finding``; the other gates speak verdicts:
    ``disagrees`` is a contradiction that asks for an edit, ``agrees`` support, ``irrelevant``
    not stated (not checkable where no sentence of the text answers the query: ``span`` None).
    ``rule``: what found a disagreement (``Step.rule``); ``flags``: the words it names.

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
    return Finding(verdict, reason, span, supported, contradicted, rule, flags, opens=opens)


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
    policy: JudgeConfig | None = None,
    parser: TextParser | None = None,
) -> AgreementModel:
    """The agreement model of ``cfg.type`` deciding by the judge's ``policy`` and reading
    passages through ``parser``; ``attribution``/``llm`` are called only if needed."""
    return _AGREEMENT.get(cfg.type)(
        cfg,
        attribution=attribution,
        llm=llm,
        policy=policy or JudgeConfig(),
        parser=parser or TextParser(),
    )
