"""The numbers ``purr eval`` reports, from its per-row results: F1_AP and its parts, edit
categories, the attribution gain with a bootstrap interval, the planted-error fix rates and how
much closer to the reference the revisions moved. Pure functions over result rows."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from editor.report.metrics import (
    EDIT_CATEGORIES,
    edit_category,
    f1_ap,
    levenshtein_closer,
    levenshtein_closer_chars,
)


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


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Corpus-level metrics; ``f1_ap`` (harmonic mean of mean attribution after and mean
    preservation, as RARR/PURR report it) is primary."""
    scored = [
        r for r in results if r.get("report") and r["report"]["attribution_after"] is not None
    ]
    before = [
        r["report"]["attribution_before"]
        for r in scored
        if r["report"]["attribution_before"] is not None
    ]
    after = [r["report"]["attribution_after"] for r in scored]
    pres = [r["report"]["preservation"] for r in scored]
    cats = [
        edit_category(
            r["report"]["attribution_before"] or 0.0,
            r["report"]["attribution_after"],
            r["report"]["preservation"],
            changed=r["revised"] != r["original"],
        )
        for r in scored
    ]
    totals = [sum(r["timings_ms"].values()) for r in results if r.get("timings_ms")]
    m_after = float(np.mean(after)) if after else math.nan
    m_pres = float(np.mean(pres)) if pres else math.nan
    out: dict[str, Any] = {
        "primary": "f1_ap",
        "rows": len(results),
        "scored_rows": len(scored),
        "degraded_rows": sum(r.get("status") == "degraded" for r in results),
        "attribution_before": round(float(np.mean(before)), 4) if before else None,
        "attribution_after": round(m_after, 4) if after else None,
        "preservation": round(m_pres, 4) if pres else None,
        "f1_ap": round(f1_ap(m_after, m_pres), 4) if after else None,
        "edit_categories": {
            c: round(cats.count(c) / len(cats), 4) if cats else 0.0 for c in EDIT_CATEGORIES
        },
        "latency_ms": {
            "p50": round(float(np.percentile(totals, 50)), 1),
            "p95": round(float(np.percentile(totals, 95)), 1),
        }
        if totals
        else None,
    }
    gains = [
        r["report"]["attribution_after"] - r["report"]["attribution_before"]
        for r in scored
        if r["revised"] != r["original"] and r["report"]["attribution_before"] is not None
    ]
    if gains:
        out["attribution_gain"] = attribution_gain(gains)
    stages = sorted({k for r in results for k in (r.get("timings_ms") or {})})
    out["latency_by_stage_ms"] = {
        k: {
            "p50": round(float(np.percentile(v, 50)), 1),
            "p95": round(float(np.percentile(v, 95)), 1),
        }
        for k in stages
        if (v := [r["timings_ms"][k] for r in results if k in (r.get("timings_ms") or {})])
    }
    planted = [
        r for r in results if isinstance(r.get("planted"), bool) and r.get("status") != "degraded"
    ]
    if planted:
        out["planted"] = planted_scores(planted)
    with_ref = [
        r for r in results if r.get("reference") is not None and r.get("revised") is not None
    ]
    if with_ref:
        out["reference"] = {
            "closer_relative": round(
                float(
                    np.mean(
                        [
                            levenshtein_closer(r["original"], r["revised"], r["reference"])
                            for r in with_ref
                        ]
                    )
                ),
                4,
            ),
            "closer_chars": round(
                float(
                    np.mean(
                        [
                            levenshtein_closer_chars(r["original"], r["revised"], r["reference"])
                            for r in with_ref
                        ]
                    )
                ),
                2,
            ),
        }
    return out


def planted_scores(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Fix rate (rows with a planted error whose revision equals the reference), touched rate
    (rows with an error that were changed at all) and false-edit rate (correct rows that were
    changed), overall and by error type.

    >>> planted_scores([
    ...     {"planted": True, "error_type": "date", "original": "b", "revised": "a", "reference": "a"},
    ...     {"planted": False, "original": "a", "revised": "a", "reference": "a"}])["fix_rate"]
    1.0
    """

    def share(xs: list[bool]) -> float | None:
        return round(sum(xs) / len(xs), 4) if xs else None

    def fixed(r):
        return " ".join(r["revised"].split()) == " ".join(r["reference"].split())

    err = [r for r in rows if r["planted"]]
    ok = [r for r in rows if not r["planted"]]
    by_type = {}
    for kind in sorted({r.get("error_type") for r in err if r.get("error_type")}):
        sub = [r for r in err if r.get("error_type") == kind]
        by_type[kind] = {"rows": len(sub), "fix_rate": share([fixed(r) for r in sub])}
    return {
        "rows_with_error": len(err),
        "rows_correct": len(ok),
        "fix_rate": share([fixed(r) for r in err]),
        "touched_rate": share([r["revised"] != r["original"] for r in err]),
        "false_edit_rate": share([r["revised"] != r["original"] for r in ok]),
        "by_type": by_type,
    }
