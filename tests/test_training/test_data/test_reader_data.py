"""The reader's rows: SQuAD-format reading, the no-answer negatives and the training windows."""

from __future__ import annotations

import gzip
import json
import random

import pytest

from training.data.reader import QARow, dropped, other_paragraph, read_squad, swapped

CONTEXT = (
    "Lindqvist Dairy was founded in 1952 in Umea. It employs 340 people. "
    "Its parent group employs 900."
)


def test_read_squad_keeps_matching_answers_and_unanswerables(tmp_path):
    data = {
        "data": [
            {
                "title": "Dairy",
                "paragraphs": [
                    {
                        "context": CONTEXT,
                        "qas": [
                            {
                                "question": "How many people does it employ?",
                                "answers": [{"text": "340", "answer_start": CONTEXT.index("340")}],
                            },
                            {
                                "question": "When was it founded?",
                                "answers": [{"text": "1952", "answer_start": 0}],
                            },
                            {
                                "question": "Who owns the group?",
                                "answers": [],
                                "is_impossible": True,
                            },
                        ],
                    }
                ],
            }
        ]
    }
    path = tmp_path / "tiny.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(data, f)
    rows = read_squad(path, "tiny")
    # the answer whose offset does not match its passage is left out
    assert [r.question for r in rows] == ["How many people does it employ?", "Who owns the group?"]
    assert rows[0].answers == (("340", CONTEXT.index("340")),) and rows[0].answerable
    assert not rows[1].answerable and rows[1].kind == "unanswerable"


def test_dropped_takes_the_answer_sentence_out():
    row = QARow("How many people?", CONTEXT, (("340", CONTEXT.index("340")),), "Dairy", "t")
    neg = dropped(row)
    assert neg is not None and not neg.answerable and neg.kind == "dropped"
    assert "340" not in neg.context and "1952" in neg.context
    # where the answer's words stand elsewhere too, it is no negative
    twice = QARow("q", CONTEXT + " It is 340 km north.", (("340", CONTEXT.index("340")),), "D", "t")
    assert dropped(twice) is None


def test_other_paragraph_never_holds_the_answer():
    row = QARow("How many people?", CONTEXT, (("340", CONTEXT.index("340")),), "Dairy", "t")
    paras = [CONTEXT, "The dairy sells 340 cheeses.", "The dairy sells milk."]
    neg = other_paragraph(row, paras, random.Random(0))
    assert neg is not None and neg.context == "The dairy sells milk." and not neg.answerable


def test_swapped_asks_about_another_name_of_the_passage_and_has_no_answer():
    ctx = "Marie Curie won the prize in 1911. Pierre Curie taught in Paris in 1900."
    row = QARow(
        "When did Marie Curie win the prize?", ctx, (("1911", ctx.index("1911")),), "C", "t"
    )
    neg = swapped(row, random.Random(0))
    assert neg is not None and neg.kind == "swapped" and not neg.answerable
    assert neg.question in ("When did Pierre Curie win the prize?", "When did Paris win the prize?")
    assert (
        swapped(QARow("When was it won?", ctx, (("1911", 29),), "C", "t"), random.Random(0)) is None
    )


def test_features_point_at_the_answer_tokens():
    pytest.importorskip("torch")
    from tokenizers import Tokenizer

    from editor.reader.extractive import default_path
    from training.fit.reader import features

    tok = Tokenizer.from_file(str(default_path().parent / "purr-span-judge" / "tokenizer.json"))
    long = " ".join(f"Filler sentence number {i} says nothing." for i in range(40))
    ctx = long + " " + CONTEXT
    rows = [
        QARow("How many people does it employ?", ctx, (("340", ctx.index("340")),), "D", "t"),
        QARow("Who owns the group?", CONTEXT, (), "D", "t", "other"),
    ]
    feats = features(tok, rows, 64, 16, random.Random(0))
    assert len(feats) == 2
    ids, segment, start, end = feats[0]
    assert 0 < segment <= start <= end < len(ids) <= 64
    assert tok.decode(ids[start : end + 1]) == "340"
    assert feats[1][2:] == (0, 0)
