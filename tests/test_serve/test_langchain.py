"""``PurrEdit`` in real LangChain chains: LangChain's own fake chat model and in-memory vector
store, purr's real pipeline (real models, a real FAISS index on disk)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip(
    "langchain_core", reason="the LangChain extra: pip install 'purr-edit[langchain]'"
)

from helpers import ACME_FOUNDED, ACME_PORTER, run_docs_example  # noqa: E402
from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.language_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate  # noqa: E402
from langchain_core.runnables import RunnablePassthrough  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402

from serve.integrations.langchain import PurrEdit  # noqa: E402

QUESTION = "How much can the Porter X2 lift?"
WRONG = "The Porter X2 can lift 300 kilograms."
RIGHT = "The Porter X2 can lift 150 kilograms."


@pytest.fixture(scope="module")
def retriever():
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=64))
    store.add_documents(
        [
            Document(ACME_FOUNDED, metadata={"source": "about.md"}),
            Document(ACME_PORTER, metadata={"source": "specs.md", "title": "Porter X2"}),
        ]
    )
    return store.as_retriever(search_kwargs={"k": 2})


def _rag(retriever, answer: str, purr: PurrEdit):
    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    llm = FakeListChatModel(responses=[answer])
    return (
        {"context": retriever, "question": RunnablePassthrough()}
        | RunnablePassthrough.assign(answer=prompt | llm)
        | purr
    )


def test_a_rag_chain_fixes_a_planted_error_from_its_own_documents(pipeline, retriever):
    reply = _rag(retriever, WRONG, PurrEdit(pipeline)).invoke(QUESTION)
    assert isinstance(reply, AIMessage)
    assert reply.content == RIGHT
    purr = reply.response_metadata["purr"]
    assert purr["status"] == "edited" and purr["original"] == WRONG
    [finding] = purr["findings"]
    assert (finding["text"], finding["fix"], finding["fixed"]) == (
        "300 kilograms",
        "150 kilograms",
        True,
    )
    [cite] = purr["citations"]
    assert cite["sentence"] == RIGHT and cite["metadata"]["source"] == "specs.md"
    assert cite["title"] == "Porter X2" and cite["attribution"] >= 0.5
    assert purr["report"]["attribution_after"] > purr["report"]["attribution_before"]


def test_a_correct_answer_comes_back_byte_for_byte(pipeline, retriever):
    reply = _rag(retriever, RIGHT, PurrEdit(pipeline)).invoke(QUESTION)
    assert reply.content == RIGHT
    assert reply.response_metadata["purr"]["status"] == "unchanged"


def test_a_cited_answer_has_its_citations_checked_against_the_documents(pipeline):
    purr = PurrEdit(pipeline)
    docs = [Document(ACME_FOUNDED), Document(ACME_PORTER)]
    reply = purr.invoke({"answer": "The Porter X2 can lift 300 kilograms [2].", "context": docs})
    assert reply.content == "The Porter X2 can lift 150 kilograms [2]."
    meta = reply.response_metadata["purr"]
    assert [c["action"] for c in meta["citation_changes"]["changes"]] == ["revised"]
    assert meta["citations"][0]["document"] == 1


def test_without_documents_it_researches_its_own_corpus(pipeline):
    chain = FakeListChatModel(responses=["The Eiffel Tower is 250 metres tall."]) | PurrEdit(
        pipeline
    )
    reply = chain.invoke("How tall is the Eiffel Tower?")
    assert reply.content == "The Eiffel Tower is 330 metres tall."
    assert reply.response_metadata["purr"]["citations"][0]["document"] is None


def test_stream_buffers_edits_then_streams_words(pipeline, retriever):
    chunks = list(_rag(retriever, WRONG, PurrEdit(pipeline)).stream(QUESTION))
    assert len(chunks) > 2  # a few words at a time, then the metadata
    assert "".join(c.content for c in chunks) == RIGHT
    assert chunks[-1].response_metadata["purr"]["status"] == "edited"
    whole = chunks[0]
    for c in chunks[1:]:
        whole += c
    assert whole.content == RIGHT and whole.response_metadata["purr"]["findings"]


def test_async_forms_and_batch(pipeline, retriever):
    purr = PurrEdit(pipeline)
    docs = [Document(ACME_FOUNDED), Document(ACME_PORTER)]
    rows = [{"answer": WRONG, "context": docs}, {"answer": RIGHT, "context": docs}]
    assert [m.content for m in purr.batch(rows)] == [RIGHT, RIGHT]

    async def run():
        one = await purr.ainvoke(rows[0])
        many = await purr.abatch(rows)
        streamed = [c async for c in _rag(retriever, WRONG, purr).astream(QUESTION)]
        return one, many, streamed

    one, many, streamed = asyncio.run(run())
    assert one.content == RIGHT and [m.content for m in many] == [RIGHT, RIGHT]
    assert "".join(c.content for c in streamed) == RIGHT


def test_with_config_names_the_run_for_callbacks(pipeline):
    class Names(BaseCallbackHandler):
        def __init__(self):
            self.names = []

        def on_chain_start(self, serialized, inputs, **kwargs):
            self.names.append(kwargs.get("name"))

    seen = Names()
    purr = PurrEdit(pipeline).with_config(run_name="fact-check", callbacks=[seen])
    assert purr.invoke({"answer": RIGHT, "context": [ACME_PORTER]}).content == RIGHT
    assert "fact-check" in seen.names


def test_a_failing_purr_degrades_unless_asked_to_raise(pipeline):
    broken = PurrEdit(config="no-such-config")  # the pipeline cannot be built
    reply = broken.invoke(AIMessage(WRONG, id="run-1", response_metadata={"model": "m"}))
    assert reply.content == WRONG and reply.id == "run-1"
    assert reply.response_metadata["model"] == "m"  # the model's own metadata kept
    purr = reply.response_metadata["purr"]
    assert purr["status"] == "degraded" and "no-such-config" in purr["warnings"][0]
    with pytest.raises(Exception, match="no-such-config"):
        PurrEdit(config="no-such-config", on_error="raise").invoke(WRONG)
    with pytest.raises(Exception, match="no-such-config"):
        broken.invoke(WRONG, config={"configurable": {"purr_on_error": "raise"}})


def test_an_empty_reply_and_wrong_wiring(pipeline):
    purr = PurrEdit(pipeline)
    empty = purr.invoke(AIMessage(""))
    assert empty.content == "" and empty.response_metadata["purr"]["status"] == "unchanged"
    with pytest.raises(ValueError, match="answer_key"):
        purr.invoke({"output": WRONG})
    with pytest.raises(TypeError, match="message, a string or a mapping"):
        purr.invoke(42)


def test_the_docs_example_runs_and_fixes_the_planted_figure(tmp_path):
    out = run_docs_example("docs/pages/how-to/langchain.md", tmp_path)
    assert out.splitlines()[-2:] == [
        "The Porter X2 can lift 150 kilograms.",
        "150 kilograms from {'source': 'specs.md'}",
    ]
