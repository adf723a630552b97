"""``PurrQueryEngine`` around real LlamaIndex query engines: a real ``VectorStoreIndex`` with
LlamaIndex's mock embedding and mock LLM (which repeats its prompt: a fixed prompt template
plants the answer), purr's real pipeline."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip(
    "llama_index.core", reason="the LlamaIndex extra: pip install 'purr-edit[llamaindex]'"
)

from helpers import ACME_FOUNDED, ACME_PORTER, run_docs_example  # noqa: E402
from llama_index.core import Document, PromptTemplate, VectorStoreIndex  # noqa: E402
from llama_index.core.base.response.schema import (  # noqa: E402
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.embeddings import MockEmbedding  # noqa: E402
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.query_engine import CitationQueryEngine  # noqa: E402

from serve.integrations.llamaindex import PurrQueryEngine  # noqa: E402

QUESTION = "When was Acme Robotics founded?"
WRONG = "Acme Robotics was founded in 2014 by Maria Lopez."
RIGHT = "Acme Robotics was founded in 2011 by Maria Lopez."


@pytest.fixture(scope="module")
def index():
    docs = [
        Document(text=ACME_FOUNDED, metadata={"title": "Acme Robotics"}),
        Document(text=ACME_PORTER),
    ]
    return VectorStoreIndex.from_documents(docs, embed_model=MockEmbedding(embed_dim=8))


def _engine(index, answer: str, **kwargs):
    template = PromptTemplate(answer)  # MockLLM repeats it: the engine's answer
    return index.as_query_engine(
        llm=MockLLM(), text_qa_template=template, similarity_top_k=2, **kwargs
    )


def test_a_planted_error_is_fixed_from_the_source_nodes(pipeline, index):
    inner = _engine(index, WRONG)
    assert str(inner.query(QUESTION)) == WRONG  # what the app would have said
    response = PurrQueryEngine(inner, pipeline).query(QUESTION)
    assert isinstance(response, Response) and str(response) == RIGHT
    purr = response.metadata["purr"]
    assert purr["status"] == "edited"
    [finding] = purr["findings"]
    assert (finding["text"], finding["fix"]) == ("2014", "2011")
    [cite] = purr["citations"]
    node = response.source_nodes[cite["document"]].node
    assert cite["id"] == node.node_id and node.get_content() == ACME_FOUNDED
    assert cite["title"] == "Acme Robotics"
    assert len(response.source_nodes) == 2  # the engine's nodes, and its metadata, kept
    assert set(response.metadata) >= {n.node.node_id for n in response.source_nodes}


def test_a_correct_answer_comes_back_byte_for_byte(pipeline, index):
    response = PurrQueryEngine(_engine(index, RIGHT), pipeline).query(QUESTION)
    assert str(response) == RIGHT
    assert response.metadata["purr"]["status"] == "unchanged"


def test_a_citation_engine_answer_has_its_citations_checked(pipeline, index):
    probe = CitationQueryEngine.from_args(index, llm=MockLLM(max_tokens=1), similarity_top_k=2)
    order = [n.node.get_content() for n in probe.query(QUESTION).source_nodes]
    n = 1 + next(i for i, text in enumerate(order) if ACME_FOUNDED in text)
    template = PromptTemplate(f"Acme Robotics was founded in 2014 by Maria Lopez [{n}].")
    cited = CitationQueryEngine.from_args(
        index, llm=MockLLM(), similarity_top_k=2, citation_qa_template=template
    )
    response = PurrQueryEngine(cited, pipeline).query(QUESTION)
    assert str(response) == f"Acme Robotics was founded in 2011 by Maria Lopez [{n}]."
    changes = response.metadata["purr"]["citation_changes"]["changes"]
    assert [c["action"] for c in changes] == ["revised"]


def test_a_streaming_engine_streams_the_revision(pipeline, index):
    response = PurrQueryEngine(_engine(index, WRONG, streaming=True), pipeline).query(QUESTION)
    assert isinstance(response, StreamingResponse)
    pieces = list(response.response_gen)
    assert len(pieces) > 1 and "".join(pieces) == RIGHT
    assert response.metadata["purr"]["status"] == "edited"


def test_aquery_plain_and_streaming(pipeline, index):
    async def run():
        plain = await PurrQueryEngine(_engine(index, WRONG), pipeline).aquery(QUESTION)
        streaming = _engine(index, WRONG, streaming=True, use_async=True)
        streamed = await PurrQueryEngine(streaming, pipeline).aquery(QUESTION)
        pieces = [p async for p in streamed.async_response_gen()]
        return plain, streamed, pieces

    plain, streamed, pieces = asyncio.run(run())
    assert str(plain) == RIGHT
    assert isinstance(streamed, AsyncStreamingResponse) and "".join(pieces) == RIGHT


def test_a_failing_purr_degrades_unless_asked_to_raise(index):
    inner = _engine(index, WRONG)
    response = PurrQueryEngine(inner, config="no-such-config").query(QUESTION)
    assert str(response) == WRONG
    purr = response.metadata["purr"]
    assert purr["status"] == "degraded" and "no-such-config" in purr["warnings"][0]
    with pytest.raises(Exception, match="no-such-config"):
        PurrQueryEngine(inner, config="no-such-config", on_error="raise").query(QUESTION)


def test_the_docs_example_runs_and_fixes_the_planted_year(tmp_path):
    out = run_docs_example("docs/pages/how-to/llamaindex.md", tmp_path)
    assert out.splitlines()[-2:] == ["Acme Robotics was founded in 2011 by Maria Lopez.", "True"]
