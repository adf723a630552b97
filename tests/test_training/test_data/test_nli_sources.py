"""The NLI source catalogue (uses, aliases, claim groups), prepared splits on disk, and the
hard pairs made from `purr data make` rows."""

from __future__ import annotations

import json

import pytest

from training.data.nli import (
    NLIExample,
    NLISplits,
    group_key,
    read_splits,
    split_source,
    write_splits,
)
from training.data.nli_pairs import make_pairs, read_make_rows
from training.data.nli_sources import ALIASES, SHARED, SOURCES, expand, trainable
from training.fit.attribution_config import TrainAttributionConfig


def _ex(i: int, source: str = "fm2", label: str = "supported") -> NLIExample:
    return NLIExample(f"{source}:{i}", source, f"premise {i}", f"claim {i}", label, f"g{i}")


def test_aliases_expand_in_order_without_repeats():
    names = expand(["scifact", "shared", "extra"])
    assert names[:4] == ["scifact", "climate-fever", "wice", "summedits"]
    assert len(names) == len(set(names))
    assert {"fever-nli", "fnc1", "summac", "qags"} <= set(names)
    assert not set(ALIASES["eval-only"]) & set(names)
    with pytest.raises(ValueError, match="unknown NLI sources \\['nope'\\]"):
        expand(["shared", "nope"])


def test_evaluation_only_sets_are_refused_for_training():
    with pytest.raises(ValueError, match="evaluation only"):
        trainable(expand(["shared", "anli"]))
    with pytest.raises(ValueError, match="evaluation only"):
        TrainAttributionConfig(out="x", sources=["eval-only"])
    cfg = TrainAttributionConfig(out="x", sources=["shared", "fm2"])
    assert cfg.sources == SHARED + ["fm2"]


def test_dev_and_eval_sets_never_reach_train():
    rows = [_ex(i, "summac") for i in range(30)]
    split = split_source("summac", rows)
    assert split.train == [] and len(split.dev) == 30
    mixed = split_source("fm2", [_ex(i) for i in range(200)])
    assert mixed.train and mixed.dev and len(mixed.train) + len(mixed.dev) == 200
    assert all(SOURCES[n].use == "eval" for n in ALIASES["eval-only"])


def test_fever_files_share_a_claim_group():
    claim = "Paris is the capital of France."
    a = group_key("fever-nli", {"premise": "one page", "hypothesis": claim})
    b = group_key(
        "fever-rte", {"premise": "another page", "hypothesis": " paris is the CAPITAL of france. "}
    )
    assert a == b
    assert group_key("fm2", {"premise": "one page", "hypothesis": claim}) != a


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".jsonl.xz"])
def test_splits_round_trip(tmp_path, suffix):
    splits = NLISplits([_ex(1), _ex(2, label="contradicted")], [_ex(3, "scifact")])
    path = tmp_path / f"splits{suffix}"
    assert write_splits(splits, path) == {"train": 2, "dev": 1}
    assert read_splits(path) == splits


def test_bad_splits_files_say_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="no such splits file"):
        read_splits(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    row = {"split": "test", **_ex(1).__dict__}
    bad.write_text(json.dumps(row) + "\n")
    with pytest.raises(ValueError, match="neither 'train' nor 'dev'"):
        read_splits(bad)
    bad.write_text(json.dumps({"split": "train", **_ex(1).__dict__, "label": "maybe"}) + "\n")
    with pytest.raises(ValueError, match="label 'maybe'"):
        read_splits(bad)


def test_make_rows_give_a_supported_and_a_contradicted_pair_per_statement(tmp_path):
    evidence = ["The Eiffel Tower was built from 1887 to 1889 in Paris."]
    rows = [
        {
            "id": f"wiki:Eiffel Tower#s0{v}",
            "seed_id": "wiki:Eiffel Tower#s0",
            "evidence_pos": evidence,
            "clean": "The tower was built from 1887 to 1889.",
            "corrupted": f"The tower was built from 1887 to {1890 + i}.",
        }
        for i, v in enumerate(["", "~v1"])
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pairs = make_pairs(read_make_rows([path]))
    assert [p.label for p in pairs] == ["supported", "contradicted", "contradicted"]
    assert {p.group for p in pairs} == {"wiki-synthetic:wiki:Eiffel Tower"}
    assert all(p.premise == evidence[0] for p in pairs)
    path.write_text('{"clean": "x"}\n')
    with pytest.raises(ValueError, match="not a `purr data make` row"):
        list(read_make_rows([path]))
