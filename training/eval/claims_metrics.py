"""Claim-level scores of ``purr eval edits`` on human-labelled real claims (``purr data
real-claims``): supported claims left alone, and what the edits of the others did."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from editor.report.metrics import levenshtein
from editor.text.words import word_changes
from editor.verdicts import SUPPORTED


def changed_words(original: str, revised: str) -> list[str]:
    """Words of ``original`` an edit replaced or deleted (lower-cased).

    >>> changed_words("It opened in 1887 in Rome.", "It opened in 1889 in Rome.")
    ['1887']
    """
    runs = word_changes(original, revised, ("replace", "delete"))
    return [w.lower() for old, _ in runs for w in old]


def _scores(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def share(k: int, n: int) -> float | None:
        return round(k / n, 4) if n else None

    def edited(r: dict[str, Any]) -> bool:
        return r["revised"] != r["original"]

    supported = [r for r in rows if r["label"] == SUPPORTED]
    others = [r for r in rows if r["label"] != SUPPORTED]
    marked = [r for r in others if edited(r) and r.get("unsupported")]
    on_target = sum(
        all(
            w in {m.lower() for m in r["unsupported"]}
            for w in changed_words(r["original"], r["revised"])
        )
        for r in marked
    )
    gold = [r for r in others if r.get("gold")]
    closer = further = fixed = 0
    for r in gold:
        if not edited(r):
            continue
        before = levenshtein(r["original"], r["gold"])
        after = levenshtein(r["revised"], r["gold"])
        fixed += " ".join(r["revised"].split()) == " ".join(r["gold"].split())
        closer += after < before
        further += after > before
    return {
        SUPPORTED: len(supported),
        "supported_unchanged": share(sum(not edited(r) for r in supported), len(supported)),
        "unsupported": len(others),
        "unsupported_edited": share(sum(edited(r) for r in others), len(others)),
        "edits_on_marked_words": share(on_target, len(marked)),
        "with_gold": len(gold),
        "gold_fixed": share(fixed, len(gold)),
        "gold_closer": share(closer, len(gold)),
        "gold_further": share(further, len(gold)),
    }


def claim_scores(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Scores overall (``supported_unchanged`` is primary: do no harm) and by dataset, for the
    rows that carry a ``label`` and were not degraded. ``edits_on_marked_words``: of the edited
    claims with words annotators marked unsupported (WiCE), the share whose edit changed only
    those words; ``gold_*``: of the claims with a human fix (SummEdits), the share the edit
    made identical to it, moved closer to it or moved away from it (Levenshtein).

    >>> rows = [{"original": "A is 5.", "revised": "A is 5.", "label": "supported", "dataset": "x"},
    ...         {"original": "A is 6.", "revised": "A is 5.", "label": "not_supported",
    ...          "gold": "A is 5.", "unsupported": ["6"], "dataset": "x"}]
    >>> s = claim_scores(rows)
    >>> s["supported_unchanged"], s["gold_fixed"], s["edits_on_marked_words"]
    (1.0, 1.0, 1.0)
    """
    rows = [r for r in rows if "label" in r and r.get("status") != "degraded"]
    out: dict[str, Any] = {"primary": "supported_unchanged", **_scores(rows)}
    names = sorted({str(r.get("dataset")) for r in rows})
    out["by_dataset"] = {n: _scores([r for r in rows if str(r.get("dataset")) == n]) for n in names}
    return out
