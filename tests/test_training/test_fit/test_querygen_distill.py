"""Distilling the prompted query generator: the teacher's questions from a real small LLM
(resumable, fallbacks skipped), a LoRA trained on them over a tiny causal model, and
``querygen.type=trained`` loading it through the config."""

from __future__ import annotations

import json

import pytest
from helpers import few_steps

from editor.config import QueryGenConfig
from editor.research.querygen.base import build as build_querygen
from editor.research.querygen.llm import LLMQueryGenerator
from editor.research.querygen.trained import TrainedQueryGenerator
from training.fit.querygen import (
    QueryGenTrainConfig,
    make_teacher_file,
    read_passages,
    train_querygen,
)

PASSAGES = [
    ("curie", "Marie Curie was born in Warsaw in 1867. She won two Nobel Prizes.", None),
    ("tower", "The Eiffel Tower is 330 metres tall.", "user: how tall is the eiffel tower?"),
]


def test_teacher_rows_from_a_real_small_llm_resume_and_skip(tmp_path):
    from llm_helpers import smollm

    teacher = LLMQueryGenerator(smollm(), samples=1, max_new_tokens=24)
    out = tmp_path / "teacher.jsonl"
    report = make_teacher_file(teacher, PASSAGES, out, n=5, batch_size=2, progress=False)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    skipped = [
        json.loads(x) for x in (tmp_path / "teacher.jsonl.skipped.jsonl").read_text().splitlines()
    ]
    assert report["rows"] == len(rows) and len(rows) + len(skipped) == len(PASSAGES)
    assert rows, "SmolLM2 wrote no grounded question for either passage"
    for r in rows:
        text = dict((p[0], p[1]) for p in PASSAGES)[r["id"]]
        assert r["text"] == text and r["queries"]
        assert all(q.endswith("?") for q in r["queries"])
    again = make_teacher_file(teacher, PASSAGES, out, n=5, batch_size=2, progress=False)
    assert again["new_rows"] == 0  # nothing redone
    with pytest.raises(ValueError, match="must be >= 1"):
        make_teacher_file(teacher, PASSAGES, out, n=0, progress=False)


def test_passage_files(tmp_path):
    (tmp_path / "p.jsonl").write_text('{"id": "x", "text": "Paris is in France."}\n{"text": ""}\n')
    with pytest.raises(ValueError, match=r"p.jsonl:2: a row needs a non-empty 'text'"):
        read_passages(tmp_path / "p.jsonl")
    (tmp_path / "p.txt").write_text("Paris is in France.\n\nRome is in Italy.\n")
    assert [p[1] for p in read_passages(tmp_path / "p.txt")] == [
        "Paris is in France.",
        "Rome is in Italy.",
    ]


def test_train_querygen_and_load_it_as_querygen_type_trained(tiny_model_dir, tmp_path):
    data = tmp_path / "teacher.jsonl"
    rows = [
        {
            "id": f"r{i}",
            "text": f"City {i} was founded in {1800 + i} by settler {i}.",
            "context": None,
            "queries": [f"When was City {i} founded?", f"Who founded City {i}?"],
        }
        for i in range(16)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = QueryGenTrainConfig(
        data=str(data),
        base=str(tiny_model_dir),
        out=str(tmp_path / "qg"),
        **few_steps(max_steps=6, eval_every=3, lr=1e-2),
    )
    report = train_querygen(cfg, progress=False)
    assert report["best_dev_loss"] < report["curve"][0]["dev_loss"]
    saved = tmp_path / "qg"
    assert (saved / "adapter_config.json").is_file()
    assert json.loads((saved / "train_config.json").read_text())["base"] == str(tiny_model_dir)

    gen = build_querygen(
        QueryGenConfig(type="trained", model=str(tiny_model_dir), adapter=str(saved))
    )
    assert isinstance(gen, TrainedQueryGenerator)
    [queries, empty] = gen.generate_batch(["Marie Curie was born in Warsaw in 1867.", "  "])
    assert queries and empty == []  # a tiny model may fall back to one query per sentence
    assert all(q.generator in {"trained", "sentence"} for q in queries)

    with pytest.raises(ValueError, match="querygen.adapter"):
        build_querygen(QueryGenConfig(type="trained"))
    (tmp_path / "bad.jsonl").write_text('{"text": "x"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1: a row needs 'text' and 'queries'"):
        train_querygen(cfg.model_copy(update={"data": str(tmp_path / "bad.jsonl")}), False)
