"""The chat wrapper in front of a loopback upstream that breaks its streamed reply on purpose
(an error event after some chunks, a malformed line, a stall past the deadline, a dropped
connection, an end without the last event), over real HTTP: the client always gets a
well-formed stream that ends with the upstream's text so far, unedited, and a ``purr`` report
saying why; a failure before any text is a coded JSON error, never a hang."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from llm_helpers import serve
from openai import OpenAI

from editor.config import load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from serve.app import create_app
from serve.settings import ServeSettings

# a real HTTP server
pytestmark = pytest.mark.integration

PIECES = ["The Eiffel ", "Tower is ", "in Paris."]
SO_FAR = "".join(PIECES[:2])


def _event(data: dict) -> str:
    return f"data: {json.dumps(data)}\n\n"


def _chunk(content: str | None = None, finish: str | None = None) -> str:
    delta = {"content": content} if content is not None else {}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return _event(
        {"id": "up-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        | {"choices": [choice]}
    )


def faulty_upstream() -> FastAPI:
    """An OpenAI-style upstream whose ``model`` names the fault of its streamed reply."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        fault = (await request.json())["model"]
        if fault == "status-500":
            return JSONResponse({"error": {"message": "the GPU fell over"}}, status_code=500)
        if fault == "stall-first":
            await asyncio.sleep(30)

        async def events():
            yield _event({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
            for piece in PIECES[:2]:
                yield _chunk(piece)
            if fault == "whole":
                yield _chunk(PIECES[2])
                yield _chunk(finish="stop")
                yield "data: [DONE]\n\n"
            elif fault == "error-event":
                yield _event({"error": {"message": "CUDA out of memory", "type": "server_error"}})
            elif fault == "malformed":
                yield 'data: {"choices": [{"delta"\n\n'
            elif fault == "stall":
                await asyncio.sleep(30)
            elif fault == "drop":
                raise RuntimeError("the upstream process died")  # uvicorn cuts the body short
            # "no-end": the stream closes without a finish reason or [DONE]

        return StreamingResponse(events(), media_type="text/event-stream")

    return app


@pytest.fixture(scope="module")
def purr_url(built_index):
    with serve(faulty_upstream()) as upstream:
        # the pipeline never loads: a broken reply is passed on unedited, "whole" asks for no edit
        pipeline = Pipeline(
            Components(load_config("default"), index_path=built_index, progress=False)
        )
        settings = ServeSettings(upstream_url=f"{upstream}/v1", deadline_s=2, warmup=False)
        with serve(create_app(pipeline, settings)) as url:
            yield url


def _stream(url: str, fault: str) -> tuple[list[dict], float]:
    """POST a streamed chat; every ``data:`` line must be JSON, the last one ``[DONE]``."""
    body = {"model": fault, "messages": [{"role": "user", "content": "Where is it?"}]}
    body |= {"stream": True, "purr": {"edit": False}}
    started = time.monotonic()
    with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, timeout=20) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        data = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    return [json.loads(d) for d in data[:-1]], time.monotonic() - started


def _text(events: list[dict]) -> str:
    return "".join(
        c["delta"].get("content") or "" for e in events for c in e["choices"] if c["index"] == 0
    )


@pytest.mark.parametrize(
    ("fault", "why"),
    [
        ("error-event", "failed mid-reply: CUDA out of memory"),
        ("malformed", "malformed event"),
        ("stall", "nothing more within the deadline of 2 s"),
        ("drop", "connection broke mid-reply"),
        ("no-end", "ended before its last event"),
    ],
)
def test_a_reply_broken_mid_stream_comes_back_unedited_with_the_reason(purr_url, fault, why):
    events, took = _stream(purr_url, fault)
    assert _text(events) == SO_FAR  # the upstream's text so far, byte for byte
    report = events[-1]["purr"]
    assert report["status"] == "degraded" and report["revised"] == SO_FAR
    assert why in report["warnings"][0] and "up to there" in report["warnings"][0]
    assert [c["finish_reason"] for e in events for c in e["choices"]][-1] == "error"
    assert took < 10  # the 2 s deadline, never a hang


def test_a_whole_stream_passes_through(purr_url):
    events, _ = _stream(purr_url, "whole")
    assert _text(events) == "".join(PIECES)
    assert [c["finish_reason"] for e in events for c in e["choices"]][-1] == "stop"


def test_the_openai_client_reads_a_broken_reply_as_a_normal_stream(purr_url):
    client = OpenAI(base_url=f"{purr_url}/v1", api_key="none", max_retries=0)
    stream = client.chat.completions.create(
        model="error-event",
        messages=[{"role": "user", "content": "Where is it?"}],
        stream=True,
        extra_body={"purr": {"edit": False}},
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == SO_FAR


@pytest.mark.parametrize(
    ("fault", "status", "code"),
    [("status-500", 502, "upstream_error"), ("stall-first", 504, "upstream_timeout")],
)
def test_a_failure_before_any_text_is_a_coded_error(purr_url, fault, status, code):
    body = {"model": fault, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    started = time.monotonic()
    r = httpx.post(f"{purr_url}/v1/chat/completions", json=body, timeout=20)
    assert (r.status_code, r.json()["error"]["code"]) == (status, code)
    assert time.monotonic() - started < 10
