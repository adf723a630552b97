"""The numbers ``purr eval edits`` reports, from its per-row results: F1_AP and its parts, edit
categories, the attribution gain with a bootstrap interval, the planted-error fix rates and how
much closer to the reference the revisions moved. Pure functions over typed records
(``EvalRecord``: the row's ``EditResult`` and its dataset fields)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from editor.report.coherence import incoherences
from editor.report.metrics import (
    EDIT_CATEGORIES,
    edit_category,
    f1_ap,
    levenshtein_closer,
    levenshtein_closer_chars,
)
from editor.result import EditResult


def attribution_gain(gains: list[float], resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Attribution after minus before over the rows an editor changed: the mean with a 95%
    bootstrap interval (seeded), and the share of rows whose attribution rose or fell by more
    than 0.01. An interval above 0 means the edits raised attribution beyond row noise.

    >>> g = attribution_gain([0.2, 0.1, 0.3, -0.05])
    >>> g["mean"], g["rose"], g["fell"], g["ci95"][0] < g["mean"] < g["ci95"][1]
    (0.1375, 0.75, 0.25, True)
    """
    values = np.asarray(gains, dtype=float)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    return {
        "rows": len(values),
        "mean": round(float(values.mean()), 4),
        "ci95": [round(float(np.percentile(means, q)), 4) for q in (2.5, 97.5)],
        "rose": round(float(np.mean(values > 0.01)), 4),
        "fell": round(float(np.mean(values < -0.01)), 4),
    }


@dataclass(frozen=True)
class EvalRecord:
    """One evaluated row: the pipeline's ``EditResult`` and what the dataset says about the row
    (its reference revision; for the planted dev set, whether an error was planted and of which
    kind)."""

    id: str
    result: EditResult
    reference: str | None = None
    planted: bool | None = None
    error_type: str | None = None

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> EvalRecord:
        """A line of ``results.jsonl``: the row's fields with the result contract's beside them."""
        planted = rec.get("planted")
        return cls(
            str(rec["id"]),
            EditResult.from_json(rec),
            rec.get("reference"),
            planted if isinstance(planted, bool) else None,
            rec.get("error_type"),
        )


def _p50_p95(values: Sequence[float]) -> dict[str, float]:
    return {
        "p50": round(float(np.percentile(values, 50)), 1),
        "p95": round(float(np.percentile(values, 95)), 1),
    }


def _mafe(records: Sequence[EvalRecord]) -> dict[str, Any] | None:
    """QA-based factuality (MAFE) of the original and the revision: precision against the
    evidence the row was edited with, and, where the row has a reference, its recall."""
    from editor.citations.mafe import mafe

    rows = [r for r in records if r.result.evidence and r.result.status != "degraded"]
    if not rows:
        return None
    scores: dict[str, list[float]] = {k: [] for k in ("p_before", "p_after", "r_before", "r_after")}
    for r in rows:
        evidence = [e.text for e in r.result.evidence]
        before = mafe(r.result.original, evidence, r.reference)
        after = (
            before
            if r.result.revised == r.result.original
            else mafe(r.result.revised, evidence, r.reference)
        )
        for key, value in (
            ("p_before", before.precision),
            ("p_after", after.precision),
            ("r_before", before.recall),
            ("r_after", after.recall),
        ):
            if value is not None:
                scores[key].append(value)

    def mean(xs: list[float]) -> float | None:
        return round(float(np.mean(xs)), 4) if xs else None

    return {
        "rows": len(rows),
        "precision_before": mean(scores["p_before"]),
        "precision_after": mean(scores["p_after"]),
        "recall_before": mean(scores["r_before"]),
        "recall_after": mean(scores["r_after"]),
    }


