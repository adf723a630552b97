"""The research stage end to end on the tiny index: real spaCy, real ONNX models, real FAISS."""

import pytest

from editor.config import ResearchConfig
from editor.research.querygen.simple import EntityQueryGenerator, SentenceQueryGenerator
from editor.research.researcher import Researcher, unique_evidence
from editor.types import Query
from retrieval.config import RerankConfig, SearchConfig
from retrieval.rerank import build_reranker

PASSAGE = (
    "Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Chemistry in 1921. "
    "The Eiffel Tower is 330 metres tall."
)


@pytest.fixture(scope="module")
def reranker():
    return build_reranker(RerankConfig())


def test_sentence_queries_find_evidence_from_the_right_articles(tiny_index, reranker):
    researcher = Researcher(tiny_index, SentenceQueryGenerator(), reranker)
    results = researcher.research(PASSAGE)
    assert [qe.query.text for qe in results][
        1
    ] == "Marie Curie won the Nobel Prize in Chemistry in 1921."
    titles = [qe.evidence[0].title for qe in results]
    assert titles == ["Marie Curie", "Marie Curie", "Eiffel Tower"]
    # The evidence for the planted error holds the correct year.
    assert "1911" in results[1].evidence[0].text
    for qe in results:
        assert len(qe.evidence) == 1  # J = 1
        assert 0.0 <= qe.evidence[0].relevance <= 1.0
        assert qe.evidence[0].query == qe.query.text
    run = researcher.run([PASSAGE, PASSAGE])  # timings come with the result, summed over texts
    assert run.results == [results, results]
    tm = run.timings
    assert tm.querygen_ms > 0 and tm.rerank_ms > 0 and tm.retrieval_ms > 0
    assert not hasattr(researcher, "last_timings")  # nothing per call is kept on the object


def test_k_documents_and_j_snippets(tiny_index, reranker):
    one_doc = Researcher(
        tiny_index, SentenceQueryGenerator(), reranker, ResearchConfig(k_documents=1, j_snippets=3)
    )
    (qe,) = one_doc.research("Marie Curie won the Nobel Prize in Chemistry in 1911.")
    assert [e.id for e in sorted(qe.evidence, key=lambda e: e.id)] == [
        f"marie-curie#{i}" for i in range(3)
    ]
    # evidence follows the final ranking (cross-encoder relevance fused with the first stage)
    assert [e.id for e in qe.evidence] == [h.snippet.id for h in qe.hits[:3]]
    assert [h.score for h in qe.hits] == sorted((h.score for h in qe.hits), reverse=True)
    two_docs = Researcher(
        tiny_index, SentenceQueryGenerator(), reranker, ResearchConfig(k_documents=2, j_snippets=5)
    )
    (qe,) = two_docs.research("Apollo 11 landed on the Moon in 1969.")
    assert len({h.snippet.doc_id for h in qe.hits}) == 2  # only K documents compete
    assert qe.evidence[0].title == "Apollo 11"


def test_rerank_depth_takes_windows_in_turn_from_each_document(tiny_index, reranker):
    claim = "Apollo 11 landed on the Moon in 1969."
    full = Researcher(tiny_index, SentenceQueryGenerator(), reranker, ResearchConfig())
    (all_hits,) = full.research(claim)
    shallow = Researcher(
        tiny_index, SentenceQueryGenerator(), reranker, ResearchConfig(rerank_depth=3)
    )
    (qe,) = shallow.research(claim)
    assert len(all_hits.hits) > 3 and len(qe.hits) == 3  # only 3 windows reranked
    docs = [h.snippet.doc_id for h in qe.hits]
    assert len(set(docs)) == min(3, len({h.snippet.doc_id for h in all_hits.hits}))
    assert qe.evidence[0].id == all_hits.evidence[0].id  # the best window is each doc's first


def test_duplicates_are_merged(tiny_index, reranker):
    researcher = Researcher(tiny_index, SentenceQueryGenerator(), reranker)
    queries = [
        Query("How tall is the Eiffel Tower?", "test"),
        Query("Height of the Eiffel Tower in metres", "test"),
    ]
    results = researcher.research_queries(queries)
    assert results[0].evidence[0].id == results[1].evidence[0].id
    merged = unique_evidence(results)
    assert len(merged) == 1 and merged[0].relevance == max(r.evidence[0].relevance for r in results)


