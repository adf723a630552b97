"""``purr mcp`` as an agent meets it: a subprocess over stdio, then over streamable HTTP, driven by
the official MCP SDK's own client. The tools and their schemas, the Eiffel fix with progress,
a wrong answer checked against its document (the finding and its suggestion), a right one
(unchanged, with its citation), research, a call the client cancels, six kinds of bad input
(each a tool error with the HTTP API's code, and the server answering after them), and a call
without the key refused."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from llm_helpers import free_port
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.integration

EIFFEL = (
    "The Eiffel Tower is a lattice tower in Paris. It was designed and built by Thomas Edison's "
    "company from 1887 to 1889."
)
KETTLE_DOC = (
    "The Brightline kettle boils 1.7 litres in four minutes. It comes with a two-year warranty "
    "and a limescale filter."
)
QUESTION = "How long is the Brightline kettle's warranty?"
WRONG = "The Brightline kettle comes with a one-year warranty."
RIGHT = "The Brightline kettle comes with a two-year warranty."
TOOLS = {"edit_answer", "check_answer", "research", "check_citations"}
BAD = [  # (arguments of edit_answer, the code the HTTP API gives the same mistake)
    ({"text": "   "}, "invalid_request"),
    ({"text": "word " * 5000}, "input_too_large"),
    ({"text": WRONG, "documents": [{"text": KETTLE_DOC}] * 65}, "too_much_evidence"),
    ({"text": 42}, "invalid_request"),
    ({"text": WRONG, "tone": "formal"}, "invalid_request"),
    ({"text": WRONG, "documents": [{"text": KETTLE_DOC, "page": 3}]}, "invalid_request"),
]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PURR_API_KEYS",)}


async def _session(client: Client) -> None:
    """What every transport must do, in one session."""
    listed = {t.name: t for t in (await client.list_tools()).tools}
    assert set(listed) == TOOLS
    for tool in listed.values():
        assert tool.description and tool.output_schema, tool.name
        assert tool.input_schema.get("additionalProperties") is False, tool.name
    edit_props = listed["edit_answer"].input_schema["properties"]
    assert {"text", "question", "documents", "apply_unsure"} == set(edit_props)
    assert {"revised", "diff", "changes", "findings", "citations", "scores"} <= set(
        listed["edit_answer"].output_schema["properties"]
    )

    stages: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        stages.append(message)

    fixed = await client.call_tool("edit_answer", {"text": EIFFEL}, progress_callback=on_progress)
    assert not fixed.is_error, fixed.content
    out = fixed.structured_content
    assert out["status"] == "edited" and "Gustave Eiffel's company" in out["revised"]
    assert "[-Thomas Edison's-]{+Gustave Eiffel's+}" in out["diff"]
    (change,) = out["changes"]
    assert EIFFEL[change["start"] : change["end"]] == change["old"] == "Thomas Edison's"
    assert out["scores"]["attribution_after"] > out["scores"]["attribution_before"]
    assert out["warnings"] == []
    assert {"research", "revision", "report", "done"} <= set(stages), stages

    docs = [{"text": KETTLE_DOC, "title": "Brightline manual"}]
    checked = await client.call_tool(
        "check_answer", {"text": WRONG, "question": QUESTION, "documents": docs}
    )
    assert not checked.is_error, checked.content
    verdict = checked.structured_content
    assert verdict["text"] == WRONG  # a check changes nothing
    (sentence,) = verdict["sentences"]
    assert sentence["verdict"] == "contradicted" and sentence["document"] == 0
    finding = verdict["findings"][0]
    assert WRONG[finding["start"] : finding["end"]] == finding["text"]
    assert "one" in finding["text"] and "two" in (finding["fix"] or finding["suggestion"])
    assert verdict["citations"] == []  # nothing wrong is cited as supported

    right = await client.call_tool(
        "edit_answer", {"text": RIGHT, "question": QUESTION, "documents": docs}
    )
    ok = right.structured_content
    assert ok["status"] == "unchanged" and ok["revised"] == RIGHT and ok["changes"] == []
    assert [c["document"] for c in ok["citations"]] == [0]

    found = await client.call_tool("research", {"query": "Who designed the Eiffel Tower?", "k": 2})
    snippets = found.structured_content["snippets"]
    assert 1 <= len(snippets) <= 2 and any("Eiffel" in s["text"] for s in snippets)

    with pytest.raises(MCPError):  # the client gives up: a timeout sends notifications/cancelled
        await client.call_tool("edit_answer", {"text": EIFFEL * 3}, read_timeout_seconds=0.05)
    for arguments, code in BAD:
        bad = await client.call_tool("edit_answer", arguments)
        assert bad.is_error, arguments
        assert bad.structured_content["error"]["code"] == code, bad.content
        assert bad.content[0].text.startswith(f"{code}: ")
    again = await client.call_tool(
        "check_answer", {"text": RIGHT, "question": QUESTION, "documents": docs}
    )
    assert not again.is_error, again.content  # the server answers after the bad calls
    kept = again.structured_content
    assert kept["status"] == "checked" and kept["text"] == RIGHT and kept["findings"] == []
    assert [s["verdict"] for s in kept["sentences"]] == ["supported"]
    assert [c["document"] for c in kept["citations"]] == [0]


def test_purr_mcp_over_stdio(built_index):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "serve.cli", "mcp", "--index", str(built_index)],
        env=_env(),
        cwd=str(Path(__file__).resolve().parents[2]),
    )

    async def run() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            await _session(client)

    anyio.run(run)


def _http_client(url: str, key: str | None, statuses: list[int]) -> Client:
    async def seen(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    http = httpx2.AsyncClient(
        headers=headers, timeout=httpx2.Timeout(30, read=300), event_hooks={"response": [seen]}
    )
    return Client(streamable_http_client(url, http_client=http), read_timeout_seconds=300)


def test_purr_mcp_over_streamable_http_with_keys(built_index):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "serve.cli", "mcp", "--index", str(built_index), "--http",
         f"127.0.0.1:{port}"],
        env={**_env(), "PURR_API_KEYS": "sk-agent"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                refused = httpx.post(url, json={}, timeout=5)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "purr mcp --http did not start"
                time.sleep(0.3)
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "missing_api_key"

        async def run() -> None:
            statuses: list[int] = []
            async with _http_client(url, "sk-agent", statuses) as client:
                await _session(client)
            wrong: list[int] = []
            refused_in_session = False
            try:
                async with _http_client(url, "sk-wrong", wrong) as client:
                    await client.list_tools()
            except* MCPError:  # the SDK's client wraps the 401 in its task group
                refused_in_session = True
            assert refused_in_session and 401 in wrong

        anyio.run(run)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
