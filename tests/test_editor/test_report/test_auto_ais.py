"""auto-AIS over a passage (``editor.report.auto_ais``): aggregation, context, ties, batches."""

from __future__ import annotations

import pytest
from helpers import TruncatingStub

from editor.attribution import (
    EntailmentScores,
)
from editor.report.auto_ais import auto_ais
from editor.types import Evidence


class TableScorer:
    """An ``AttributionModel`` returning P(supported) from a table (default 0.0)."""

    def __init__(self, table: dict[tuple[str, str], float] | None = None):
        self.table = table or {}
        self.calls: list[list[tuple[str, str]]] = []

    def score(self, premise, hypothesis):
        return self.score_batch([(premise, hypothesis)])[0]

    def score_batch(self, pairs):
        self.calls.append(list(pairs))
        return [
            EntailmentScores(p, 0.0, 1.0 - p) for p in (self.table.get(pair, 0.0) for pair in pairs)
        ]


PASSAGE = (
    "Hello! Marie Curie was a physicist. She won two Nobel Prizes. She was born in Warsaw. "
    "Do you want to know more?"
)

EVIDENCE = [
    "Marie Curie was a Polish and naturalised-French physicist and chemist.",
    "Curie won the Nobel Prize in Physics in 1903 and in Chemistry in 1911.",
    "Curie was born in Warsaw, Poland.",
]


S1, S2, S3 = (
    "Marie Curie was a physicist.",
    "Marie Curie won two Nobel Prizes.",
    "Marie Curie was born in Warsaw.",
)

TABLE = {
    (EVIDENCE[0], S1): 0.9,
    (EVIDENCE[1], S1): 0.2,
    (EVIDENCE[1], S2): 0.7,
    (EVIDENCE[0], S3): 0.3,
    (EVIDENCE[2], S3): 0.6,
}


def test_auto_ais_exact_aggregation():
    scorer = TableScorer(TABLE)
    result = auto_ais(PASSAGE, EVIDENCE, scorer, threshold=0.65)
    rows = [
        (s.text, s.decontextualized, s.applicable, s.attribution, s.evidence_index, s.attributable)
        for s in result.sentences
    ]
    assert rows == [
        ("Hello!", "Hello!", False, None, None, None),
        (S1, S1, True, 0.9, 0, True),
        ("She won two Nobel Prizes.", S2, True, 0.7, 1, True),
        ("She was born in Warsaw.", S3, True, 0.6, 2, False),
        ("Do you want to know more?", "Do you want to know more?", False, None, None, None),
    ]
    assert result.attribution == pytest.approx((0.9 + 0.7 + 0.6) / 3)
    assert result.attributable_share == pytest.approx(2 / 3)
    assert len(result.applicable) == 3 and result.threshold == 0.65
    # one batch call; only decontextualised applicable sentences, every evidence each
    [call] = scorer.calls
    assert len(call) == 9 and {h for _, h in call} == {S1, S2, S3}
    assert {p for p, _ in call} == set(EVIDENCE)


def test_auto_ais_sentence_list_and_evidence_objects_give_the_same_result():
    objects = [
        Evidence(f"e{i}", text, "Marie Curie", "wiki", None, "q", 0.5)
        for i, text in enumerate(EVIDENCE)
    ]
    sentences = [
        "Hello!",
        "Marie Curie was a physicist.",
        "She won two Nobel Prizes.",
        "She was born in Warsaw.",
        "Do you want to know more?",
    ]
    assert auto_ais(sentences, objects, TableScorer(TABLE)) == auto_ais(
        PASSAGE, EVIDENCE, TableScorer(TABLE)
    )


def test_auto_ais_uses_the_dialogue_context():
    scorer = TableScorer()
    context = "User: Tell me about Albert Einstein.\nAssistant: Sure."
    result = auto_ais(
        "He was born in Ulm in 1879.", ["Einstein was born in Ulm."], scorer, context=context
    )
    assert result.sentences[0].decontextualized == "Albert Einstein was born in Ulm in 1879."
    assert scorer.calls[0][0][1] == "Albert Einstein was born in Ulm in 1879."


def test_auto_ais_ties_pick_the_first_evidence():
    scorer = TableScorer({("b", S1): 0.5, ("c", S1): 0.5})
    [s] = auto_ais(S1, ["a", "b", "c"], scorer).sentences
    assert s.attribution == 0.5 and s.evidence_index == 1


def test_auto_ais_without_applicable_sentences_is_none():
    scorer = TableScorer()
    result = auto_ais("Hello! How can I help you today?", EVIDENCE, scorer)
    assert result.attribution is None and result.attributable_share is None
    assert result.sentences and not any(s.applicable for s in result.sentences)
    assert scorer.calls == []  # nothing scored
    assert auto_ais("", EVIDENCE, scorer).sentences == ()
    assert auto_ais("", EVIDENCE, scorer).attribution is None


def test_auto_ais_with_no_evidence_scores_zero():
    scorer = TableScorer(TABLE)
    result = auto_ais(PASSAGE, [], scorer)
    assert scorer.calls == []
    assert result.attribution == 0.0
    applicable = result.applicable
    assert len(applicable) == 3
    assert all(s.attribution == 0.0 and s.evidence_index is None for s in applicable)
    assert not any(s.attributable for s in applicable)


def test_auto_ais_thousand_evidence_items_in_batches():
    stub = TruncatingStub(max_length=64, batch_size=16)
    evidence = [f"Record {i} says the tower opened in 1889." for i in range(1000)]
    result = auto_ais("The Eiffel Tower opened in 1889. It is in Paris.", evidence, stub)
    assert [s.evidence_index for s in result.sentences] == [999, 999]
    assert result.attribution == pytest.approx(0.999)
    assert sum(len(b) for b in stub.batches) == 2000
    assert max(len(b) for b in stub.batches) == 16


def test_auto_ais_with_a_real_model_and_thousand_evidence_items(mnli_model):
    evidence = [f"Record {i}: the Eiffel Tower was completed in {1000 + i}." for i in range(1000)]
    claim = "The Eiffel Tower was completed in 1889."
    result = auto_ais(claim, evidence, mnli_model)
    [s] = result.sentences
    direct = [x.supported for x in mnli_model.score_batch([(e, claim) for e in evidence])]
    assert s.attribution == pytest.approx(max(direct), abs=1e-6)
    assert s.evidence_index == direct.index(max(direct))
    assert result.attribution == s.attribution


def test_auto_ais_rejects_bad_threshold():
    with pytest.raises(ValueError, match="threshold"):
        auto_ais(PASSAGE, EVIDENCE, TableScorer(), threshold=1.5)
