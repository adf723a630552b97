"""The judge's learned decision on the reader's proposals: the question's kind against the
answer's, and one head that applies, suggests or only doubts."""

from __future__ import annotations

import json

import pytest

from editor.claims.answer_types import expected, fit, labels_at
from editor.judge.reader_head import NAMES, ReaderHead, candidates
from editor.judge.signals import Logistic
from editor.reader.base import Answer, Reading
from editor.text.nlp import get_nlp


@pytest.mark.parametrize(
    ("question", "label", "agrees"),
    [
        ("Who produced the film?", "ORG", 1),
        ("Who produced the film?", "DATE", -1),
        ("What record label released the album?", "PERSON", 0),  # NER confuses names
        ("What record label released the album?", "DATE", -1),
        ("Which river flows through the town?", "GPE", 0),
        ("Which river flows through the town?", "LOC", 1),
        ("In what year did her career begin?", "DATE", 1),
        ("Which team does he drive for?", "PERSON", 0),
        ("How many moons does Mars have?", "PERSON", -1),
        ("How long is the warranty?", "DATE", 1),
        ("What is the warranty?", "DATE", 0),
    ],
)
def test_the_kind_a_question_asks_for_against_an_answers(question, label, agrees):
    assert fit(expected(question), frozenset({label})) == agrees


def test_an_answers_labels_are_read_where_it_stands():
    doc = get_nlp()("The album came out on Parlophone in 1963, produced by George Martin.")
    at = doc.text.index
    assert "DATE" in labels_at(doc, at("1963"), at("1963") + 4)
    assert "PERSON" in labels_at(doc, at("George"), at("Martin") + 6)
    assert labels_at(doc, at("album"), at("album") + 5) == frozenset()


def _head() -> ReaderHead:
    coef = tuple(4.0 if n == "c_mass" else -3.0 if n == "said_ev" else 0.0 for n in NAMES)
    return ReaderHead(Logistic(NAMES, coef, -2.0), 0.6, 0.8, 0.3)


def _labels(kinds: dict[str, str]):
    return lambda a: frozenset({kinds[a.text]}) if a.text in kinds else frozenset()


def test_candidates_leave_out_the_texts_own_answer_and_weigh_the_rest():
    said = Answer("4.2 kg", 16, 22, 0.9)
    mine = Reading("q", (said,), 0.0)
    theirs = Reading(
        "q", (Answer("2.8 kg", 30, 36, 0.7), Answer("4.2 kilograms", 80, 93, 0.2)), 0.05
    )
    found = candidates("The Vela X1 is 4.2 kg.", said, mine, theirs, _labels({}), None, frozenset())
    assert [c.answer.text for c in found] == ["2.8 kg"]  # 4.2 kilograms is the text's answer
    (c,) = found
    assert c.signals["said_ev"] == pytest.approx(0.2) and c.signals["c_top"] == 1.0
    assert set(c.signals) == set(NAMES)


def test_the_head_never_chooses_an_answer_of_a_kind_the_question_does_not_ask_for():
    said = Answer("Abbey Road Studios", 0, 18, 0.9)
    theirs = Reading("q", (Answer("1969", 5, 9, 0.9), Answer("EMI", 20, 23, 0.4)), 0.0)
    found = candidates(
        "Abbey Road Studios released it.",
        said,
        Reading("q", (said,), 0.0),
        theirs,
        _labels({"1969": "DATE", "EMI": "ORG"}),
        expected("Which record label released it?"),
        frozenset({"ORG"}),
    )
    chosen = _head().choose(found)
    assert chosen is not None and chosen[0].answer.text == "EMI"


def test_a_head_round_trips_and_a_broken_one_says_what_to_do(tmp_path):
    head = _head()
    path = tmp_path / "reader.json"
    path.write_text(json.dumps(head.to_json()))
    assert ReaderHead.load(tmp_path) == head
    path.write_text('{"right": {}}')
    with pytest.raises(ValueError, match="retrain"):
        ReaderHead.load(path)
    with pytest.raises(FileNotFoundError, match="purr train reader-head"):
        ReaderHead.load(tmp_path / "none.json")


def test_the_shipped_head_is_calibrated_and_ordered():
    head = ReaderHead.load()
    assert head.suggest_min <= head.apply_min <= head.prove_min <= 1.0
    assert set(head.right.names) == set(NAMES)


def test_the_rules_decision_proposes_no_answer_of_a_kind_the_question_does_not_ask_for():
    from editor.config.revision import ReaderPolicy
    from editor.judge.agreement.base import said
    from editor.judge.agreement.reader import ReaderAgreement
    from editor.types import Evidence

    doc = "Blue Meridian was released in 1998 by Harbour Films, and Ana Ruiz produced it."
    claim = "Blue Meridian was produced by Tom Hale."

    class Table:
        def __init__(self, best: str) -> None:
            self.best = best

        def read_batch(self, items):
            def one(text: str, answer: str) -> Reading:
                at = text.index(answer)
                return Reading("q", (Answer(answer, at, at + len(answer), 0.9),), 0.01)

            return [one(t, "Tom Hale" if t == claim else self.best) for _, t in items]

    class Silent:
        def check_batch(self, items, context=None):
            return [said("irrelevant", "not stated", (0, len(t))) for t, _, _ in items]

    item = [(claim, claim, Evidence("e1", doc, "", "given", None, "", 1.0))]
    question = "Who produced Blue Meridian?"
    for best, opens in (("1998", False), ("Ana Ruiz", True)):
        gate = ReaderAgreement(Silent(), Table(best), ReaderPolicy(decision="rules"))
        assert gate.check_batch(item, question)[0].opens is opens, best


def test_the_verifier_reads_the_sentence_before_and_with_each_candidate():
    from editor.attribution import build
    from editor.config import AttributionConfig
    from editor.judge.reader_head import VERIFIED, verified

    text = "It ships in a box. The Vela X1 weighs 4.2 kg."
    evidence = "The Vela X1 weighs 2.8 kg; its charging case weighs 900 g."
    said = Answer("4.2 kg", text.index("4.2"), text.index("4.2") + 6, 0.9)
    theirs = Reading("q", (Answer("2.8 kg", 19, 25, 0.8), Answer("900 g", 52, 57, 0.1)), 0.0)
    found = candidates(
        text, said, Reading("q", (said,), 0.0), theirs, _labels({}), None, frozenset()
    )
    verified(build(AttributionConfig()).score_batch, text, said, evidence, found)
    right, other = found
    assert set(VERIFIED) <= set(right.signals)
    assert right.signals["v_after"] > right.signals["v_before"] + 0.3  # the fix is supported
    assert right.signals["v_after"] > other.signals["v_after"]  # 900 g is the case's weight
    assert right.signals["v_gain"] == pytest.approx(
        right.signals["v_after"] - right.signals["v_before"]
    )