def summarise(records: Sequence[EvalRecord]) -> dict[str, Any]:
    """Corpus-level metrics; ``f1_ap`` (harmonic mean of mean attribution after and mean
    preservation, as RARR/PURR report it) is primary."""
    results = [r.result for r in records]
    scored = [
        (r, r.report)
        for r in results
        if r.report is not None and r.report.attribution_after is not None
    ]
    before = [rep.attribution_before for _, rep in scored if rep.attribution_before is not None]
    after = [float(rep.attribution_after or 0.0) for _, rep in scored]
    pres = [rep.preservation for _, rep in scored]
    cats = [
        edit_category(
            rep.attribution_before or 0.0,
            float(rep.attribution_after or 0.0),
            rep.preservation,
            changed=r.revised != r.original,
        )
        for r, rep in scored
    ]
    totals = [sum(r.timings_ms.values()) for r in results if r.timings_ms]
    m_after = float(np.mean(after)) if after else math.nan
    m_pres = float(np.mean(pres)) if pres else math.nan
    out: dict[str, Any] = {
        "primary": "f1_ap",
        "rows": len(results),
        "scored_rows": len(scored),
        "degraded_rows": sum(r.status == "degraded" for r in results),
        "attribution_before": round(float(np.mean(before)), 4) if before else None,
        "attribution_after": round(m_after, 4) if after else None,
        "preservation": round(m_pres, 4) if pres else None,
        "f1_ap": round(f1_ap(m_after, m_pres), 4) if after else None,
        "edit_categories": {
            c: round(cats.count(c) / len(cats), 4) if cats else 0.0 for c in EDIT_CATEGORIES
        },
        "latency_ms": _p50_p95(totals) if totals else None,
    }
    gains = [
        float(rep.attribution_after or 0.0) - rep.attribution_before
        for r, rep in scored
        if r.revised != r.original and rep.attribution_before is not None
    ]
    if gains:
        out["attribution_gain"] = attribution_gain(gains)
    stages = sorted({k for r in results for k in r.timings_ms})
    out["latency_by_stage_ms"] = {
        k: _p50_p95([r.timings_ms[k] for r in results if k in r.timings_ms]) for k in stages
    }
    planted = [r for r in records if r.planted is not None and r.result.status != "degraded"]
    if planted:
        out["planted"] = planted_scores(planted)
    problems = [f"{r.id}: {p}" for r in records for p in incoherences(r.result)]
    out["incoherent"] = {"count": len(problems), "examples": problems[:10]}
    mafe_scores = _mafe(records)
    if mafe_scores:
        out["mafe"] = mafe_scores
    with_ref = [(r.result, r.reference) for r in records if r.reference is not None]
    if with_ref:
        closer = [levenshtein_closer(r.original, r.revised, ref) for r, ref in with_ref]
        chars = [levenshtein_closer_chars(r.original, r.revised, ref) for r, ref in with_ref]
        out["reference"] = {
            "closer_relative": round(float(np.mean(closer)), 4),
            "closer_chars": round(float(np.mean(chars)), 2),
        }
    return out


def planted_scores(records: Sequence[EvalRecord]) -> dict[str, Any]:
    """Fix rate (rows with a planted error whose revision equals the reference), touched rate
    (rows with an error that were changed at all) and false-edit rate (correct rows that were
    changed), overall and by error type.

    >>> def row(original, revised, reference, error_type=None):
    ...     result = EditResult(original, revised, None, (), (), (), None, "edited")
    ...     return EvalRecord("r", result, reference, error_type is not None, error_type)
    >>> planted_scores([row("b", "a", "a", "date"), row("a", "a", "a")])["fix_rate"]
    1.0
    """

    def share(xs: list[bool]) -> float | None:
        return round(sum(xs) / len(xs), 4) if xs else None

    def fixed(r: EvalRecord) -> bool:
        return " ".join(r.result.revised.split()) == " ".join((r.reference or "").split())

    def changed(r: EvalRecord) -> bool:
        return r.result.revised != r.result.original

    err = [r for r in records if r.planted]
    ok = [r for r in records if not r.planted]
    by_type = {}
    for kind in sorted({r.error_type for r in err if r.error_type}):
        sub = [r for r in err if r.error_type == kind]
        by_type[kind] = {"rows": len(sub), "fix_rate": share([fixed(r) for r in sub])}
    return {
        "rows_with_error": len(err),
        "rows_correct": len(ok),
        "fix_rate": share([fixed(r) for r in err]),
        "touched_rate": share([changed(r) for r in err]),
        "false_edit_rate": share([changed(r) for r in ok]),
        "by_type": by_type,
    }
