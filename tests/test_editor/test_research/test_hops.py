"""Multi-hop research: a question naming its subject by a description is researched in hops,
on a real index (ONNX encoder, FAISS, bm25s) built from four articles."""

from __future__ import annotations

import json

import pytest

from editor.research.hops import MultiHop

CORPUS = [
    ("academy-67", "67th Academy Awards",
     "The 67th Academy Awards ceremony was held on March 27, 1995, and honored the best films "
     "of 1994. Forrest Gump won Best Picture and five other awards. The ceremony was hosted by "
     "David Letterman at the Shrine Auditorium in Los Angeles."),
    ("forrest-gump", "Forrest Gump",
     "Forrest Gump is a 1994 American comedy-drama film directed by Robert Zemeckis and written "
     "by Eric Roth. It stars Tom Hanks as a slow-witted but kind-hearted man from Alabama."),
    ("jurassic-park", "Jurassic Park (film)",
     "Jurassic Park is a 1993 American science fiction action film directed by Steven "
     "Spielberg. It was the highest-grossing film of its year."),
    ("schindler", "Schindler's List",
     "Schindler's List is a 1993 American historical drama film directed by Steven Spielberg. "
     "It won Best Picture at the 66th Academy Awards."),
]  # fmt: skip
QUESTION = "Who directed the film that won Best Picture at the 67th Academy Awards?"


@pytest.fixture(scope="module")
def hops():
    from editor.claims.places import load

    return MultiHop(place_level=load().level)


@pytest.mark.parametrize(
    "question, description",
    [
        (QUESTION, "the film that won Best Picture at the 67th Academy Awards"),
        (
            "What is the capital of the country where the Eiffel Tower stands?",
            "the country where the Eiffel Tower stands",
        ),
        (
            "In what year was the company founded by Steve Jobs and Steve Wozniak incorporated?",
            "the company founded by Steve Jobs and Steve Wozniak",
        ),
        ("who were the two mathematicians that invented calculus", None),  # asks for them
        ("what was one reason south carolina gave for its decision to secede", None),
        ("When was the Eiffel Tower built?", None),
        (
            "where is the orinoco river located on a map",
            None,
        ),  # named, and the clause names nothing
    ],
)
def test_the_description_a_question_names_its_subject_by(hops, question, description):
    b = hops.bridge(question)
    assert (b.description if b else None) == description


def test_the_bridge_entity_is_a_name_of_the_descriptions_kind(hops):
    from editor.types import Evidence

    b = hops.bridge("What is the capital of the country where the Eiffel Tower stands?")
    tower = "The Eiffel Tower is a lattice tower on the Champ de Mars in Paris, France."
    ev = Evidence("e", tower, "Eiffel Tower", "wiki", None, b.description, 1.0)
    assert hops.entity(b, [ev]) == "France"  # not the Champ de Mars, not the city
    b = hops.bridge(QUESTION)
    ev = Evidence("a", CORPUS[0][2], CORPUS[0][1], "wiki", None, b.description, 1.0)
    assert hops.entity(b, [ev]) == "Forrest Gump"


@pytest.fixture(scope="module")
def film_index(tmp_path_factory):
    from editor.config import PipelineConfig
    from retrieval.corpus import read_corpus
    from retrieval.index import Index

    folder = tmp_path_factory.mktemp("films")
    corpus = folder / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in CORPUS)
    )
    cfg = PipelineConfig()
    out = folder / "index"
    Index.build(
        read_corpus([corpus]), out, cfg.index, extra_config=cfg.model_dump(mode="json"),
        progress=False,
    ).close()  # fmt: skip
    return out


def test_an_edit_researches_in_hops_and_fixes_the_answer_the_bridge_page_lacks(film_index):
    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline
    from editor.result import EditResult

    cfg = load_config("default")
    result = Pipeline(Components(cfg, index_path=film_index, progress=False)).edit(
        "It was directed by Steven Spielberg.", context=QUESTION
    )
    assert [(h.number, h.query, h.found) for h in result.hops] == [
        (1, "the film that won Best Picture at the 67th Academy Awards", "Forrest Gump"),
        (2, "Who directed Forrest Gump?", "Forrest Gump"),
    ]
    assert result.queries[:2] == ("Who directed Forrest Gump?", result.hops[0].query)
    assert result.revised == "It was directed by Robert Zemeckis."
    assert EditResult.from_json(result.to_json()).hops == result.hops  # they survive JSON
    # Schindler's List (66th awards, Spielberg) disagrees later: the first evidence's edit stands
    assert any("undoes" in s.reason for s in result.steps)
    one_hop = cfg.model_copy(
        update={"research": cfg.research.model_copy(update={"multi_hop": False})}
    )
    flat = Pipeline(Components(one_hop, index_path=film_index, progress=False)).edit(
        "It was directed by Steven Spielberg.", context=QUESTION
    )
    assert flat.hops == () and flat.revised == flat.original


def test_a_comparison_question_is_researched_for_both_sides(tiny_index, hops):
    from editor.research.querygen.simple import SentenceQueryGenerator
    from editor.research.researcher import Researcher
    from retrieval.config import RerankConfig
    from retrieval.rerank import build_reranker

    researcher = Researcher(
        tiny_index, SentenceQueryGenerator(), build_reranker(RerankConfig()), hops=hops
    )
    question = "Which is taller, the Eiffel Tower or Mount Everest?"
    results = researcher.research("The Eiffel Tower is taller.", question)
    sides = [qe for qe in results if qe.query.generator == "comparison"]
    assert [qe.query.text for qe in sides] == ["the Eiffel Tower taller", "Mount Everest taller"]
    assert [qe.evidence[0].title for qe in sides] == ["Eiffel Tower", "Mount Everest"]
