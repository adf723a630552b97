"""Span rows from real LLM answers: the wrong value tagged and pointed at the gold answer, the
question kept as context, right answers supported only where the window states them."""

from __future__ import annotations

import json
from collections import Counter

from editor.text.nlp import get_nlp
from training.data.spans.llm_answers import main, span_rows
from training.data.spans.rows import read_rows

EVIDENCE = (
    "The Old Man and the Sea is a novella by the American author Ernest Hemingway. "
    "Hemingway wrote it in Cuba in 1951, and it was published in 1952."
)


def _row(text: str, wrong: bool, question: str = "who wrote the old man and the sea", **kw):
    return {
        "id": kw.get("id", "q1-smollm2-short"),
        "source": kw.get("source", "nq-open"),
        "text": text,
        "context": question,
        "answers": kw.get("answers", ["Ernest Hemingway"]),
        "wrong": wrong,
        "evidence_title": "The Old Man and the Sea",
        "evidence_text": EVIDENCE,
    }


def test_a_wrong_answer_has_its_value_contradicted_and_pointed_at_the_gold_answer():
    tally: Counter = Counter()
    text = "The Old Man and the Sea was written by Mark Twain, and Mark Twain lived in Cuba."
    rows = list(span_rows([_row(text, True)], get_nlp(), tally))
    wrong = rows[0]
    assert (wrong.family, wrong.label, wrong.question) == (
        "llm-wrong",
        "contradicted",
        "who wrote the old man and the sea",
    )
    assert [text[s.start : s.end] for s in wrong.spans] == ["Mark Twain", "Mark Twain"]
    assert {wrong.evidence[s.fix_start : s.fix_end] for s in wrong.spans} == {"Ernest Hemingway"}
    assert tally["llm-wrong"] == 1


def test_the_fixed_answer_is_supported_only_where_the_window_states_it():
    nlp, tally = get_nlp(), Counter()
    stated = list(span_rows([_row("The novella is by Mark Twain.", True)], nlp, tally))
    assert [r.family for r in stated] == ["llm-wrong", "llm-fixed"]
    assert stated[1].claim == "The novella is by Ernest Hemingway." and not stated[1].spans
    unstated = list(span_rows([_row("It was written by Mark Twain in Paris.", True)], nlp, tally))
    assert [r.family for r in unstated] == ["llm-wrong"]


def test_right_answers_are_supported_or_not_stated_and_the_rest_skipped():
    nlp, tally = get_nlp(), Counter()
    rows = [
        _row("The novella is by Ernest Hemingway.", False),
        _row("Ernest Hemingway wrote it on a boat in Key West.", False),
        _row("It is about fishing.", True, "why is the old man and the sea famous"),
        _row("Yes, it is a novella.", True, source="strategyqa"),
        _row("It was written by Mark Twain.", True, answers=["Jack London"]),  # not stated
    ]
    out = list(span_rows(rows, nlp, tally))
    assert [(r.family, r.label) for r in out] == [
        ("llm-right", "supported"),
        ("llm-unstated", "not_supported"),
    ]
    assert all(not r.spans for r in out)
    assert sum(tally.values()) == len(rows)


def test_the_command_splits_train_and_dev_by_evidence_document(tmp_path):
    answers = tmp_path / "answers.jsonl"
    rows = [_row("The novella is by Mark Twain.", True, id=f"q{i}") for i in range(3)]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main([str(answers), "--out", str(tmp_path / "rows")]) == 0
    train = list(read_rows(tmp_path / "rows" / "train.jsonl"))
    dev = list(read_rows(tmp_path / "rows" / "dev.jsonl"))
    assert len(train) + len(dev) == 6 and not (train and dev)  # one document: one side
