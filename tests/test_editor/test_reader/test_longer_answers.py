"""Answers of several sentences against their own document: each part of a two-part question
is read on its own, and a sentence that answers no part is asked about its own names, numbers
and dates (``judge.reader.other_sentences``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editor.config import load_config
from editor.factory import Components
from editor.pipeline import Pipeline

ROWS = {
    r["id"]: r
    for r in map(
        json.loads,
        (Path(__file__).resolve().parents[3] / "training/eval/answers_multi.jsonl").open(),
    )
}


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    return Pipeline(Components(load_config("default"), progress=False))


def test_the_second_part_of_a_two_part_question_is_read_and_its_wrong_answer_fixed(pipeline):
    row = ROWS["multi-047"]  # "What language ... written in, and how long does ... keep data?"
    r = pipeline.edit(row["text"], row["context"], row["evidence"])
    assert r.revised == row["fixed"][0]
    assert r.revised.startswith(row["text"].split(". ")[0])  # the right sentence kept


def test_a_sentence_the_question_does_not_ask_about_is_checked_on_its_own(pipeline):
    row = ROWS["multi-028"]  # asks what to do; the paging threshold in the second sentence is wrong
    r = pipeline.edit(row["text"], row["context"], row["evidence"])
    assert r.revised == row["fixed"][0]
    off = Pipeline(
        Components(load_config("default", ["judge.reader.other_sentences=false"]), progress=False),
        attribution=pipeline.attribution,
    )
    assert off.edit(row["text"], row["context"], row["evidence"]).revised == row["text"]


def test_a_right_answer_of_two_sentences_comes_back_unchanged(pipeline):
    row = next(r for r in ROWS.values() if r["error_type"] == "right")
    r = pipeline.edit(row["text"], row["context"], row["evidence"])
    assert r.revised == row["text"]
