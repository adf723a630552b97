"""Cited text through ``purr edit``: markers never edited (taken out, put back after their
words), and with ``sources`` each fault repaired against the text's own sources by the real
verifier and editor, while a correct, well-cited sentence comes back byte for byte."""

from __future__ import annotations

import json

import pytest

from editor.citations.markers import format_marker, protect, restore
from editor.config import load_config
from editor.factory import Components
from editor.inputs import InputError
from editor.pipeline import Pipeline
from editor.result import EditResult

TOWER = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
    "It was constructed from 1887 to 1889 as the centerpiece of the 1889 World's Fair."
)
HEIGHT = "The tower is 330 metres tall, about the same height as an 81-storey building."
NAME = "It was named after the engineer Gustave Eiffel, whose company designed and built it."
EVEREST = "Mount Everest is Earth's highest mountain above sea level, at 8,849 metres."
SOURCES = [
    {"id": "1", "title": "Eiffel Tower", "text": TOWER},
    {"id": "2", "title": "Eiffel Tower", "text": HEIGHT},
    {"id": "3", "title": "Eiffel Tower", "text": NAME},
    {"id": "4", "title": "Mount Everest", "text": EVEREST},
]


@pytest.mark.parametrize(
    ("text", "edited", "expected"),
    [  # the three ways markers were lost or garbled before they were kept out of the edit
        (
            "It has clean lines and minimal ornamentation [3].",
            "It has clean lines and little ornamentation.",
            "It has clean lines and little ornamentation [3].",
        ),
        (
            "Selective breeding led to the evolution of the chicken [6].",
            "Selective breeding led to the domestic chicken.",
            "Selective breeding led to the domestic chicken [6].",
        ),
        (
            "It enforces consumer protection in the banking industry [3]. It was set up in 2011 [4].",
            "It enforces consumer protection in banking. It was set up in 2010.",
            "It enforces consumer protection in banking [3]. It was set up in 2010 [4].",
        ),
        ("A [1][2]. B.[^3] C [1, 2].", "A. B. C.", "A [1][2]. B.[^3] C [1, 2]."),
    ],
)
def test_markers_go_back_after_the_words_they_followed(text, edited, expected):
    p = protect(text)
    assert "[" not in p.clean
    assert restore(p, edited) == expected
    assert restore(p, p.clean) == text  # unchanged: byte for byte


def test_markers_an_editor_invents_are_not_kept():
    p = protect("It opened in 1887 [1].")
    out = restore(p, "It opened in 1889 [2].")
    assert out == "It opened in 1889 [1]." and "[2]" not in out
    assert format_marker(["1", "4"], "comma") == "[1, 4]"


@pytest.fixture(scope="module")
def pipeline(built_index):
    pipe = Pipeline(Components(load_config("default"), index_path=built_index, progress=False))
    pipe.prepare(research=False)
    return pipe


def test_edit_of_cited_text_never_touches_a_marker(pipeline):
    text = "The Eiffel Tower was built from 1887 to 1895 [^1]. It stands in Paris [^1]."
    result = pipeline.edit(text, evidence=[TOWER])
    assert result.original == text
    assert result.revised.count("[^1]") == 2
    assert result.revised.endswith("It stands in Paris [^1].")
    if result.status == "edited":
        assert "1889 [^1]." in result.revised


def test_repair_fixes_each_fault_and_leaves_the_rest_byte_for_byte(pipeline):
    text = (
        "The Eiffel Tower stands on the Champ de Mars in Paris [1].  "  # correct (two spaces)
        "It is 300 metres tall [2]. "  # contradicted by its own source
        "It was named after the engineer Gustave Eiffel [4]. "  # wrong source
        "It was the centerpiece of the 1889 World's Fair. "  # missing citation
        "Do you want to know more?"  # needs none
    )
    result = pipeline.edit(text, sources=SOURCES)
    assert result.status == "edited"
    assert result.revised == (
        "The Eiffel Tower stands on the Champ de Mars in Paris [1].  "
        "It is 330 metres tall [2]. "
        "It was named after the engineer Gustave Eiffel [3]. "
        "It was the centerpiece of the 1889 World's Fair [1]. "
        "Do you want to know more?"
    )
    changes = {c.sentence: c for c in result.citations.changes}
    assert {i: c.action for i, c in changes.items()} == {1: "revised", 2: "replaced", 3: "added"}
    assert changes[2].before == ("4",) and changes[2].after == ("3",)
    assert "source 3 supports it" in changes[2].reason
    assert result.citations.citation_recall_after > result.citations.citation_recall_before
    # the result contract carries the citations record and reads back from JSON
    data = json.loads(json.dumps(result.to_json()))
    assert data["citations"]["changes"][0]["action"] == "revised"
    assert EditResult.from_json(data).citations == result.citations


