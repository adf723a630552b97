"""Quotas per API key over real HTTP (requests per minute, requests in flight), counted in
/metrics by a hash of the key; and no key (the service's, the upstream's, a search
provider's) in logs, error bodies, /metrics, the OpenAPI page or a result's warnings."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from helpers import wait_ready
from llm_helpers import serve
from web_helpers import KEY as BRAVE_KEY
from web_helpers import create_web_app

from editor.attribution.base import build as build_attribution
from editor.config import AttributionConfig, load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from retrieval.settings import Settings
from serve.app import create_app
from serve.quota import Quota, key_id, match_key
from serve.settings import ServeSettings

TOWER = "The Eiffel Tower is a wrought-iron lattice tower in Paris. It is 330 metres tall."


def test_the_minute_window_slides_and_says_when_to_retry():
    now = [1000.0]
    quota = Quota(per_minute=2, concurrent=None, clock=lambda: now[0])
    assert quota.acquire("a") is None and quota.acquire("a") is None
    now[0] += 15
    assert quota.acquire("a") == ("per_minute", 45)  # the first leaves the window in 45 s
    assert quota.acquire("b") is None  # another key is not affected
    now[0] += 45
    assert quota.acquire("a") is None


def test_requests_in_flight_are_limited_until_released():
    quota = Quota(per_minute=None, concurrent=2)
    assert quota.acquire("a") is None and quota.acquire("a") is None
    assert quota.acquire("a") == ("concurrent", 1)
    quota.release("a")
    assert quota.acquire("a") is None


def test_keys_match_whole_and_are_named_by_a_hash():
    keys = ["sk-one", "sk-two"]
    assert match_key("sk-two", keys) == "sk-two"
    assert match_key("sk-tw", keys) is None and match_key("", keys) is None
    assert "sk-one" not in key_id("sk-one") and key_id("sk-one") != key_id("sk-two")
    with pytest.raises(ValueError, match=">= 1"):
        Quota(per_minute=0, concurrent=None)


@pytest.fixture(scope="module")
def nli():
    model = build_attribution(AttributionConfig())
    model.load()
    return model


@pytest.mark.integration
def test_a_burst_over_the_limit_gets_429_with_retry_after_and_other_keys_go_on(built_index, nli):
    settings = ServeSettings(
        api_keys="k-noisy,k-quiet", key_per_minute=5, key_concurrent=0, warmup=False
    )
    pipeline = Pipeline(
        Components(load_config("default", []), index_path=built_index, progress=False),
        attribution=nli,
    )
    body = {"text": "The Eiffel Tower is in Paris.", "evidence": [TOWER]}
    with serve(create_app(pipeline, settings)) as base:

        def call(key: str) -> httpx.Response:
            auth = {"Authorization": f"Bearer {key}"}
            return httpx.post(f"{base}/v1/score", json=body, headers=auth, timeout=120)

        with ThreadPoolExecutor(20) as pool:
            burst = list(pool.map(call, ["k-noisy"] * 20))
        assert sorted(r.status_code for r in burst) == [200] * 5 + [429] * 15
        for r in (r for r in burst if r.status_code == 429):
            assert 1 <= int(r.headers["retry-after"]) <= 60
            assert r.json()["error"]["code"] == "rate_limited"
            assert "PURR_KEY_PER_MINUTE" in r.json()["error"]["message"]
        assert call("k-quiet").status_code == 200
        metrics = httpx.get(f"{base}/metrics").text
    noisy, quiet = key_id("k-noisy"), key_id("k-quiet")
    assert f'purr_key_requests_total{{key="{noisy}"}} 20.0' in metrics
    assert f'purr_key_rate_limited_total{{key="{noisy}",limit="per_minute"}} 15.0' in metrics
    assert f'purr_key_requests_total{{key="{quiet}"}} 1.0' in metrics
    assert "k-noisy" not in metrics and "k-quiet" not in metrics
    assert 'purr_requests_total{route="/v1/score",status="429"} 15.0' in metrics, [
        line for line in metrics.splitlines() if line.startswith("purr_requests_total")
    ]


PURR_KEY = "sk-purr-Secret-a1b2c3"
METADATA = "http://169.254.169.254/latest/meta-data/"
UPSTREAM_KEY = "sk-upstream-Secret-d4e5f6"


def _upstream() -> FastAPI:
    """A chat model that needs UPSTREAM_KEY, and fails, quoting the key, for model 'leaky'."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        body = await request.json()
        auth = request.headers.get("authorization", "")
        if auth != f"Bearer {UPSTREAM_KEY}" or body.get("model") == "leaky":
            return JSONResponse({"error": {"message": f"key {auth} refused"}}, status_code=500)
        message = {"role": "assistant", "content": "The Eiffel Tower is in Paris."}
        return {"id": "x", "choices": [{"index": 0, "message": message}], "model": "m"}

    return app


@pytest.mark.integration
def test_no_key_reaches_logs_errors_metrics_the_openapi_page_or_warnings(caplog):
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    web_app = create_web_app()
    with serve(web_app) as web, serve(_upstream()) as upstream:
        sets = [
            "research.source=web",
            "web.provider=brave",
            f"web.url={web}/brave",
            "web.retries=0",
            "web.allow_networks=[127.0.0.1/32]",
        ]
        comp = Components(
            load_config("default", sets), Settings(brave_api_key=BRAVE_KEY), progress=False
        )
        settings = ServeSettings(
            api_keys=PURR_KEY, upstream_url=f"{upstream}/v1", upstream_api_key=UPSTREAM_KEY
        )
        with serve(create_app(Pipeline(comp), settings)) as base:
            assert wait_ready(base, timeout=600).status_code == 200
            auth = {"Authorization": f"Bearer {PURR_KEY}"}
            text = "The Eiffel Tower was designed by Thomas Edison's company."
            chat = {"messages": [{"role": "user", "content": "Where is it?"}]}
            calls = [
                ("/v1/edit", {"text": text}, auth),
                ("/v1/edit", {"text": text}, {"Authorization": f"Bearer {PURR_KEY}x"}),
                ("/v1/edit", {"text": 3}, auth),
                ("/v1/chat/completions", chat, auth),
                ("/v1/chat/completions", {**chat, "model": "leaky"}, auth),
                ("/v1/chat/completions", {**chat, "model": "leaky", "stream": True}, auth),
                # no request names a URL purr connects to: unknown fields are refused
                ("/v1/edit", {"text": text, "web": {"url": METADATA}}, auth),
                ("/v1/chat/completions", {**chat, "purr": {"web_url": METADATA}}, auth),
            ]
            statuses = []
            for path, body, headers in calls:
                r = httpx.post(f"{base}{path}", json=body, headers=headers, timeout=300)
                statuses.append(r.status_code)
                seen.append(r.text)
            edit = httpx.post(f"{base}/v1/edit", json={"text": text}, headers=auth, timeout=300)
            seen.append(" ".join(edit.json()["warnings"]))
            seen.append(httpx.get(f"{base}/metrics").text)
            seen.append(httpx.get(f"{base}/openapi.json").text)
    assert statuses == [200, 401, 422, 200, 502, 502, 422, 400], seen
    # every key was used: the search provider's, the upstream's (the chat answered) and purr's
    assert any(r[2].get("x-subscription-token") == BRAVE_KEY for r in web_app.state.requests)
    seen.extend(record.getMessage() for record in caplog.records)
    for key in (PURR_KEY, UPSTREAM_KEY, BRAVE_KEY):
        assert not [s for s in seen if key in s], key
