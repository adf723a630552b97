"""The HTTP service over real HTTP on loopback (uvicorn), with the real shipped attribution model
and a real index: the edit, batch and score endpoints, readiness, metrics, API keys, CORS, and
the faults a service meets (malformed JSON, wrong types, huge bodies, a missing index, a broken
model, deadlines), always in the one error shape, the caller's text never lost."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from helpers import CONTRACT_KEYS, run_purr, wait_ready
from llm_helpers import serve

from editor.attribution.base import build as build_attribution
from editor.config import AttributionConfig, load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from serve.app import create_app
from serve.settings import ServeSettings

# a real HTTP server, the CLI as a subprocess or a real browser
pytestmark = pytest.mark.integration

PLANTED = "The Eiffel Tower is in Paris. The Eiffel Tower is 250 metres tall."
FIXED = "The Eiffel Tower is in Paris. The Eiffel Tower is 330 metres tall."
TOWER = (
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was built from 1887 "
    "to 1889. It is 330 metres tall."
)


@pytest.fixture(scope="module")
def nli():
    model = build_attribution(AttributionConfig())
    model.load()
    return model


def _pipeline(index, nli=None, overrides=()):
    cfg = load_config("default", list(overrides))
    return Pipeline(Components(cfg, index_path=index, progress=False), attribution=nli)


def post(*args, **kwargs) -> httpx.Response:
    """httpx.post with room for an edit on a busy 2-core machine (httpx waits 5 s by default)."""
    kwargs.setdefault("timeout", 60)
    return httpx.post(*args, **kwargs)


@pytest.fixture(scope="module")
def url(built_index, nli):
    app = create_app(_pipeline(built_index, nli), ServeSettings(max_batch=4, workers=2))
    with serve(app) as base:
        assert wait_ready(base).status_code == 200
        yield base


def _error(r: httpx.Response, status: int) -> dict:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"} and {"message", "type", "code"} <= set(body["error"])
    return body["error"]


def test_edit_fixes_a_planted_error_and_returns_the_contract(url):
    r = post(f"{url}/v1/edit", json={"text": PLANTED}, headers={"X-Request-ID": "abc-1"})
    assert r.status_code == 200, r.text
    assert r.headers["x-request-id"] == "abc-1"
    data = r.json()
    assert set(data) == CONTRACT_KEYS
    assert data["status"] == "edited" and data["revised"] == FIXED
    report = data["report"]
    assert report["attribution_after"] > report["attribution_before"]
    assert 0.9 < report["preservation"] < 1.0
    assert set(report["evidence_ids"]) <= {e["id"] for e in data["evidence"]}
    assert any(s["accepted"] for s in data["steps"])
    flagged = [f for f in data["findings"] if f["fixed"]]  # what the evidence flagged, fixed
    assert flagged and all(PLANTED[f["start"] : f["end"]] == f["text"] for f in flagged)
    assert any("250" in f["text"] for f in flagged)


def test_edit_with_given_evidence_and_context(url):
    r = post(
        f"{url}/v1/edit",
        json={
            "text": "It is 250 metres tall.",
            "context": "user: How tall is the Eiffel Tower?",
            "evidence": [TOWER],
        },
    )
    data = r.json()
    assert data["revised"] == "It is 330 metres tall.", data
    assert data["context"] == "user: How tall is the Eiffel Tower?"
    assert [e["id"] for e in data["evidence"]] == ["given-0"]


def test_batch_keeps_order_and_reports_bad_items_in_place(url):
    items = [{"text": PLANTED}, {"text": "word " * 5000}, {"text": "Hello there! How are you?"}]
    r = post(f"{url}/v1/edit/batch", json={"items": items}, timeout=120)
    results = r.json()["results"]
    assert [x["index"] for x in results] == [0, 1, 2]
    assert results[0]["result"]["revised"] == FIXED
    assert results[1]["result"] is None and "limit of 20,000" in results[1]["error"]["message"]
    blank = post(f"{url}/v1/edit/batch", json={"items": [{"text": "a"}, {"text": " "}]})
    assert _error(blank, 422)["message"].startswith("items.1.text is empty")
    assert results[2]["result"]["status"] == "unchanged"
    too_many = post(f"{url}/v1/edit/batch", json={"items": [{"text": "a"}] * 5})
    assert "batch limit of 4" in _error(too_many, 413)["message"]


def test_score_endpoint(url):
    r = post(
        f"{url}/v1/score",
        json={"text": "The Eiffel Tower is 330 metres tall. Is it nice?", "evidence": [TOWER]},
    )
    data = r.json()
    assert data["attribution"] > 0.5
    assert [s["applicable"] for s in data["sentences"]] == [True, False]
    assert data["sentences"][0]["evidence"] == TOWER


def test_deadline_returns_the_original_text_degraded(url):
    r = post(f"{url}/v1/edit", json={"text": PLANTED, "options": {"deadline_s": 0.001}})
    data = r.json()
    assert r.status_code == 200
    assert data["status"] == "degraded" and data["revised"] == PLANTED
    assert "deadline" in data["warnings"][0]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        (b'{"text": "The Eiffel', 400, "not valid JSON"),
        (b"[1, 2]", 422, "valid dictionary"),
        (b'{"text": 5}', 422, "text"),
        (b'{"text": "ok", "context": ["a"]}', 422, "context"),
        (b'{"txt": "typo"}', 422, "text"),
        (b'{"text": ""}', 422, "empty"),
        (json.dumps({"text": "word " * 5000}).encode(), 413, "limit of 20,000"),
        (b'{"text": "a", "options": {"deadline_s": -1}}', 422, "deadline_s"),
    ],
)
def test_bad_input_gets_a_clear_error(url, body, status, words):
    r = post(f"{url}/v1/edit", content=body, headers={"content-type": "application/json"})
    assert words in _error(r, status)["message"]


def test_one_megabyte_body_is_refused_and_the_server_stays_up(url):
    body = json.dumps({"text": "a" * 1_000_000}).encode()
    declared = post(f"{url}/v1/edit", content=body)
    assert "over the limit of 524,288" in _error(declared, 413)["message"]

    def chunks():  # no Content-Length: counted while it arrives
        for i in range(0, len(body), 65536):
            yield body[i : i + 65536]

    streamed = post(f"{url}/v1/edit", content=chunks())
    assert _error(streamed, 413)["code"] == "body_too_large"
    assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}


def test_unknown_route_and_method_use_the_error_shape(url):
    assert _error(httpx.get(f"{url}/v1/nothing"), 404)["message"] == "Not Found"
    _error(httpx.get(f"{url}/v1/edit"), 405)


def test_concurrent_requests_each_get_their_own_answer(url):
    heights = list(range(100, 108))  # as many as run at once

    def call(h: int) -> tuple[int, dict]:
        text = f"The Eiffel Tower is {h} metres tall."
        r = post(f"{url}/v1/edit", json={"text": text, "evidence": [TOWER]}, timeout=120)
        return h, r.json()

    alone = dict(call(h) for h in heights)  # one at a time: what each request should get
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(call, heights))
    for h, data in answers:
        assert data["original"] == f"The Eiffel Tower is {h} metres tall."
        assert data["revised"] == alone[h]["revised"], (h, data)  # nothing crossed over
    fixed = [h for h, data in answers if data["revised"] == "The Eiffel Tower is 330 metres tall."]
    assert len(fixed) >= len(heights) - 1, fixed  # and the answers are real fixes


def test_metrics_count_requests_and_stages(url):
    for _ in range(2):  # the second time its queries come from the research cache
        post(f"{url}/v1/edit", json={"text": "The Eiffel Tower is in Paris."})
    text = httpx.get(f"{url}/metrics").text
    assert float(re.search(r"^purr_research_cache_hits (\S+)", text, re.M).group(1)) >= 1
    assert 'purr_requests_total{route="/v1/edit",status="200"}' in text
    assert 'purr_stage_seconds_count{stage="research"}' in text
    assert 'purr_edits_total{status="unchanged"}' in text


def test_openapi_declares_the_error_shape(url):
    spec = httpx.get(f"{url}/openapi.json").json()
    edit = spec["paths"]["/v1/edit"]["post"]["responses"]
    assert edit["413"]["content"]["application/json"]["schema"]["$ref"].endswith("ErrorResponse")
    assert "/v1/chat/completions" in spec["paths"] and "/v1/score" in spec["paths"]


def test_api_keys_and_cors(built_index, nli):
    settings = ServeSettings(api_keys="k1,k2", cors_origins="https://app.example", warmup=False)
    with serve(create_app(_pipeline(built_index, nli), settings)) as base:
        body = {"text": "The Eiffel Tower is in Paris.", "evidence": [TOWER]}
        missing = post(f"{base}/v1/edit", json=body)
        assert _error(missing, 401)["code"] == "missing_api_key"
        wrong = post(f"{base}/v1/edit", json=body, headers={"Authorization": "Bearer no"})
        assert _error(wrong, 401)["code"] == "invalid_api_key"
        ok = post(f"{base}/v1/edit", json=body, headers={"Authorization": "Bearer k2"})
        assert ok.status_code == 200 and ok.json()["status"] == "unchanged"
        assert httpx.get(f"{base}/healthz").status_code == 200  # probes need no key
        pre = httpx.options(
            f"{base}/v1/edit",
            headers={
                "Origin": "https://app.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type",
            },
        )
        assert pre.headers["access-control-allow-origin"] == "https://app.example"
        other = httpx.options(
            f"{base}/v1/edit",
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
        )
        assert "access-control-allow-origin" not in other.headers


def test_missing_index_degrades_with_the_fix_named(tmp_path, nli):
    app = create_app(_pipeline(tmp_path / "no-index", nli), ServeSettings())
    with serve(app) as base:
        ready = wait_ready(base)
        assert "not ready" in _error(ready, 503)["message"]
        r = post(f"{base}/v1/edit", json={"text": PLANTED})
        data = r.json()
        assert r.status_code == 200 and data["status"] == "degraded"
        assert data["revised"] == PLANTED
        assert "purr index" in data["warnings"][0], data["warnings"]


def test_broken_model_degrades_and_the_server_stays_up(tmp_path, built_index):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    pipeline = _pipeline(built_index, overrides=[f"attribution.model={broken}"])
    with serve(create_app(pipeline, ServeSettings(warmup=False))) as base:
        r = post(f"{base}/v1/edit", json={"text": PLANTED})
        data = r.json()
        assert r.status_code == 200 and data["status"] == "degraded", data
        assert data["revised"] == PLANTED  # models load before the stages, and say which failed
        assert data["warnings"][0].startswith("preparing failed: cannot load NLI model")
        scored = post(f"{base}/v1/score", json={"text": PLANTED, "evidence": [TOWER]})
        assert _error(scored, 500)["message"].startswith("internal error")
        assert httpx.get(f"{base}/healthz").status_code == 200


def test_check_endpoint_answers_what_the_cli_prints(url):
    text = "The Eiffel Tower is in Paris [1]. It was built in 1895 [1]. See [4]."
    r = post(f"{url}/v1/check", json={"text": text, "sources": [{"id": 1, "text": TOWER}]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [s["outcome"] for s in body["sentences"]] == [
        "supported",
        "citation_not_supporting",
        "citation_not_supporting",
    ]
    assert body["unknown_markers"] == ["4"] and body["status"] == "checked"
    assert any(  # the words the source contradicts, with offsets of the text
        f["source_id"] == "1" and text[f["start"] : f["end"]] == f["text"] and "1895" in f["text"]
        for f in body["findings"]
    ), body["findings"]
    cli = run_purr("check", text, "--source", TOWER, "--json")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout) == body  # one service, one JSON
    assert _error(post(f"{url}/v1/check", json={"text": text, "sources": []}), 422)
    bad = post(f"{url}/v1/check", json={"text": text, "sources": [{"id": 1}]})
    assert _error(bad, 422)["param"].startswith("sources")
    dup = [{"id": 1, "text": "a"}, {"id": "1", "text": "b"}]
    assert (
        "given twice"
        in _error(post(f"{url}/v1/check", json={"text": text, "sources": dup}), 422)["message"]
    )
    many = [{"id": i, "text": "a"} for i in range(65)]
    assert _error(post(f"{url}/v1/check", json={"text": text, "sources": many}), 413)


def test_edit_with_sources_repairs_citations_like_the_cli(url, tmp_path):
    sources = [
        {"id": 1, "title": "Eiffel Tower", "text": TOWER},
        {"id": 2, "title": "Mount Everest", "text": "Mount Everest is 8,849 metres high."},
    ]
    text = "The Eiffel Tower is in Paris, France [2]. It is 330 metres tall."
    r = post(f"{url}/v1/edit", json={"text": text, "sources": sources})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["revised"] == "The Eiffel Tower is in Paris, France [1]. It is 330 metres tall [1]."
    assert [c["action"] for c in body["citations"]["changes"]] == ["replaced", "added"]
    path = tmp_path / "sources.json"
    path.write_text(json.dumps(sources))
    cli = run_purr("edit", text, "--sources", str(path), "--json")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["citations"] == body["citations"]  # one service, one JSON
    both = {"text": text, "sources": sources, "evidence": [TOWER]}
    assert "either evidence or sources" in _error(post(f"{url}/v1/edit", json=both), 422)["message"]
    assert _error(post(f"{url}/v1/edit", json={"text": text, "sources": []}), 422)
    many = [{"id": i, "text": "a"} for i in range(65)]
    assert _error(post(f"{url}/v1/edit", json={"text": text, "sources": many}), 413)


def test_a_full_queue_answers_503_at_once_with_retry_after(built_index, nli):
    settings = ServeSettings(workers=1, max_queue=1, retry_after_s=7)
    with serve(create_app(_pipeline(built_index, nli), settings)) as base:
        assert wait_ready(base).status_code == 200
        body = {"text": PLANTED, "evidence": [TOWER]}
        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(lambda _: post(f"{base}/v1/edit", json=body), range(16)))
        assert httpx.get(f"{base}/healthz").status_code == 200
        metrics = httpx.get(f"{base}/metrics").text
    done = [r for r in answers if r.status_code == 200]
    busy = [r for r in answers if r.status_code == 503]
    assert len(done) + len(busy) == 16 and len(done) >= 2 and busy  # 1 running + 1 queued
    assert all(r.json()["revised"] == FIXED for r in done)
    slowest = max(r.elapsed for r in done)
    for r in busy:
        assert r.headers["retry-after"] == "7" and _error(r, 503)["code"] == "overloaded"
        assert r.elapsed < slowest  # refused at once, not after waiting its turn
    assert 'purr_edits_total{status="overloaded"}' in metrics
