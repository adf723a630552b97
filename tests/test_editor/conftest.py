"""Fixtures shared by this folder's tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import MNLI, save_tiny_t5
from helpers import save_tiny_bert_nli as _save_bert

from editor.attribution import (
    HFSequenceClassificationNLI,
)


@pytest.fixture(scope="session")
def bert_dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("nli")
    dirs = {
        "mnli": _save_bert(root / "mnli", MNLI),
        "binary": _save_bert(root / "binary", {0: "entailment", 1: "not_entailment"}, seed=1),
        "single": _save_bert(root / "single", {0: "LABEL_0"}, seed=2),
    }
    # Same weights as "mnli", but the labels carry no names.
    generic = root / "generic"
    shutil.copytree(dirs["mnli"], generic)
    config = json.loads((generic / "config.json").read_text())
    config["id2label"] = {str(i): f"LABEL_{i}" for i in range(3)}
    config["label2id"] = {f"LABEL_{i}": i for i in range(3)}
    (generic / "config.json").write_text(json.dumps(config))
    dirs["generic"] = generic
    return dirs


T5_WORDS = """<pad> </s> <unk> 1 0 premise hypothesis : . , the eiffel tower was completed in 1889
paris is france marie curie a physicist won two nobel prizes she born warsaw""".split()


@pytest.fixture(scope="session")
def t5_dir(tmp_path_factory) -> Path:
    """A tiny random T5 with a word-level tokenizer trained in-process (no downloads)."""
    return save_tiny_t5(tmp_path_factory.mktemp("t5-true"), T5_WORDS)


@pytest.fixture(scope="session")
def mnli_model(bert_dirs) -> HFSequenceClassificationNLI:
    return HFSequenceClassificationNLI(str(bert_dirs["mnli"]), max_length=64, batch_size=8)
