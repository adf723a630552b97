"""Cited input: every marker style parsed into sentences that keep their markers, and each
citation checked against its source by the real verifier, with the sentence outcomes and
ALCE's citation precision and recall."""

from __future__ import annotations

import pytest
from helpers import citation_checker

from editor.citations import CitedDocument, parse_markers
from editor.citations.sources import Source, read_sources
from editor.config import load_config
from editor.factory import Components
from editor.inputs import InputError
from editor.pipeline import Pipeline

TOWER = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
    "It was built from 1887 to 1889 as the centrepiece of the 1889 World's Fair."
)
EVEREST = "Mount Everest is Earth's highest mountain above sea level, at 8,849 metres."
WALL = "The Great Wall of China is a series of fortifications built across northern China."
SOURCES = [Source("1", TOWER), Source("2", EVEREST), Source("3", WALL)]


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("Paris is in France [1].", [("1",)]),
        ("Paris is in France [1, 3].", [("1", "3")]),
        ("Paris is in France [1-3].", [("1", "2", "3")]),
        ("Paris is in France [1][2].", [("1",), ("2",)]),
        ("Paris is in France.[^2]", [("2",)]),
        ("Paris is in France [sic] [a].", []),  # words in brackets are text
    ],
)
def test_every_marker_style(text, ids):
    assert [m.ids for m in parse_markers(text)] == ids


def test_markers_belong_to_their_sentence_and_claims_lose_them():
    text = "The tower is in Paris [1]. It opened in 1889. [1][2] Is it tall? It is [doc-a]."
    doc = CitedDocument.parse(text, source_ids=["1", "2", "doc-a"])
    assert [s.citations for s in doc.sentences] == [("1",), ("1", "2"), (), ("doc-a",)]
    assert [s.claim for s in doc.sentences] == [
        "The tower is in Paris.",
        "It opened in 1889.",
        "Is it tall?",
        "It is.",
    ]
    # the spans cover the text with its markers: rebuilding from them loses nothing
    assert "".join(text[s.start : s.end] for s in doc.sentences).replace(" ", "") == text.replace(
        " ", ""
    )
    assert doc.unknown_markers(["1"]) == ["2", "doc-a"]


@pytest.fixture(scope="module")
def checker():
    return citation_checker()


def test_each_outcome_and_alce_scores(checker):
    text = (
        "The Eiffel Tower is in Paris [1]. "  # supported
        "It was built in 1895 [1]. "  # contradicted by its own source
        "Mount Everest is 8,849 metres high [2][3]. "  # supported; [3] is irrelevant
        "The Great Wall is in northern China [2]. "  # the wrong source
        "The Great Wall is made of fortifications. "  # a claim with no citation
        "Is that not remarkable? Hope this helps!"  # need none
    )
    result = checker.check(text, SOURCES)
    got = [(s.outcome, [v.label for v in s.verdicts]) for s in result.sentences]
    assert got == [
        ("supported", ["supports"]),
        ("citation_not_supporting", ["contradicts"]),
        ("supported", ["supports", "not_enough"]),
        ("citation_not_supporting", ["not_enough"]),
        ("needs_citation", []),
        ("needs_none", []),
        ("needs_none", []),
    ]
    contradicted = result.sentences[1].verdicts[0]
    assert "1895" in contradicted.reason and "1889" in contradicted.span
    # ALCE: 5 sentences need support, 2 are supported; of 5 citations, [1] (first), [2] are
    # precise; [3] is irrelevant, and citations of unsupported sentences are not precise
    assert result.citation_recall == pytest.approx(2 / 5)
    assert result.citation_precision == pytest.approx(2 / 5)
    assert result.to_json()["outcomes"] == {
        "supported": 2,
        "citation_not_supporting": 2,
        "needs_citation": 1,
        "needs_none": 2,
    }


def test_a_cited_sentence_is_checked_whatever_its_mood(checker):
    source = Source("2", "Doctors advise new parents to rest when the baby sleeps.")
    result = checker.check("Rest when the baby sleeps [2]. Rest when it cries [2].", [source])
    assert [s.outcome for s in result.sentences] == ["supported", "citation_not_supporting"]


def test_unknown_markers_are_reported_not_dropped(checker):
    result = checker.check("The Eiffel Tower is in Paris [1][9].", SOURCES[:1])
    assert result.unknown_markers == ("9",) and "[9]" in result.warnings[0]
    assert result.sentences[0].citations == ("1", "9")
    assert result.sentences[0].supported  # source 1 supports it on its own
    assert result.citation_precision == pytest.approx(0.5)  # [9] points at nothing


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        ("not a list", "must be a list"),
        ([{"id": "1"}], "'text' must be a non-empty string"),
        ([{"id": "1", "text": "a"}, {"id": 1, "text": "b"}], "given twice"),
        ([{"id": [1], "text": "a"}], "'id' must be a string or a number"),
        ([{"text": "x"}] * 201, "over the limit"),
    ],
)
def test_malformed_sources_are_clear_errors(sources, message):
    with pytest.raises(ValueError, match=message):
        read_sources(sources)


def test_pipeline_check_validates_and_degrades(built_index, checker):
    pipeline = Pipeline(
        Components(load_config("default"), index_path=built_index, progress=False),
        attribution=checker.judge.gate.attribution,
    )
    with pytest.raises(InputError, match="text is empty"):
        pipeline.check("  ", [TOWER])
    with pytest.raises(InputError, match="given twice"):
        pipeline.check("It is in Paris [1].", [{"id": 1, "text": "a"}, {"id": "1", "text": "b"}])
    ok = pipeline.check("The Eiffel Tower is in Paris [1].", [TOWER])  # strings: [1], [2], ...
    assert ok.status == "checked" and ok.sentences[0].outcome == "supported"

    class Broken:
        def score_batch(self, pairs):
            raise RuntimeError("the model file is damaged")

    degraded = Pipeline(pipeline.components, attribution=Broken()).check(
        "The Eiffel Tower is in Paris [1].", [TOWER]
    )
    assert degraded.status == "degraded" and "damaged" in degraded.warnings[0]
    assert degraded.sentences[0].citations == ("1",)  # the structure still comes back
