"""Web research everywhere research runs, as a user runs it: ``purr research``, ``purr data
make`` from seed queries and ``purr eval edits`` (the CLI as subprocesses), and the HTTP service
and the chat wrapper (real servers), all against the loopback web."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from helpers import run_purr, wait_ready
from llm_helpers import serve, smollm
from web_helpers import create_web_app

from editor.config import load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from serve.app import create_app
from serve.llm_server import create_llm_app
from serve.settings import ServeSettings

pytestmark = pytest.mark.integration

TEXT = (
    "The Eiffel Tower is a lattice tower in Paris. It was designed and built by Thomas "
    "Edison's company from 1887 to 1889."
)


@pytest.fixture(scope="module")
def web():
    app = create_web_app()
    with serve(app) as url:
        yield url, app


def _sets(url: str) -> list[str]:
    pairs = [
        "research.source=web",
        "web.provider=searxng",
        f"web.url={url}/searxng",
        "web.allow_networks=[127.0.0.1/32]",  # its pages are on loopback
    ]
    return [x for p in [*pairs, "web.retries=0"] for x in ("--set", p)]


def test_purr_research_cites_pages_with_when_they_were_fetched(web):
    url, _ = web
    proc = run_purr("research", TEXT, "--json", *_sets(url))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    pages = [e for e in data["evidence"] if e["url"] == f"{url}/pages/eiffel"]
    assert pages and all(e["fetched_at"].endswith("+00:00") for e in pages)
    assert "Gustave Eiffel" in " ".join(e["text"] for e in pages)


def test_purr_data_make_answers_seed_queries_from_the_web(web, tmp_path):
    url, app = web
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("Who designed and built the Eiffel Tower?\nHow tall is the Eiffel Tower?\n")
    out = tmp_path / "rows.jsonl"
    sent = len(app.state.requests)
    proc = run_purr(
        "data", "make", "--seeds", str(seeds), "--out", str(out), "--n", "2", "--variants", "1",
        "--relevance", "0.3", *_sets(url),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    searched = [r for r in app.state.requests[sent:] if r[1] == "/searxng/search"]
    assert len(searched) == 2
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows, proc.stdout
    for row in rows:
        assert any("Gustave Eiffel" in e or "330 metres" in e for e in row["evidence_pos"])
        assert row["clean"] != row["corrupted"]


def test_purr_eval_edits_researches_the_web(web, tmp_path):
    url, _ = web
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"id": "r1", "text": TEXT}) + "\n")
    proc = run_purr("eval", "edits", str(data), "--out", str(tmp_path / "ev"), *_sets(url))
    assert proc.returncode == 0, proc.stderr
    [row] = [json.loads(x) for x in (tmp_path / "ev" / "results.jsonl").read_text().splitlines()]
    assert "Gustave Eiffel" in row["revised"]
    assert any(e["url"] == f"{url}/pages/eiffel" for e in row["evidence"])


def test_the_service_and_the_chat_wrapper_research_the_web(web):
    url, _ = web
    overrides = [
        "research.source=web",
        "web.provider=searxng",
        f"web.url={url}/searxng",
        "web.allow_networks=[127.0.0.1/32]",  # its pages are on loopback
    ]
    pipeline = Pipeline(Components(load_config("default", overrides), progress=False))
    with (
        serve(create_llm_app(smollm(), "smollm2")) as upstream,
        serve(create_app(pipeline, ServeSettings(upstream_url=f"{upstream}/v1"))) as purr,
    ):
        ready = wait_ready(purr, 300)  # the models load in the background first
        assert ready.status_code == 200, f"purr serve never became ready: {ready.text}"
        r = httpx.post(f"{purr}/v1/edit", json={"text": TEXT}, timeout=300)
        assert r.status_code == 200
        result = r.json()
        assert result["status"] == "edited" and "Gustave Eiffel" in result["revised"]
        assert any(
            e["url"] == f"{url}/pages/eiffel" and e["fetched_at"] for e in result["evidence"]
        )
        client = openai.OpenAI(base_url=f"{purr}/v1", api_key="unused", max_retries=0, timeout=300)
        ask = [{"role": "user", "content": "Repeat after me: The Eiffel Tower is 250 metres tall."}]
        reply = client.chat.completions.create(model="smollm2", messages=ask, max_tokens=24)
        content = reply.choices[0].message.content
        assert content.startswith("The Eiffel Tower is 330 metres tall. [1]"), content
        assert f"({url}/pages/eiffel)" in content
