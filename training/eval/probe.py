"""Factual-ablation probe (West et al.): does the editor's revision depend on the evidence?

For each row of ``purr data make`` the margin log P(y | x, E+) - log P(y | x, E-) is computed
with the editor's own scoring; the score is the share of rows whose margin exceeds log 100
(the gold evidence makes the clean statement at least 100x more likely than hard negatives).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from retrieval.files import write_text
from training.figures import save_figure

MARGIN = math.log(100)


def ablation_probe(
    editor: Any, rows: list[dict[str, Any]], n_evidence: int = 4, progress: bool = True
) -> dict[str, Any]:
    """Margins and the share above log 100 (primary); rows without negatives are skipped.

    >>> class Toy:  # P(y) is higher when y's words appear in the evidence
    ...     def score_targets(self, items):
    ...         return [10.0 * sum(w in " ".join(ev) for w in y.split()) for _, ev, y in items]
    >>> rows = [{"corrupted": "a", "clean": "b c", "evidence_pos": ["b c"], "evidence_neg": ["x"]}]
    >>> ablation_probe(Toy(), rows, progress=False)["share_above_log100"]
    1.0
    """
    margins = []
    for r in tqdm(rows, desc="ablation probe", disable=not progress):
        pos, neg = r["evidence_pos"][:n_evidence], r["evidence_neg"][:n_evidence]
        if not pos or not neg:
            continue
        with_pos, with_neg = editor.score_targets(
            [(r["corrupted"], pos, r["clean"]), (r["corrupted"], neg, r["clean"])]
        )
        margins.append(with_pos - with_neg)
    if not margins:
        raise ValueError("no row has both gold (evidence_pos) and negative evidence")
    arr = np.array(margins)
    return {
        "primary": "share_above_log100",
        "share_above_log100": round(float((arr > MARGIN).mean()), 4),
        "rows": len(margins),
        "margin_mean": round(float(arr.mean()), 3),
        "margin_median": round(float(np.median(arr)), 3),
        "margins": [round(float(m), 3) for m in margins],
    }


def write_probe(report: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    shown = {k: v for k, v in report.items() if k != "margins"}
    write_text(out / "metrics.json", json.dumps(shown, indent=2) + "\n")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.hist(report["margins"], bins=30, color="#4a7bd0")
    ax.axvline(MARGIN, color="red", linestyle="--", label="log 100")
    ax.set_xlabel("log P(y | x, E+) - log P(y | x, E-)")
    ax.set_ylabel("rows")
    ax.set_title(f"factual ablation: {report['share_above_log100']:.1%} above log 100")
    ax.legend()
    save_figure(fig, out / "ablation_probe.png")
