"""Real-error dev sets: the packaged LLMs' own answers to real questions, judged against the
gold answers, split by evidence document; and the 60 statements about the embedded corpus."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from helpers import run_purr

from retrieval.corpus import read_wiki_summaries
from training.data.real_errors import BRIDGES, Question, beyond, judge, split_of
from training.eval.answers_metrics import answer_scores

STATEMENTS = Path(__file__).resolve().parents[3] / "training" / "eval" / "statements.jsonl"


def test_purr_data_real_errors_writes_judged_answers_split_by_document(dev_data, tmp_path):
    out = tmp_path / "real"
    done = run_purr(
        "data", "real-errors", "--out", str(out), "--n", "4", "--models", "smollm2",
        "--forms", "short", "--data", str(dev_data),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert (
        summary["questions"] == 16
    )  # 4 each: NQ-open (with evidence), StrategyQA, CLAPnq, bridges
    rows = [
        json.loads(x)
        for s in ("dev", "test")
        for x in (out / f"{s}.jsonl").read_text().splitlines()
    ]
    assert rows and sum(summary["rows"].values()) == len(rows)
    for r in rows:
        assert r["context"] and r["text"] and r["answers"] and r["model"] == "smollm2"
        assert r["split"] == split_of(r["evidence_title"])
        assert r["planted"] == r["wrong"] == (not judge(_question(r), r["text"]))
    corpus = [json.loads(x) for x in (out / "corpus.jsonl").read_text().splitlines()]
    assert len(corpus) == 8 and all(d["text"] for d in corpus)  # facts and passages, to index
    clapnq = [r for r in rows if r["source"] == "clapnq"]
    assert clapnq and all(r["qtype"] in ("person", "date", "place", "number") for r in clapnq)


def _question(row: dict) -> Question:
    return Question(
        row["id"], row["source"], row["context"], tuple(row["answers"]), row["evidence_title"], ""
    )


def test_answers_are_judged_by_the_gold_and_non_answers_dropped():
    q = Question("q", "nq-open", "who wrote hamlet", ("William Shakespeare",), "Hamlet", "")
    assert judge(q, "Hamlet was written by William Shakespeare.") is True
    assert judge(q, "Hamlet was written by Christopher Marlowe.") is False
    assert judge(q, "I'm not sure who wrote it.") is None
    assert judge(q, "The answer to this question is: 1.") is None
    yn = Question("y", "strategyqa", "Can a cat fly?", ("no",), "Cat", "")
    assert judge(yn, "No, cats cannot fly.") is True and judge(yn, "Yes, they can.") is False


def test_the_statement_suite_is_balanced_and_its_fixes_are_in_the_corpus():
    rows = [json.loads(x) for x in STATEMENTS.read_text().splitlines()]
    wrong = [r for r in rows if r["wrong"]]
    assert len(rows) == 60 and len(wrong) == 40
    assert set(Counter(r["error_type"] for r in wrong).values()) == {5}  # 8 slot types
    corpus = " ".join(d.text for d in read_wiki_summaries())
    for r in rows:
        assert r["answers"][0] in r["reference"] and r["answers"][0] in corpus, r["id"]
        if r["wrong"]:
            assert r["wrong_value"] in r["text"] and r["wrong_value"] not in r["reference"]
            fixed = r["text"].replace(r["wrong_value"], r["answers"][0])
            assert r["reference"] == fixed.replace("..", ".")  # "Inc." ends the sentence
        else:
            assert r["reference"] == r["text"]


def test_answer_scores_count_fixes_harm_and_untouched_right_answers():
    def row(original, revised, answers, wrong, **extra):
        return {"original": original, "revised": revised, "answers": answers, "wrong": wrong,
                "model": "m", "form": "short", "qtype": "place", "source": "s", **extra}  # fmt: skip

    rows = [
        row("It is in Rome.", "It is in Paris.", ["Paris"], True, wrong_value="Rome"),
        row("It is in Rome.", "It is in Paris, not Rome.", ["Paris"], True, wrong_value="Rome"),
        row("It is in Rome.", "It is in Milan.", ["Paris"], True),
        row("It is in Paris.", "It is in Paris.", ["Paris"], False),
        row("It is in Paris.", "It is in Lyon.", ["Paris"], False),
    ]
    s = answer_scores(rows)
    assert (s["wrong_answers"], s["right_answers"]) == (3, 2)
    assert s["fixed"] == round(1 / 3, 4) and s["edited_not_fixed"] == round(2 / 3, 4)
    assert s["right_unchanged"] == 0.5 and s["right_broken"] == 0.5
    assert s["edits"] == 4 and s["edits_correct"] == 0.25 and s["harmful_edits"] == 3
    assert s["by_qtype"]["place"]["wrong_answers"] == 3


def test_a_finding_names_the_wrong_value_only_where_it_covers_its_words():
    def row(findings):
        return {"original": "It is in Rome, near Ostia.", "revised": "It is in Rome, near Ostia.",
                "answers": ["Paris"], "wrong": True, "wrong_value": "Rome", "model": "m",
                "form": "short", "qtype": "place", "source": "s", "findings": findings}  # fmt: skip

    on_value = {"start": 9, "end": 13, "text": "Rome"}
    elsewhere = {"start": 20, "end": 25, "text": "Ostia"}
    s = answer_scores([row([on_value]), row([elsewhere]), row([])])
    assert s["unfixed_with_value"] == 3 and s["unfixed_value_named"] == 1
    assert s["wrong_named_not_fixed"] == 2  # any finding at all


def test_accepted_edits_are_counted_by_the_rule_and_the_editor_behind_them():
    slot = (
        "the evidence contradicts 'It is in Rome.': 'Rome' vs 'Paris'; causal editor revision; ok"
    )
    question = "the evidence answers the question with 'Paris', the text with 'Rome'; answer: x; ok"
    rows = [
        {"original": "It is in Rome.", "revised": "It is in Paris.", "answers": ["Paris"],
         "wrong": True, "steps": [{"reason": slot, "accepted": True}]},
        {"original": "It is in Rome.", "revised": "It is in Lyon.", "answers": ["Paris"],
         "wrong": True, "steps": [{"reason": question, "accepted": True},
                                  {"reason": slot, "accepted": False}]},
    ]  # fmt: skip
    s = answer_scores(rows)
    assert s["edits_by_rule"] == {
        "question": {"edits": 1, "right": 0},
        "slot": {"edits": 1, "right": 1},
    }
    assert s["edits_by_editor"] == {
        "answer": {"edits": 1, "right": 0},
        "causal": {"edits": 1, "right": 1},
    }


def test_the_steps_rule_editor_and_proof_fields_are_what_is_counted():
    step = {"reason": "anything; ok", "accepted": True, "rule": "nli", "editor": "substitute",
            "verified_by": "statement"}  # fmt: skip
    rows = [{"original": "It is in Rome.", "revised": "It is in Paris.", "answers": ["Paris"],
             "wrong": True, "steps": [step]}]  # fmt: skip
    s = answer_scores(rows)
    assert s["edits_by_rule"] == {"nli": {"edits": 1, "right": 1}}
    assert s["edits_by_editor"] == {"substitute": {"edits": 1, "right": 1}}
    assert s["edits_by_proof"] == {"statement": {"edits": 1, "right": 1}}


def test_clapnq_gold_answers_are_typed_spans_of_the_written_answer_the_passage_states(dev_data):
    from training.data.real_errors import clapnq_questions, contains_answer

    questions = clapnq_questions(dev_data, 10)
    assert len(questions) == 10
    for q in questions:
        assert q.answers and all(contains_answer(q.evidence_text, a) for a in q.answers)
        assert not any(contains_answer(q.question, a) for a in q.answers)
    where = next(q for q in questions if q.question == "where is mount logan located on a map")
    assert where.answers == ("Canada",)


def test_beyond_leaves_out_the_measured_questions_and_their_documents():
    qs = [
        Question("a1", "nq-open", "q1", ("x",), "Paris", ""),
        Question("a2", "nq-open", "q2", ("x",), "Rome", ""),
        Question("a3", "nq-open", "q3", ("x",), "Paris", ""),  # the measured one's document
        Question("a4", "nq-open", "q4", ("x",), "Oslo", ""),
        Question("b1", "bridges", "q5", ("x",), "Lima", ""),
        Question("b2", "bridges", "q6", ("x",), "Bern", ""),
    ]
    assert [q.id for q in beyond(qs, 1)] == ["a2", "a4", "b2"]
    assert beyond(qs, 0) == qs


def test_purr_data_real_errors_samples_more_answers_beyond_the_skipped_questions(tmp_path):
    out = tmp_path / "train"
    done = run_purr(
        "data", "real-errors", "--out", str(out), "--n", "2", "--skip", "2", "--samples", "2",
        "--models", "smollm2", "--forms", "short", "--sources", "bridges",
        "--data", str(tmp_path),  # the two-hop questions ship with purr: no data folder read
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [
        json.loads(x)
        for s in ("dev", "test")
        for x in (out / f"{s}.jsonl").read_text().splitlines()
    ]
    measured = {json.loads(x)["question"] for x in BRIDGES.read_text().splitlines()[:2]}
    assert rows and not {r["context"] for r in rows} & measured
    assert any(r["id"].endswith(("-s1", "-s2")) for r in rows)  # the sampled answers
    said = [(r["context"], r["text"]) for r in rows]
    assert len(said) == len(set(said))  # a sample repeating an answer is dropped
