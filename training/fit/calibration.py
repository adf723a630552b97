"""``purr train calibration``: recalibrate the configured verifier to one domain.

Reads labelled pairs of the domain (JSONL in the NLI shape, ``{"premise": evidence,
"hypothesis": claim, "label": "supported" | "partial" | "not_supported" | "contradicted"}``),
scores them with the verifier the config builds (decomposition as configured, each sentence of a
claim on its own), fits ``editor.attribution.recalibration`` to them and writes it as JSON, with
its cross-fitted figures (each fold judged by a fit on the others) and a reliability plot beside
it (``FILE.png``). Use it with ``--set attribution.calibration=FILE``.

    purr train calibration --pairs my-pairs.jsonl --out my-domain.json [--config C --set K=V]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from editor.attribution.recalibration import MIN_PAIRS, fit_recalibration, verifier_of
from editor.verdicts import SUPPORTED
from retrieval.files import write_text
from training.args import option, switch

log = logging.getLogger(__name__)


def add_parser(tsub: argparse._SubParsersAction, common) -> None:
    p = tsub.add_parser(
        "calibration",
        help="recalibrate the verifier to your domain from labelled pairs "
        "(then --set attribution.calibration=FILE)",
    )
    p.add_argument(
        "--pairs",
        required=True,
        help="JSONL of {premise, hypothesis, label}; label supported, partial, not_supported "
        f"or contradicted; at least {MIN_PAIRS} pairs, both supported and not",
    )
    p.add_argument("--out", required=True, help="the recalibration JSON to write")
    option(p, "--folds", int, 5, "cross-fitting folds for its figures")
    switch(
        p,
        "--balanced",
        "weigh supported and unsupported pairs equally: 0.5 then balances the two errors "
        "(default: probabilities that match your pairs' rate of supported claims)",
    )
    common(p, index=False)
    p.set_defaults(handler=run_train_calibration)


def fit(
    cfg,
    pairs: str | Path,
    out: str | Path,
    folds: int = 5,
    balanced: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Score ``pairs`` with the verifier of attribution config ``cfg`` (its own recalibration
    left out), fit, write ``out`` and ``out`` with ``.png``; the JSON written."""
    from editor.attribution.base import build
    from training.data.nli import load_nli_file
    from training.eval.attribution import score_rows
    from training.eval.calibration import plot, recalibration_metrics

    pairs, out = Path(pairs).expanduser(), Path(out).expanduser()
    if out.suffix != ".json":
        raise ValueError(f"--out {out}: name a .json file (the plot goes beside it as .png)")
    rows = load_nli_file(pairs, "pairs", max_length=None)
    out.parent.mkdir(parents=True, exist_ok=True)
    cfg = cfg.model_copy(update={"calibration": None})
    model = build(cfg)
    scores = score_rows(
        model,
        rows,
        progress=progress,
        desc="score pairs",
        per_sentence=True,
        decompose=cfg.decompose,
    )
    p = scores[:, 0]
    y = np.array([r.label == SUPPORTED for r in rows], dtype=int)
    cal = replace(fit_recalibration(p, y, balanced), verifier=verifier_of(cfg))
    raw: dict[str, Any] = {**cal.to_json(), "pairs_file": str(pairs)}
    try:
        metrics, variants = recalibration_metrics(p, y, [r.group for r in rows], folds)
        name, drop = ("balanced", "recalibrated") if balanced else ("recalibrated", "balanced")
        raw["cross_fitted"] = {k: v for k, v in metrics.items() if not k.endswith(drop)}
        del variants[drop]
        key = "balanced_accuracy" if balanced else "ece"  # what each fit is for
        kept, fitted = metrics[f"{key}_given"], metrics[f"{key}_{name}"]
        if (fitted < kept) if balanced else (fitted > kept):
            log.warning(
                "on pairs it did not see, the recalibration does worse than the verifier as "
                "given (%s %.3f -> %.3f): the verifier may already suit these pairs, or they "
                "are too few; check with more pairs before using it",
                key,
                kept,
                fitted,
            )
        plot({pairs.stem: (y, variants)}, out.with_suffix(".png"))
    except ValueError as e:  # too few pairs to hold some out: the fit stands, unmeasured
        log.warning("no cross-fitted figures (%s); add pairs to measure the recalibration", e)
        raw["cross_fitted"] = None
    write_text(out, json.dumps(raw, indent=2, default=float) + "\n")
    return raw


def run_train_calibration(args: argparse.Namespace) -> int:
    from editor.config import load_config

    if args.folds < 2:
        raise ValueError(f"--folds must be at least 2, got {args.folds}")
    cfg = load_config(args.config, list(args.overrides))
    raw = fit(cfg.attribution, args.pairs, args.out, args.folds, args.balanced)
    keys = ("ece", "balanced_accuracy")
    cv = raw["cross_fitted"] or {}
    summary = {
        "out": args.out,
        "scale": raw["scale"],
        "bias": raw["bias"],
        "pairs": raw["pairs"],
        "cross_fitted": {
            f"{k}_{w}": cv.get(f"{k}_{w}")
            for k in keys
            for w in ("given", "balanced" if args.balanced else "recalibrated")
        },
        "use": f"--set attribution.calibration={args.out}",
    }
    json.dump(summary, sys.stdout, indent=2, default=float)
    sys.stdout.write("\n")
    return 0
