"""``POST /v1/research`` over real HTTP (the query as asked, searched and reranked), its errors
in the one shape, and the service's worker slots: a call given up before a worker took it
frees its slot, so cancelled MCP calls and deadlines never leave the service "overloaded"."""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest
from helpers import wait_ready
from llm_helpers import serve

from editor.config import load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from serve.app import create_app
from serve.edit.service import EditService
from serve.settings import ServeSettings

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def url(built_index):
    pipeline = Pipeline(Components(load_config("default"), index_path=built_index, progress=False))
    with serve(create_app(pipeline, ServeSettings(workers=1))) as base:
        assert wait_ready(base).status_code == 200
        yield base


def test_research_returns_the_best_snippets_for_the_query_as_asked(url):
    r = httpx.post(
        f"{url}/v1/research", json={"query": "How tall is Mount Everest?", "k": 2}, timeout=60
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["query"] == "How tall is Mount Everest?" and len(body["snippets"]) == 2
    best = body["snippets"][0]
    assert (
        best["title"] == "Mount Everest" and best["relevance"] >= body["snippets"][1]["relevance"]
    )


@pytest.mark.parametrize(
    ("body", "status", "param"),
    [({"query": "  "}, 422, "query"), ({"query": "Everest", "k": 0}, 422, "k"),
     ({"query": "Everest", "mode": "web"}, 422, "mode")],
)  # fmt: skip
def test_research_refuses_bad_input_in_the_one_error_shape(url, body, status, param):
    r = httpx.post(f"{url}/v1/research", json=body, timeout=30)
    assert r.status_code == status and r.json()["error"]["param"] == param, r.text


def test_a_call_given_up_before_it_started_frees_its_worker_slot(built_index):
    pipeline = Pipeline(Components(load_config("default"), index_path=built_index, progress=False))
    svc = EditService(pipeline, ServeSettings(workers=1, max_queue=1, warmup=False))
    release, ran = threading.Event(), []

    async def scenario() -> None:
        busy = asyncio.ensure_future(svc.run_cheap(release.wait, deadline=1e12))
        await asyncio.sleep(0.1)  # the one worker is taken
        queued = asyncio.ensure_future(svc.run_cheap(lambda: ran.append(1), deadline=1e12))
        await asyncio.sleep(0.1)
        queued.cancel()  # the caller gives up (a cancelled MCP call, a client gone)
        await asyncio.gather(queued, return_exceptions=True)
        release.set()
        await busy
        await svc.run_cheap(lambda: ran.append(2), deadline=1e12)  # not "overloaded"

    try:
        asyncio.run(scenario())
    finally:
        svc.close()
    assert ran == [2] and svc._pending == 0
