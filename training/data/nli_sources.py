"""The catalogue of claim–evidence sets the attribution model trains and is measured on.

Every set is a unified JSONL file under the data folder (``../shared/data``), one
``{id, source, premise, hypothesis, label}`` object a line. A source's ``use`` says what it may
do, from its licence and its labels (``shared/data/nli-extra/README.md``):

- ``train``: split by group into train and dev;
- ``dev``: measured only, never trained on (news summaries that may share articles with
  SummEdits, so they stay out of training);
- ``eval``: evaluation only (non-commercial licences): a shipped model must not train on them.

``shared`` marks the four sets of the primary metric (the mean over them chooses the best
checkpoint). ``group_by="claim"`` keys the split on the claim text, so that FEVER claims that
appear in both FEVER files land on the same side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Use = Literal["train", "dev", "eval"]


@dataclass(frozen=True)
class NLISource:
    """One claim–evidence set: where it lives and what it may be used for."""

    name: str
    path: str
    use: Use = "train"
    shared: bool = False
    group_by: Literal["document", "claim"] = "document"


_ALL = (
    NLISource("scifact", "nli/scifact_rationales.jsonl", shared=True),
    NLISource("climate-fever", "nli/climate_fever.jsonl", shared=True),
    NLISource("wice", "nli/wice_claim.jsonl", shared=True),
    NLISource("summedits", "nli/summedits.jsonl", shared=True),
    NLISource("fever-nli", "nli-extra/fever_nli.jsonl", group_by="claim"),
    NLISource("fever-rte", "nli-extra/fever_rte_dev.jsonl", group_by="claim"),
    NLISource("fnc1", "nli-extra/fnc1.jsonl"),
    NLISource("covidfact", "nli-extra/covidfact.jsonl"),
    NLISource("healthver", "nli-extra/healthver.jsonl"),
    NLISource("fm2", "nli-extra/fm2.jsonl"),
    NLISource("nli4ct", "nli-extra/nli4ct.jsonl"),
    NLISource("rte", "nli-extra/rte.jsonl"),
    NLISource("factcc", "nli-extra/factcc_sample.jsonl"),
    NLISource("summac", "nli-extra/summac_val.jsonl", use="dev"),
    NLISource("qags", "nli-extra/qags.jsonl", use="dev"),
    NLISource("anli", "nli-extra/anli_dev.jsonl", use="eval"),
    NLISource("control", "nli-extra/control.jsonl", use="eval"),
    NLISource("sick", "nli-extra/sick.jsonl", use="eval"),
    NLISource("faithbench", "nli-extra/faithbench.jsonl", use="eval"),
)

SOURCES: dict[str, NLISource] = {s.name: s for s in _ALL}
"""Every known set by name."""

SHARED = [s.name for s in _ALL if s.shared]
"""The four shared sets (SciFact, Climate-FEVER, WiCE, SummEdits): the primary metric's."""

EXTRA_TRAIN = [s.name for s in _ALL if s.use == "train" and not s.shared]
"""The ``nli-extra`` sets a shipped model may train on."""

ALIASES = {
    "shared": SHARED,
    "extra": EXTRA_TRAIN + [s.name for s in _ALL if s.use == "dev"],
    "eval-only": [s.name for s in _ALL if s.use == "eval"],
}


def expand(names: list[str] | tuple[str, ...]) -> list[str]:
    """Source names with the aliases (``shared``, ``extra``, ``eval-only``) expanded, in order,
    without repeats; unknown names raise a ValueError that lists the known ones.

    >>> expand(["shared", "fm2", "scifact"])
    ['scifact', 'climate-fever', 'wice', 'summedits', 'fm2']
    """
    unknown = [n for n in names if n not in SOURCES and n not in ALIASES]
    if unknown:
        raise ValueError(
            f"unknown NLI sources {unknown}; choose from {sorted(SOURCES)} "
            f"or an alias {sorted(ALIASES)}"
        )
    out: list[str] = []
    for name in names:
        out.extend(n for n in ALIASES.get(name, [name]) if n not in out)
    return out


def trainable(names: list[str]) -> list[str]:
    """The names unchanged, or a ValueError naming any evaluation-only set among them."""
    barred = [n for n in names if SOURCES[n].use == "eval"]
    if barred:
        raise ValueError(
            f"sources {barred} are evaluation only (non-commercial licences, see "
            "shared/data/nli-extra/README.md); drop them from the training sources and "
            "measure on them with `purr eval attribution --sources eval-only`"
        )
    return names
