"""The OpenAI-compatible server and the openai backend, over real HTTP on loopback: SmolLM2
served by ``create_llm_app`` under uvicorn, plus small stub servers for retries, concurrency and
auth, and the prompted query generator end to end."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from llm_helpers import free_port, serve, smollm

from editor.llm import LLMError
from editor.llm.openai_backend import OpenAIBackend
from editor.research.querygen.llm import LLMQueryGenerator
from editor.research.querygen.questions import normalize_question
from serve.llm_server import create_llm_app

# a real HTTP server, the CLI as a subprocess or a real browser
pytestmark = pytest.mark.integration

MODEL = "smollm2"


@pytest.fixture(scope="session")
def server_url():
    with serve(create_llm_app(smollm(), MODEL)) as url:
        yield url


@pytest.fixture
def client(server_url):
    llm = OpenAIBackend(MODEL, server_url, timeout_s=60, max_retries=0, temperature=0)
    yield llm
    llm.close()


def test_models_endpoint(server_url):
    data = httpx.get(f"{server_url}/v1/models").json()
    assert data["object"] == "list" and [m["id"] for m in data["data"]] == [MODEL]


def test_completions_match_the_local_backend(client):
    prompts = ["The capital of France is", "Count: 1, 2, 3,"]
    remote = client.complete(prompts, max_new_tokens=6)
    assert remote == smollm().complete(prompts, max_new_tokens=6)
    assert "Paris" in remote[0][0]


def test_chat_through_the_server(client):
    [[reply]] = client.chat([[{"role": "user", "content": "What is the capital of France?"}]])
    assert "Paris" in reply


def test_n_samples_per_prompt(client):
    out = client.complete(
        ["Once upon a time", "My favourite food is"], n=3, temperature=1.0, max_new_tokens=4
    )
    assert [len(samples) for samples in out] == [3, 3]
    assert all(isinstance(t, str) for samples in out for t in samples)


def test_stop_is_applied_by_server_and_client(client):
    [[count]] = client.complete(["Count: 1, 2, 3, 4,"], max_new_tokens=8, stop=[","])
    assert count.strip() == "5"


def test_raw_response_has_openai_shape(server_url):
    body = {"model": MODEL, "prompt": ["A", "B"], "max_tokens": 2, "n": 2, "temperature": 0}
    data = httpx.post(f"{server_url}/v1/completions", json=body, timeout=60).json()
    assert data["object"] == "text_completion" and data["model"] == MODEL
    assert [c["index"] for c in data["choices"]] == [0, 1, 2, 3]
    body = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}
    data = httpx.post(f"{server_url}/v1/chat/completions", json=body, timeout=60).json()
    assert data["object"] == "chat.completion"
    assert data["choices"][0]["message"]["role"] == "assistant"


@pytest.mark.parametrize(
    "path, body, status, code",
    [
        ("/v1/completions", {"prompt": "x", "n": 0}, 400, "invalid_request"),
        ("/v1/completions", {"prompt": []}, 400, "invalid_request"),
        ("/v1/completions", {"prompt": "x", "stream": True}, 400, "invalid_request"),
        ("/v1/chat/completions", {"messages": []}, 400, "invalid_request"),
        (
            "/v1/chat/completions",
            {"messages": [{"role": "bot", "content": "x"}]},
            400,
            "invalid_request",
        ),
        ("/v1/completions", {"prompt": "x", "model": "gpt-9"}, 404, "model_not_found"),
    ],
)
def test_bad_requests_get_openai_errors(server_url, path, body, status, code):
    response = httpx.post(f"{server_url}{path}", json=body, timeout=30)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code and error["type"] == "invalid_request_error" and error["message"]


def test_wrong_model_name_is_not_retried(server_url):
    with OpenAIBackend("gpt-9", server_url, max_retries=3, backoff_s=5) as llm:
        with pytest.raises(LLMError, match="HTTP 404.*not served here"):
            llm.complete(["x"])  # would take 35 s if 4xx were retried


def test_unreachable_server_fails_after_retries(caplog):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with OpenAIBackend(MODEL, url, max_retries=2, backoff_s=0.01, timeout_s=2) as llm:
        with caplog.at_level(logging.WARNING, logger="editor.llm.openai_backend"):
            with pytest.raises(LLMError) as info:
                llm.complete(["x"])
    message = str(info.value)
    assert "unreachable after 2 retries" in message and "ConnectError" in message
    assert "PURR_LLM_BASE_URL" in message and url in message
    assert sum("retry" in r.getMessage() for r in caplog.records) == 2


# -- stub servers: flaky, slow, authenticated ------------------------------------------------


def _stub_app(fail_first: list[int], delay_s: float = 0.0) -> tuple[FastAPI, dict]:
    state = {"calls": 0, "in_flight": 0, "max_in_flight": 0, "auth": set()}
    app = FastAPI()

    @app.post("/v1/completions")
    async def completions(request: Request):
        body = await request.json()
        state["calls"] += 1
        state["auth"].add(request.headers.get("authorization"))
        if fail_first:
            status = fail_first.pop(0)
            headers = {"Retry-After": "0"} if status == 429 else {}
            return JSONResponse({"error": {"message": "busy"}}, status_code=status, headers=headers)
        state["in_flight"] += 1
        state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
        await asyncio.sleep(delay_s)
        state["in_flight"] -= 1
        # like llama.cpp, return a single choice whatever n is
        return {"choices": [{"index": 0, "text": f"echo:{body['prompt']}"}]}

    return app, state


def test_retries_on_429_and_5xx_then_succeeds():
    app, state = _stub_app(fail_first=[429, 503, 500])
    with serve(app) as url, OpenAIBackend("m", url, max_retries=3, backoff_s=0.01) as llm:
        assert llm.complete(["hi"]) == [["echo:hi"]]
    assert state["calls"] == 4


def test_gives_up_when_5xx_persists():
    app, state = _stub_app(fail_first=[502] * 10)
    with serve(app) as url, OpenAIBackend("m", url, max_retries=1, backoff_s=0.01) as llm:
        with pytest.raises(LLMError, match="after 1 retries: HTTP 502: busy"):
            llm.complete(["hi"])
    assert state["calls"] == 2


def test_concurrency_is_bounded_and_order_kept():
    app, state = _stub_app(fail_first=[], delay_s=0.2)
    prompts = [f"p{i}" for i in range(6)]
    with serve(app) as url, OpenAIBackend("m", url, max_concurrency=2, api_key="sekrit") as llm:
        out = llm.complete(prompts)
    assert out == [[f"echo:{p}"] for p in prompts]
    assert state["max_in_flight"] == 2
    assert state["auth"] == {"Bearer sekrit"}


def test_asks_again_when_server_ignores_n():
    app, state = _stub_app(fail_first=[])
    with serve(app) as url, OpenAIBackend("m", url) as llm:
        assert llm.complete(["x"], n=3) == [["echo:x"] * 3]
    assert state["calls"] == 3


# -- the prompted query generator, end to end through the server -----------------------------


def test_prompted_query_generation_end_to_end(client):
    generator = LLMQueryGenerator(client, samples=2, temperature=0, max_new_tokens=48)
    passage = "The Eiffel Tower is in Paris. It was completed in 1889."
    queries = generator.generate(passage)
    assert queries and all(q.generator == "llm" and q.text.endswith("?") for q in queries)
    keys = [normalize_question(q.text) for q in queries]
    assert len(keys) == len(set(keys))
    assert all("eiffel" in k or "paris" in k or "1889" in k for k in keys)
    batch = generator.generate_batch([passage, "  "], [None, None])
    assert batch == [queries, []]


def test_openapi_declares_the_error_shape():
    schema = create_llm_app(smollm(), MODEL).openapi()
    assert "ErrorResponse" in schema["components"]["schemas"]
    responses = schema["paths"]["/v1/completions"]["post"]["responses"]
    assert responses["400"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "ErrorResponse"
    )
