"""The cited-answer evaluations with the real verifier: the worked nugget example scored as by
hand, MAFE's questions and answers, the fault dev set's check and repair figures, and the
factuality agreement measures, each through its command with metrics.json and a plot."""

from __future__ import annotations

import json
import random

import pytest
from conftest import RESOURCES
from helpers import citation_checker, run_purr

from editor.citations.mafe import mafe, token_f1
from editor.config import load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from training.eval.attribution import load_dev_sets
from training.eval.citations import run_evidence
from training.eval.factuality import best_threshold, pearson, roc_auc
from training.eval.factuality import run as run_factuality
from training.eval.nuggets import claims_absence, normalise, score_row, summarise
from training.eval.nuggets import run as run_nuggets

EXAMPLE = RESOURCES / "nuggets_example.jsonl"


@pytest.fixture(scope="module")
def checker():
    return citation_checker()


def test_worked_example_scores_as_by_hand(checker):
    row = json.loads(EXAMPLE.read_text().splitlines()[0])
    result = score_row(checker, row)
    # every outcome of the flowchart, each sentence as scored by hand
    assert [s["outcome"] for s in result["sentences"]] == row["hand"]["outcomes"]
    assert sorted({s["outcome"] for s in result["sentences"]}) == list(range(1, 9))
    assert result["sentence_precision"] == pytest.approx(4 / 7)
    assert result["nugget_recall"] == pytest.approx(5 / 6)
    visitors = result["nuggets"][5]
    assert not visitors["answered"] and not visitors["supported"]
    # the Chrysler Building nugget is reported by several sentences and counts once
    assert len(result["nuggets"][2]["sentences"]) > 1
    assert summarise([result])["all"]["nugget_recall"] == pytest.approx(5 / 6, abs=1e-4)


def test_a_contradicted_nugget_is_told_apart_from_a_missing_one(checker):
    row = {
        "id": "x",
        "text": "The Eiffel Tower was completed in 1887 [1].",
        "sources": [{"id": "1", "text": "The Eiffel Tower was completed in 1889."}],
        "nuggets": [
            {"question": "When was the Eiffel Tower completed?", "answers": ["1889"]},
            {"question": "How tall is it?", "answers": ["330 metres"]},
        ],
    }
    result = score_row(checker, row)
    assert [n["contradicted"] for n in result["nuggets"]] == [True, False]
    assert result["sentences"][0]["outcome"] == 1  # its citation does not support it


def test_answer_normalisation_and_absence():
    assert normalise("The  Chrysler Building!") == "chrysler building"
    assert claims_absence("No information is given about its cost.")
    assert not claims_absence("It cost 7.8 million francs.")


def test_mafe_asks_from_one_text_and_answers_from_the_other():
    m = mafe(
        "The Eiffel Tower was completed in March 1889 and is 300 metres tall.",
        ["The Eiffel Tower was finished on 31 March 1889.", "It is 330 metres tall."],
        reference="The tower opened in 1889 and stands 330 metres tall.",
    )
    answers = {q.expected: (q.answer, q.score) for q in m.precision_questions}
    assert answers["March 1889"] == ("31 March 1889", 1.0)  # the same date, more precise
    assert answers["300 metres"] == ("330 metres", 0.0)  # a number's value decides
    assert m.precision == pytest.approx(2 / 3)
    assert m.recall is not None and m.recall < 1 and 0 < m.f1 < 1
    assert token_f1("the Chrysler Building", "Chrysler Building") == 1.0


def test_agreement_measures():
    assert roc_auc([0.9, 0.8, 0.3, 0.1], [1, 0, 1, 0]) == 0.75
    assert roc_auc([0.5, 0.5], [1, 1]) is None
    assert pearson([1.0, 0.0, 1.0], [1.0, 0.0, 1.0]) == pytest.approx(1.0)
    assert best_threshold([0.9, 0.2, 0.8, 0.1], [1, 0, 1, 0]) == (0.8, 1.0)


def _cited_rows() -> list[dict]:
    """Three cited answers with known faults, built here (no shared data needed)."""
    tower = {
        "id": "1",
        "title": "Eiffel Tower",
        "text": "The Eiffel Tower in Paris was completed in 1889. It is 330 metres tall.",
    }
    wall = {
        "id": "2",
        "title": "Great Wall",
        "text": "The Great Wall of China is a series of "
        "fortifications built across northern China.",
    }
    good = "The Eiffel Tower was completed in 1889 [1]. It is 330 metres tall [1]."
    faults = [  # id, text, fault, the faulty sentence, the truth of each sentence
        ("ok", good, "correct", None, ["supported"] * 2),
        ("wrong", good.replace("tall [1]", "tall [2]"), "wrong_source", 1,
         ["supported", "citation_not_supporting"]),
        ("missing", good.replace(" [1].", ".", 1), "missing_citation", 0,
         ["needs_citation", "supported"]),
    ]  # fmt: skip
    return [
        {
            "id": row_id,
            "dataset": "t",
            "text": text,
            "sources": [tower, wall],
            "fault": fault,
            "fault_sentence": sentence,
            "truth": truth,
            "gold_text": good,
            "gold_source": "1",
        }
        for row_id, text, fault, sentence, truth in faults
    ]