def test_repair_keeps_the_text_style_and_changes_nothing_that_is_well_cited(pipeline):
    text = "The tower is 330 metres tall.[^2] It was named after Gustave Eiffel. Thanks!"
    result = pipeline.edit(text, sources=SOURCES)
    assert result.revised == (
        "The tower is 330 metres tall.[^2] It was named after Gustave Eiffel. [^3] Thanks!"
    )
    well = "The Eiffel Tower is in Paris, France [1]. It is 330 metres tall [2]."
    same = pipeline.edit(well, sources=SOURCES)
    assert same.revised == well and same.status == "unchanged"
    assert same.citations.changes == ()


def test_a_citation_with_nothing_to_support_it_is_removed_or_left_unconfirmed(pipeline):
    from editor.citations.check import CitationChecker
    from editor.citations.repair import CitationRepairer
    from editor.citations.sources import read_sources

    text = "The Eiffel Tower is in Paris [1]. Its lifts were made by Otis [4]."
    sources = read_sources(SOURCES)
    checker = CitationChecker(pipeline.editor.judge)
    # by default the doubt is reported and nothing is touched
    kept = pipeline.edit(text, sources=SOURCES)
    [change] = kept.citations.changes
    assert kept.revised == text and change.action == "unconfirmed" and change.after == ("4",)
    assert "do not confirm it" in change.reason
    # under a removal threshold above the source's P(supported), the citation goes, said why
    removed = CitationRepairer(checker, remove_below=0.5).repair(text, sources)
    [change] = removed.changes
    assert removed.revised == "The Eiffel Tower is in Paris [1]. Its lifts were made by Otis."
    assert change.action == "removed" and change.after == ()
    assert "source 4 does not mention it" in change.reason


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        ([], "sources is empty"),
        ([{"id": 1}], "'text' must be a non-empty string"),
        ("not a list", "must be a list"),
    ],
)
def test_bad_sources_are_clear_errors(pipeline, sources, message):
    with pytest.raises(InputError, match=message):
        pipeline.edit("The tower is in Paris [1].", sources=sources)


def test_evidence_and_sources_together_are_refused(pipeline):
    with pytest.raises(InputError, match="either evidence or sources"):
        pipeline.edit("The tower is in Paris [1].", evidence=[TOWER], sources=SOURCES)


def test_claims_the_sources_cannot_settle_are_researched_and_cited_as_new_sources(built_index):
    cfg = load_config("default", ["citations.research=true"])
    pipe = Pipeline(Components(cfg, index_path=built_index, progress=False))
    text = (
        "Mount Everest is 8,849 metres high [4]. "
        "Neil Armstrong and Buzz Aldrin landed on the Moon with Apollo 11 [4]."
    )
    result = pipe.edit(text, sources=[SOURCES[3]])  # id 4
    assert result.revised.startswith("Mount Everest is 8,849 metres high [4]. ")
    change = result.citations.changes[0]
    assert change.sentence == 1 and change.action == "replaced"
    assert change.before == ("4",) and change.after == ("5",)  # after the given id 4
    assert "research found it" in change.reason
    added = result.citations.added_sources
    assert [a.id for a in added] == ["5"] and "Apollo 11" in added[0].text
    assert result.revised.endswith("with Apollo 11 [5].")
    assert any(e.id == "5" and e.source == "research" for e in result.evidence)


def test_no_marker_lands_inside_a_name_split_at_an_exclamation_mark(pipeline):
    # "Impulse! Records": a sentence split mid-line at '!' or '?' before a cited sentence may be
    # one sentence cut inside a name, so it gets no marker of its own (the check still flags it)
    text = "It was the centerpiece of the 1889 World's Fair! It is 330 metres tall [2]."
    result = pipeline.edit(text, sources=SOURCES)
    assert result.revised == text
    change = next(c for c in result.citations.changes if c.sentence == 0)
    assert change.action == "uncited" and "no marker added inside it" in change.reason
    assert "source 1 supports it" in change.reason
    # on a line of its own the same sentence is cited
    lines = "It was the centerpiece of the 1889 World's Fair!\nIt is 330 metres tall [2]."
    cited = pipeline.edit(lines, sources=SOURCES)
    assert "[1]" in cited.revised.splitlines()[0]
    assert cited.revised.splitlines()[1] == "It is 330 metres tall [2]."
