"""The judge's one vocabulary, and the words people read it in.

Inside, every stage speaks the judge's verdicts (``Verdict``): a sentence is ``supported``,
``contradicted``, ``not_stated`` by its evidence, or ``not_checkable`` (no sentence answers the
query). At the edge they are worded for people: the report's sentences (``REPORTED``: what the
evidence does not state is ``unverified``) and a cited source's label (``CITED``).
"""

from __future__ import annotations

from typing import Literal

Verdict = Literal["supported", "contradicted", "not_stated", "not_checkable"]

REPORTED: dict[str, str] = {
    "contradicted": "contradicted",
    "supported": "supported",
    "not_stated": "unverified",
}
"""the report's word for each verdict of the judge on a sentence it assessed"""

CITED: dict[str, str] = {"supported": "supports", "contradicted": "contradicts"}
"""A cited source's label for its claim (``purr check``, ``/v1/check``, citation repair) from
the judge's verdict on the pair; anything else is ``not_enough``."""

DECIDED: dict[str, str] = {
    "supported": "the judge finds it supported",
    "contradicted": "the judge finds it wrong",
    "not_stated": "the judge finds it not stated",
    "not_checkable": "the judge finds no sentence about the query",
}
"""How a judge that weighs other judges' findings (``learned``) opens its reason: its verdict,
before the readings it weighed (which may say otherwise)."""

SAYS: dict[str, tuple[str, ...]] = {
    "supported": ("the evidence supports", DECIDED["supported"]),
    "contradicted": (
        "the evidence contradicts",
        "the evidence answers",
        "the evidence disagrees",
        DECIDED["contradicted"],
    ),
    "not_stated": (
        "the evidence neither supports nor contradicts",
        "the evidence does not state",
        "gate off",
        "set aside",
        DECIDED["not_stated"],
    ),
    "not_checkable": ("no sentence of the text answers", DECIDED["not_checkable"]),
}
"""The words a reason opens with, per verdict: a step's reason says what its verdict says
(``editor.report.coherence``)."""
