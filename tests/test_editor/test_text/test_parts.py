"""Claim decomposition by the parse (``editor.text.parts``) and its use in the report and
``purr check``: a sentence is supported only when every part is, and the failing part is named."""

from __future__ import annotations

import pytest

from editor.attribution import build
from editor.citations.check import CitationChecker
from editor.citations.sources import Source
from editor.config import AttributionConfig
from editor.report.auto_ais import auto_ais
from editor.text.nlp import get_nlp
from editor.text.parts import sentence_parts
from editor.types import EntailmentScores

CURIE = (
    "Marie Curie, a Polish physicist, won the Nobel Prize in Physics in 1903 and later won a "
    "second Nobel Prize, in Chemistry, in 1911."
)


def parts(sentence: str) -> list[tuple[str, str]]:
    return [(p.kind, p.text) for p in sentence_parts(get_nlp()(sentence))]


def test_conjuncts_appositions_and_relatives_become_standalone_parts():
    assert parts(CURIE) == [
        ("main", "Marie Curie won the Nobel Prize in Physics in 1903."),
        ("apposition", "Marie Curie was a Polish physicist."),
        ("conjunct", "Marie Curie later won a second Nobel Prize, in Chemistry, in 1911."),
    ]
    assert parts("The band released its debut album in 1973 and toured Europe the next year.")[
        1
    ] == ("conjunct", "The band toured Europe the next year.")
    # a pronoun subject of the second clause is the first clause's subject
    assert parts(
        "Barack Obama, who served as the 44th president, was born in Honolulu, and he studied "
        "law at Harvard."
    ) == [
        ("main", "Barack Obama was born in Honolulu."),
        ("relative", "Barack Obama served as the 44th president."),
        ("conjunct", "Barack Obama studied law at Harvard."),
    ]


@pytest.mark.parametrize(
    "sentence",
    [
        "It was directed by Steven Spielberg.",
        # a restrictive relative says which film: it stays
        "The film that won Best Picture was directed by Robert Zemeckis.",
        # conjoined nouns are one fact about two things, not two clauses
        "Paris is the capital and most populous city of France.",
    ],
)
def test_single_fact_sentences_are_left_whole(sentence):
    assert parts(sentence) == [("main", sentence)]


def test_part_spans_point_at_the_words_they_assert():
    for p in sentence_parts(get_nlp()(CURIE)):
        assert 0 <= p.start < p.end <= len(CURIE)
        if p.kind != "main":
            assert CURIE[p.start : p.end] in {
                "a Polish physicist",
                "later won a second Nobel Prize, in Chemistry, in 1911",
            }


class WordOverlap:
    """P(supported) = the share of the claim's words the premise holds (a stand-in whose
    answers are easy to reason about; the shipped verifier is tested below)."""

    def score_batch(self, pairs):
        out = []
        for premise, claim in pairs:
            words = [w.strip(".,").lower() for w in claim.split()]
            s = sum(w in premise.lower() for w in words) / len(words)
            out.append(EntailmentScores(s, 0.0, 1.0 - s))
        return out

    def score(self, premise, hypothesis):
        return self.score_batch([(premise, hypothesis)])[0]


def test_report_sentence_is_as_strong_as_its_weakest_part_and_names_it():
    text = "The Eiffel Tower, which was completed in 1889, was designed by Gustave Eiffel."
    evidence = [
        "The Eiffel Tower was designed by the engineering firm of Gustave Eiffel.",
        "Construction of the tower was completed in 1889.",
    ]
    whole = auto_ais(text, evidence, WordOverlap(), threshold=0.9)
    split = auto_ais(text, evidence, WordOverlap(), threshold=0.9, decompose=True)
    assert whole.sentences[0].parts == ()
    s = split.sentences[0]
    assert [p.kind for p in s.parts] == ["main", "relative"]
    main, relative = s.parts
    assert main.evidence_index == 0 and main.verdict == "supported"
    # "The Eiffel Tower was completed in 1889." against the second evidence: "Eiffel" missing
    assert relative.evidence_index == 1 and relative.verdict == "unverified"
    assert s.attribution == relative.attribution < 0.9
    assert s.verdict == "unverified" and s.evidence_index == 1


def test_check_names_the_part_its_source_does_not_support():
    checker = CitationChecker.with_verifier(build(AttributionConfig()), decompose=True)
    text = (
        "Marie Curie, a Polish physicist, won the Nobel Prize in Physics in 1903 and was born "
        "in Paris [1]."
    )
    source = Source(
        "1",
        "Marie Curie was a Polish physicist. Marie Curie won the Nobel Prize in Physics in "
        "1903. Marie Curie was born in Warsaw.",
    )
    (sentence,) = checker.check(text, [source]).sentences
    assert not sentence.supported
    (verdict,) = sentence.verdicts
    assert verdict.label != "supports"
    assert "the part that fails: 'Marie Curie was born in Paris.'" in verdict.reason
