"""Every malformed request gets a coded 4xx that says what to fix, on every POST endpoint of
``purr serve`` and ``purr serve-llm``, over real HTTP: bodies that are not UTF-8, nested too
deep, cut short, holding NUL bytes or sent without a JSON content type, a Content-Length that
lies in either direction, and a body that stops arriving. The server stays up after each."""

from __future__ import annotations

import json
import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest
from llm_helpers import SMOLLM, serve

from editor.config import load_config
from editor.factory import Components
from editor.llm.transformers_backend import TransformersBackend
from editor.pipeline import Pipeline
from serve.app import create_app
from serve.llm_server import create_llm_app
from serve.settings import ServeSettings

# a real HTTP server
pytestmark = pytest.mark.integration

JSON = {"content-type": "application/json"}
PURR_ENDPOINTS = ["/v1/edit", "/v1/edit/batch", "/v1/check", "/v1/score", "/v1/chat/completions"]
LLM_ENDPOINTS = ["/v1/completions", "/v1/chat/completions"]


def _nested(levels: int) -> bytes:
    return b'{"a": ' * levels + b"1" + b"}" * levels


FAULTS = {  # name: (body, headers, status, code, words of the message)
    "not UTF-8": (b'{"text": "caf\xe9"}', JSON, 400, "invalid_encoding", "byte 0xe9 at offset 13"),
    "UTF-16": ('{"text": "a"}'.encode("utf-16"), JSON, 400, "invalid_encoding", "UTF-8"),
    "5,000 levels of arrays": (b"[" * 5000 + b"]" * 5000, JSON, 400, "json_too_deep", "32 levels"),
    "40 levels of objects": (_nested(40), JSON, 400, "json_too_deep", "32 levels"),
    "cut JSON": (b'{"text": "The Eiffel', JSON, 400, "invalid_json", "line 1, column 10"),
    "raw NUL byte": (b'{"text": "a\x00b"}', JSON, 400, "nul_byte", "offset 11"),
    "no content type": (b'{"text": "a"}', {}, 415, "unsupported_media", "no Content-Type"),
    "text/plain": (b'{"text": "a"}', {"content-type": "text/plain"}, 415, "unsupported_media", ""),
    "a form": (
        b"text=a",
        {"content-type": "application/x-www-form-urlencoded"},
        415,
        "unsupported_media",
        "-H 'Content-Type: application/json'",
    ),
}


@pytest.fixture(scope="module")
def purr_url(built_index):
    # nothing loads (no warm-up): every request here is refused before a route runs
    pipeline = Pipeline(Components(load_config("default"), index_path=built_index, progress=False))
    app = create_app(pipeline, ServeSettings(warmup=False, body_timeout_s=1.0))
    with serve(app) as url:
        yield url


@pytest.fixture(scope="module")
def llm_url():
    backend = TransformersBackend(SMOLLM, max_new_tokens=4)
    with serve(create_llm_app(backend, "smollm2", preload=False)) as url:
        yield url


def _coded(r: httpx.Response, status: int, code: str) -> str:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    error = r.json()["error"]
    assert error["code"] == code, error
    return error["message"]


@pytest.mark.parametrize("fault", FAULTS)
def test_each_malformed_body_gets_its_code_on_every_endpoint(purr_url, llm_url, fault):
    body, headers, status, code, words = FAULTS[fault]
    urls = [purr_url + e for e in PURR_ENDPOINTS] + [llm_url + e for e in LLM_ENDPOINTS]
    for url in urls:
        message = _coded(httpx.post(url, content=body, headers=headers), status, code)
        assert words in message, (url, message)
    assert httpx.get(f"{purr_url}/healthz").status_code == 200


def test_a_readable_body_reaches_the_route(purr_url):
    # past the body checks, the route's own validation answers (422 for a wrong field)
    r = httpx.post(f"{purr_url}/v1/edit", json={"text": 5})
    assert r.status_code == 422 and r.json()["error"]["param"] == "text"
    four_deep = {"items": [{"text": 5, "evidence": ["b"], "options": {"deadline_s": 1}}]}
    r = httpx.post(f"{purr_url}/v1/edit/batch", content=json.dumps(four_deep), headers=JSON)
    assert r.status_code == 422 and "items.0.text" in r.json()["error"]["message"]
    r = httpx.post(
        f"{purr_url}/v1/edit", content=b'{"text": 5}', headers={"content-type": "a/b+json"}
    )
    assert r.status_code == 422  # a +json media type is JSON


def _raw(url: str, request: bytes, then=None, read_s: float = 10) -> bytes:
    """Send ``request`` on a plain socket, run ``then(sock)``, and read the answer."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=read_s) as sock:
        sock.sendall(request)
        if then:
            then(sock)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except (ConnectionResetError, TimeoutError):
            pass
        return answer


def _head(path: str, length: int) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def _status_and_code(answer: bytes) -> tuple[int, str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)["error"]["code"]


@pytest.mark.parametrize("path", ["/v1/edit", "/v1/chat/completions"])
def test_a_body_that_stops_arriving_gets_408_after_the_body_timeout(purr_url, path):
    started = time.monotonic()
    answer = _raw(purr_url, _head(path, 100) + b'{"text": "The Eif')
    took = time.monotonic() - started
    assert _status_and_code(answer) == (408, "body_timeout")
    assert b"17 of the 100 bytes" in answer
    assert 0.9 <= took < 8  # the 1 s body timeout, not a hang
    assert httpx.get(f"{purr_url}/healthz").status_code == 200


def test_a_body_cut_by_the_client_closing_its_side_gets_400(purr_url):
    answer = _raw(
        purr_url, _head("/v1/edit", 100) + b'{"text": "The', lambda s: s.shutdown(socket.SHUT_WR)
    )
    # the server answers what it got, or sees the client gone and answers nothing
    assert answer == b"" or _status_and_code(answer) == (400, "body_truncated")
    assert httpx.get(f"{purr_url}/healthz").status_code == 200


def test_a_content_length_smaller_than_the_body_reads_only_what_it_declared(purr_url):
    big = json.dumps({"text": "a" * 2_000_000}).encode()
    answer = _raw(purr_url, _head("/v1/edit", 20) + big)
    status, code = _status_and_code(answer[: answer.index(b"}}") + 2])
    assert (status, code) == (400, "invalid_json")  # the 20 declared bytes are cut JSON
    assert httpx.get(f"{purr_url}/healthz").status_code == 200


def test_a_content_length_over_the_limit_is_refused_before_the_body(purr_url):
    answer = _raw(purr_url, _head("/v1/edit", 10_000_000) + b'{"text": "a"}')
    assert _status_and_code(answer) == (413, "body_too_large")


def test_an_unknown_route_or_method_keeps_its_404_or_405_whatever_the_body(purr_url):
    bad = b'{"text": "caf\xe9"}'
    assert httpx.put(f"{purr_url}/v1/edit", content=bad).status_code == 405
    assert httpx.post(f"{purr_url}/v1/nothing", content=bad).status_code == 404
    assert httpx.post(f"{purr_url}/healthz", content=bad).status_code == 405
