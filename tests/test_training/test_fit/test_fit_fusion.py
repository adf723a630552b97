"""`purr train fusion` end to end on a tiny NLI model: fitted weights, a dev-fitted temperature,
the report half's scores, the reliability plot, and a folder the attribution factory then
judges with (the fused verifier)."""

from __future__ import annotations

import argparse
import json

import pytest
from helpers import save_tiny_bert_nli

from editor.attribution.base import build
from editor.attribution.verifier import FusedVerifier
from editor.config import AttributionConfig
from training.data.nli import NLIExample, NLISplits, write_splits

LABELS = {0: "supported", 1: "contradicted", 2: "not_supported"}
DOC = "The Eiffel Tower was built from 1887 to 1889 in Paris by the company of Gustave Eiffel."


def _rows(split: str, n: int) -> list[NLIExample]:
    out = []
    for i in range(n):
        label = ("supported", "contradicted", "not_supported")[i % 3]
        claim = {
            "supported": "The Eiffel Tower was built from 1887 to 1889.",
            "contradicted": f"The Eiffel Tower was built from 1887 to {1890 + i}.",
            "not_supported": f"The tower has {i + 3} lifts.",
        }[label]
        source = ("scifact", "fm2")[i % 2]
        out.append(NLIExample(f"{split}{i}", source, DOC, claim, label, f"{split}-g{i}"))
    return out


@pytest.mark.parametrize("fit_on", ["train", "dev"])
def test_train_fusion_writes_a_calibrated_fusion_the_factory_uses(tmp_path, fit_on):
    from serve.cli.train import run_train_fusion

    model = save_tiny_bert_nli(tmp_path / "nli", LABELS)
    splits = tmp_path / "splits.jsonl.gz"
    write_splits(NLISplits(_rows("t", 30), _rows("d", 120)), splits)
    args = argparse.Namespace(
        model=str(model),
        splits=str(splits),
        out=None,
        train_per_source=20,
        dev_per_source=60,
        max_length=64,
        fit_on=fit_on,
        seed=0,
    )
    assert run_train_fusion(args) == 0
    metrics = json.loads((model / "fusion_metrics.json").read_text())
    assert metrics["temperature"] > 0
    assert {"nli", "fused"} <= set(metrics["report"]["all"])
    assert 0.0 <= metrics["report"]["all"]["fused"]["ece"] <= 1.0
    assert (model / "reliability.png").stat().st_size > 5_000
    fused = json.loads((model / "fusion.json").read_text())
    assert fused["meta"]["fit_on"] == fit_on
    verifier = build(AttributionConfig(model=str(model), max_length=64))
    assert isinstance(verifier, FusedVerifier)
    s = verifier.score(DOC, "The Eiffel Tower was built from 1887 to 1895.")
    assert s.supported + s.contradicted + s.not_supported == pytest.approx(1.0)
    plain = build(AttributionConfig(model=str(model), max_length=64, fusion=False))
    assert not isinstance(plain, FusedVerifier)


def test_train_fusion_refuses_a_folder_without_a_model(tmp_path):
    from serve.cli.train import run_train_fusion

    args = argparse.Namespace(model=str(tmp_path), splits="x", out=None)
    with pytest.raises(ValueError, match="no config.json"):
        run_train_fusion(args)
