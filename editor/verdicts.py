"""The one vocabulary: the judge's verdicts, the words people read them in, and the labels the
models and the citation check speak.

Inside, every stage speaks the judge's verdicts (``Verdict``): a sentence is ``supported``,
``contradicted``, ``not_stated`` by its evidence, or ``not_checkable`` (no sentence answers the
query). At the edge they are worded for people by one mapping each: the report's sentences
(``REPORTED``: what the evidence does not state is ``unverified``) and a cited source's label
(``CITED``). The NLI models' classes (``Label``: ``supported``, ``contradicted``,
``not_supported``) are what the models read, not verdicts; the judge turns them into verdicts.

Only the judge (``editor/judge``) and this module write these words as literals; every other
module names them from here (``tests/test_editor/test_judge/test_policy.py``).
"""

from __future__ import annotations

from typing import Final, Literal

SUPPORTED: Final = "supported"
CONTRADICTED: Final = "contradicted"
NOT_STATED: Final = "not_stated"
NOT_CHECKABLE: Final = "not_checkable"
Verdict = Literal["supported", "contradicted", "not_stated", "not_checkable"]
"""the judge's say on a sentence against its evidence"""

NOT_SUPPORTED: Final = "not_supported"
Label = Literal["supported", "contradicted", "not_supported"]
"""an NLI model's class for a (premise, claim) pair, and the kind of a flagged span"""
LABELS: Final = (SUPPORTED, CONTRADICTED, NOT_SUPPORTED)
"""the NLI models' classes in the order of their heads' columns"""

UNVERIFIED: Final = "unverified"
Reported = Literal["supported", "contradicted", "unverified"]
"""the report's word for a sentence"""

SUPPORTS: Final = "supports"
CONTRADICTS: Final = "contradicts"
NOT_ENOUGH: Final = "not_enough"
CitedLabel = Literal["supports", "contradicts", "not_enough"]
"""a cited source's label for the claim that cites it"""
OUTCOMES: Final = (SUPPORTED, "citation_not_supporting", "needs_citation", "needs_none")
"""a cited sentence's outcome in citation repair: its citations support it, do not, it needs
one, or it needs none"""

REPORTED: dict[str, str] = {
    CONTRADICTED: CONTRADICTED,
    SUPPORTED: SUPPORTED,
    NOT_STATED: UNVERIFIED,
}
"""the report's word for each verdict of the judge on a sentence it assessed"""

FOUND: dict[str, str] = {CONTRADICTED: CONTRADICTED, NOT_SUPPORTED: UNVERIFIED}
"""the report's word for a sentence holding a finding of each kind (``FindingReport.kind``):
what a check that edits nothing says of the sentence its fix would change"""

CITED: dict[str, str] = {SUPPORTED: SUPPORTS, CONTRADICTED: CONTRADICTS}
"""A cited source's label for its claim (``purr check``, ``/v1/check``, citation repair) from
the judge's verdict on the pair; anything else is ``not_enough``."""

DECIDED: dict[str, str] = {
    SUPPORTED: "the judge finds it supported",
    CONTRADICTED: "the judge finds it wrong",
    NOT_STATED: "the judge finds it not stated",
    NOT_CHECKABLE: "the judge finds no sentence about the query",
}
"""How a judge that weighs other judges' findings (``learned``) opens its reason: its verdict,
before the readings it weighed (which may say otherwise)."""

SAYS: dict[str, tuple[str, ...]] = {
    SUPPORTED: ("the evidence supports", DECIDED[SUPPORTED]),
    CONTRADICTED: (
        "the evidence contradicts",
        "the evidence answers",
        "the evidence disagrees",
        DECIDED[CONTRADICTED],
    ),
    NOT_STATED: (
        "the evidence neither supports nor contradicts",
        "the evidence does not state",
        "the evidence may answer",
        "gate off",
        "set aside",
        DECIDED[NOT_STATED],
    ),
    NOT_CHECKABLE: ("no sentence of the text answers", DECIDED[NOT_CHECKABLE]),
}
"""The words a reason opens with, per verdict: a step's reason says what its verdict says
(``editor.report.coherence``)."""