def test_entity_generator_and_context(tiny_index, reranker):
    researcher = Researcher(tiny_index, EntityQueryGenerator(), reranker)
    results = researcher.research(
        "It was completed in 1889.", context="User: Tell me about the Eiffel Tower."
    )
    assert results, "the entity generator asks about the date"
    (date_q,) = [qe for qe in results if qe.query.focus == "1889"]
    assert "Eiffel Tower" in date_q.query.text  # 'It' resolved from the dialogue context
    assert date_q.evidence[0].title == "Eiffel Tower"


def test_without_reranker_uses_first_stage_order(tiny_index):
    researcher = Researcher(
        tiny_index, SentenceQueryGenerator(), None, search=SearchConfig(mode="bm25")
    )
    (qe,) = researcher.research("The Amazon River is 6,400 kilometres long.")
    assert qe.evidence[0].title == "Amazon River"
    assert qe.hits[0].relevance is None


def test_no_claims_no_queries(tiny_index, reranker):
    researcher = Researcher(tiny_index, SentenceQueryGenerator(), reranker)
    assert researcher.research("") == []
    assert researcher.research("Hello! How are you?") == []
    with pytest.raises(ValueError, match="one context"):
        researcher.run(["a", "b"], [None])


def test_the_page_a_sentence_names_joins_the_candidates(tiny_index, reranker):
    """A sentence that shares its words with another page still has its subject's own page
    read: the page it names joins the K documents the search found, ranked with them."""
    sentence = "Python is a wrought-iron lattice tower on the Champ de Mars in Paris."
    cfg = ResearchConfig(k_documents=1, j_snippets=2)
    off = Researcher(
        tiny_index, SentenceQueryGenerator(), reranker, cfg.model_copy(update={"subject_pages": 0})
    )
    (qe,) = off.research(sentence)
    assert {h.snippet.title for h in qe.hits} == {"Eiffel Tower"}  # the words' page only
    (qe,) = Researcher(tiny_index, SentenceQueryGenerator(), reranker, cfg).research(sentence)
    assert {h.snippet.title for h in qe.hits} == {"Eiffel Tower", "Python (programming language)"}
    assert qe.evidence[0].title == "Eiffel Tower"  # the reranker, not the lookup, orders them
    assert [h.snippet.title for h in tiny_index.named("Gustave Eiffel met Marie Curie.")] == [
        "Marie Curie"
    ]
    assert tiny_index.named("the great wall of china") == []  # a name starts with a capital


def test_a_research_cache_answers_a_repeated_query_and_keeps_tenants_apart(tiny_index, reranker):
    from editor.research.cache import ResearchCache

    counted = {"pairs": 0}
    scorer = reranker.scorer
    original = scorer.pair_logits

    def pair_logits(pairs):
        counted["pairs"] += len(pairs)
        return original(pairs)

    researcher = Researcher(tiny_index, SentenceQueryGenerator(), reranker)
    cache = ResearchCache(max_entries=8)
    scorer.pair_logits = pair_logits
    try:
        first = researcher.research(PASSAGE, cache=cache.tenant("a"))
        scored = counted["pairs"]
        again = researcher.research(PASSAGE, cache=cache.tenant("a"))
        assert counted["pairs"] == scored  # every query came from the cache: nothing reranked
        assert again == first and cache.hits == 3
        other = researcher.research(PASSAGE, cache=cache.tenant("b"))
        assert counted["pairs"] == 2 * scored  # another tenant never reads a's entries
        assert other == first and len(cache) == 6
    finally:
        del scorer.pair_logits
    small = ResearchCache(max_entries=2)
    researcher.research(PASSAGE, cache=small.tenant("a"))
    assert len(small) == 2  # bounded: the least recently used query left
    with pytest.raises(ValueError, match="max_entries"):
        ResearchCache(max_entries=0)
