"""The chatbot wrapper end to end: ``serve-llm``'s app (the packaged SmolLM2) as a real upstream,
``purr serve``'s app in front, and the ``openai`` client talking to purr, streamed and not; the
upstream down, slow or refusing; and the Python helper that wraps a chat function."""

from __future__ import annotations

import asyncio

import httpx
import openai
import pytest
from fastapi import FastAPI
from helpers import wait_ready
from llm_helpers import free_port, serve, smollm

from editor.attribution.base import build as build_attribution
from editor.config import AttributionConfig, load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from serve.app import create_app
from serve.chat.wrap import revise_replies
from serve.llm_server import create_llm_app
from serve.settings import ServeSettings

# a real HTTP server, the CLI as a subprocess or a real browser
pytestmark = pytest.mark.integration

MODEL = "smollm2"
# SmolLM2-135M repeats this (greedy), so the upstream reply carries a planted error
ASK = [{"role": "user", "content": "Repeat after me: The Eiffel Tower is 250 metres tall."}]
WRONG = "The Eiffel Tower is 250 metres tall."
RIGHT = "The Eiffel Tower is 330 metres tall."


@pytest.fixture(scope="module")
def pipeline(built_index):
    nli = build_attribution(AttributionConfig())
    cfg = load_config("default")
    return Pipeline(Components(cfg, index_path=built_index, progress=False), attribution=nli)


@pytest.fixture(scope="module")
def upstream():
    with serve(create_llm_app(smollm(), MODEL)) as url:
        yield f"{url}/v1"


@pytest.fixture(scope="module")
def purr_url(pipeline, upstream):
    with serve(create_app(pipeline, ServeSettings(upstream_url=upstream))) as url:
        # as a client would: wait for the models (a first use converts one) before asking
        assert wait_ready(url).status_code == 200
        yield url


def _client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=120)


def test_upstream_says_the_planted_error(upstream):
    reply = _client(upstream.removesuffix("/v1")).chat.completions.create(
        model=MODEL, messages=ASK, max_tokens=24
    )
    assert reply.choices[0].message.content == WRONG


def test_reply_comes_back_revised_with_citations_and_report(purr_url):
    reply = _client(purr_url).chat.completions.create(model=MODEL, messages=ASK, max_tokens=24)
    content = reply.choices[0].message.content
    assert content.startswith(f"{RIGHT} [1]\n\nSources:\n[1] Eiffel Tower: "), content
    purr = reply.to_dict()["purr"]
    assert purr["original"] == WRONG and purr["revised"] == RIGHT
    assert purr["status"] == "edited"
    assert purr["context"] == f"user: {ASK[0]['content']}"
    assert purr["report"]["attribution_after"] > purr["report"]["attribution_before"]


def test_streamed_reply_matches_the_whole_one(purr_url):
    client = _client(purr_url)
    whole = client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=24)
    chunks = list(
        client.chat.completions.create(model=MODEL, messages=ASK, max_tokens=24, stream=True)
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].to_dict()["purr"]["revised"] == RIGHT
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"


def test_purr_options_pass_the_reply_through(purr_url):
    client = _client(purr_url)
    plain = client.chat.completions.create(
        model=MODEL, messages=ASK, max_tokens=24, extra_body={"purr": {"citations": "none"}}
    )
    assert plain.choices[0].message.content == RIGHT
    untouched = client.chat.completions.create(
        model=MODEL, messages=ASK, max_tokens=24, extra_body={"purr": {"edit": False}}
    )
    assert untouched.choices[0].message.content == WRONG
    assert untouched.to_dict().get("purr") is None


def test_purr_options_of_the_wrong_type_are_refused_not_coerced(purr_url):
    body = {"messages": ASK, "purr": {"edit": 0}}  # 0 is no boolean (schemathesis found it)
    r = httpx.post(f"{purr_url}/v1/chat/completions", json=body, timeout=60)
    assert r.status_code == 400 and r.json()["error"]["param"] == "purr.edit", r.text


def test_upstream_errors_come_back_in_openai_format(pipeline, purr_url):
    with pytest.raises(openai.NotFoundError) as e:
        _client(purr_url).chat.completions.create(model="no-such-model", messages=ASK)
    assert "upstream answered 404" in e.value.message and "not served here" in e.value.message
    with pytest.raises(openai.BadRequestError) as e:
        _client(purr_url).chat.completions.create(model=MODEL, messages=[])
    assert "messages" in e.value.message

    down = ServeSettings(upstream_url=f"http://127.0.0.1:{free_port()}/v1", warmup=False)
    with serve(create_app(pipeline, down)) as url:
        with pytest.raises(openai.APIStatusError) as e:
            _client(url).chat.completions.create(model=MODEL, messages=ASK)
        assert e.value.status_code == 502 and "unreachable" in e.value.message
        assert e.value.body["code"] == "upstream_unreachable"


def test_upstream_slower_than_the_deadline_gives_504(pipeline):
    slow = FastAPI()

    @slow.post("/v1/chat/completions")
    async def _late() -> dict:
        await asyncio.sleep(5)
        return {}

    with serve(slow) as slow_url:
        settings = ServeSettings(upstream_url=f"{slow_url}/v1", deadline_s=1, warmup=False)
        with serve(create_app(pipeline, settings)) as url:
            with pytest.raises(openai.APIStatusError) as e:
                _client(url).chat.completions.create(model=MODEL, messages=ASK)
            assert e.value.status_code == 504 and "did not answer within 1 s" in e.value.message


def test_python_wrapper_sync_and_async(pipeline):
    def chat(messages):
        return smollm().chat([messages], max_new_tokens=24, temperature=0.0)[0][0]

    reply = revise_replies(chat, pipeline)(ASK)
    assert reply.original == WRONG and reply.result.revised == RIGHT
    assert reply.content.startswith(f"{RIGHT} [1]")

    async def achat(messages):
        return {"role": "assistant", "content": chat(messages)}

    areply = asyncio.run(revise_replies(achat, pipeline, citations="none")(ASK))
    assert areply.content == RIGHT
    assert revise_replies(lambda m: "", pipeline)(ASK).result.status == "degraded"


def test_reply_citing_given_sources_is_repaired_against_them(purr_url):
    sources = [
        {"id": 1, "title": "Eiffel Tower", "text": "The Eiffel Tower in Paris is 330 metres tall."},
        {"id": 2, "title": "Mount Everest", "text": "Mount Everest is 8,849 metres high."},
    ]
    reply = _client(purr_url).chat.completions.create(
        model=MODEL, messages=ASK, max_tokens=24, extra_body={"purr": {"sources": sources}}
    )
    content = reply.choices[0].message.content
    purr = reply.to_dict()["purr"]
    assert purr["original"] == WRONG
    assert content == purr["revised"] == "The Eiffel Tower is 330 metres tall [1]."
    assert "Sources:" not in content  # the reply cites the caller's sources, not purr's list
    [change] = purr["citations"]["changes"]
    assert change["action"] == "revised" and change["after"] == ["1"]
