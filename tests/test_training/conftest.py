"""Fixtures of the training tests: a shared-data folder of small NLI files, a tiny base encoder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import NAME_POOL, nli_rows, save_tiny_bert_nli

from editor.attribution.base import build as build_attribution
from editor.config import AttributionConfig, load_config
from editor.factory import Components
from editor.text.nlp import get_nlp
from retrieval.corpus import read_corpus
from training.data.corrupt import RuleCorruptor
from training.data.editor_data import EditorDataMaker, make_file
from training.data.nli import NLI_FILES
from training.data.seeds import corpus_seeds


@pytest.fixture
def data_dir(tmp_path) -> Path:
    root = tmp_path / "data"
    for source, rel in NLI_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in nli_rows(source)))
    return root


@pytest.fixture(scope="session")
def tiny_base(tmp_path_factory) -> Path:
    """A tiny random BERT encoder (no head) with a real WordPiece tokenizer, like the base."""
    return save_tiny_bert_nli(tmp_path_factory.mktemp("tiny-base"), None)


@pytest.fixture(scope="module")
def rows_file(built_index, resources, tmp_path_factory):
    """12 rows of ``purr data make`` over the tiny index (per test module: tests append to it)."""
    cfg = load_config("default")
    comp = Components(cfg, index_path=built_index, progress=False)
    maker = EditorDataMaker(
        comp.researcher,
        build_attribution(AttributionConfig()),
        RuleCorruptor(get_nlp(), NAME_POOL),
        relevance=0.3,
    )
    docs = list(read_corpus([resources / "tiny_corpus.jsonl"]))
    out = tmp_path_factory.mktemp("data") / "rows.jsonl"
    report = make_file(maker, corpus_seeds(docs, per_doc=3), out, n=12, progress=False)
    return out, report, maker, docs