def test_eval_citations_and_nuggets_commands(tmp_path, checker):
    data = tmp_path / "cited.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _cited_rows()))
    out = tmp_path / "citations"
    r = run_purr("eval", "citations", str(data), "--out", str(out))
    assert r.returncode == 0, r.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["t:correct"]["unchanged"] == 1.0
    assert metrics["t:wrong_source"]["detect_recall"] == 1.0
    assert metrics["t:wrong_source"]["repaired"] == 1.0
    assert metrics["t:missing_citation"]["repaired"] == 1.0
    assert (out / "citations.png").stat().st_size > 10_000
    assert len((out / "results.jsonl").read_text().splitlines()) == 3

    # the same rows through plain `purr edit --evidence`: markers are never lost
    pipeline = Pipeline(
        Components(load_config("default"), progress=False),
        attribution=checker.judge.gate.attribution,
    )
    ev = run_evidence(pipeline, _cited_rows()[:1], tmp_path / "evidence")
    assert ev["t:correct"]["markers_kept"] == 1.0

    nug = tmp_path / "nuggets"
    rows = [json.loads(x) for x in EXAMPLE.read_text().splitlines()]
    m = run_nuggets(checker, rows, nug, progress=False)["all"]
    assert m["nugget_recall"] == pytest.approx(5 / 6, abs=1e-4)
    assert m["sentence_precision"] == pytest.approx(4 / 7, abs=1e-4)
    assert (nug / "nuggets.png").stat().st_size > 10_000
    assert run_nuggets(checker, rows, nug, progress=False) == json.loads(
        (nug / "metrics.json").read_text()
    )  # run again: every row is already there, nothing redone

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "text": "x"}\n')
    r = run_purr("eval", "nuggets", str(bad), "--out", str(tmp_path / "b"))
    assert r.returncode != 0 and "missing ['nuggets']" in r.stderr


def test_cited_dev_set_is_built_with_each_fault(dev_data, tmp_path):
    out = tmp_path / "dev.jsonl"
    r = run_purr(
        "data", "cited", "--out", str(out), "--n", "8", "--wice", "4", "--data", str(dev_data)
    )
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert {r["fault"] for r in rows} >= {
        "correct",
        "wrong_source",
        "missing_citation",
        "contradicted",
        "unsupported",
    }
    for row in rows:
        assert len(row["truth"]) >= 1 and row["sources"]
        if row["fault"] == "missing_citation":
            assert row["truth"][row["fault_sentence"]] == "needs_citation"
    random.Random(0).shuffle(rows)  # the rows stand alone: any order, any subset


def test_factuality_agreement_on_a_tiny_labelled_set(tmp_path, checker):
    data = tmp_path / "data"
    (data / "nli-extra").mkdir(parents=True)
    rows = []
    for i in range(6):
        year = 1889 if i % 2 == 0 else 1887
        rows.append(
            {
                "id": f"q{i}",
                "source": "qags",
                "premise": f"Report {i}. The Eiffel Tower in Paris was completed in 1889.",
                "hypothesis": f"The Eiffel Tower was completed in {year}.",
                "label": "supported" if year == 1889 else "not_supported",
            }
        )
    (data / "nli-extra" / "qags.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "fact"
    sets = load_dev_sets(data, ["qags"])
    from editor.reader import shared_reader

    reader = shared_reader()
    forms = ("mafe_reader", "mafe_cloze")
    m = run_factuality(checker.judge.gate.attribution, sets, out, reader=reader, forms=forms)[
        "qags"
    ]
    assert m["rows"] == 6 and m["mafe"]["roc_auc"] == 1.0
    assert m["mafe_reader"]["roc_auc"] == 1.0, m  # the reader answers 1889 from the report
    assert set(m) >= {"mafe_cloze", "verifier"}
    assert (out / "factuality.png").is_file()
    assert (out / "results.jsonl").read_text().count("\n") == 6
    r = run_purr(
        "eval",
        "factuality",
        "--sets",
        "qags",
        "--data",
        str(tmp_path / "nowhere"),
        "--out",
        str(out),
    )
    assert r.returncode == 2 and "does not exist" in r.stderr
