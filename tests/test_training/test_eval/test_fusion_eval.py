"""``purr eval fusion``: the shipped verifier's fusion against the NLI model alone and refitted
variants, fitted and judged on the two halves of real dev rows."""

from __future__ import annotations

import json

from editor.attribution.factories import default_purr_path
from training.eval.fusion import run


def test_variants_are_fitted_on_one_half_and_judged_on_the_other(dev_data, tmp_path):
    report = run(str(default_purr_path()), str(dev_data), ["scifact"], 60, tmp_path)
    held = report["held_rows"]["scifact"]
    assert 0 < held < 60 and report["fit_rows"] == 60 - held  # the halves never overlap
    m = report["metrics"]
    for name in ("nli_alone", "shipped_fusion", "refit_all", "refit_nli_only"):
        for key in ("balanced_accuracy", "roc_auc"):
            assert 0.0 <= m[f"mean/{name}/{key}"] <= 1.0
    # the ablations drop a group each; the NLI log-odds stay
    assert {k.split("/")[1] for k in m if k.startswith("mean/refit_without_")} == {
        "refit_without_slot",
        "refit_without_coverage",
        "refit_without_products",
    }
    assert json.loads((tmp_path / "metrics.json").read_text())["primary"] == report["primary"]
    assert (tmp_path / "fusion.png").stat().st_size > 1000
