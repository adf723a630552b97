"""A loopback web: one real HTTP server that answers each search provider's documented request
(SearXNG, Brave, Serper, Tavily) with its documented response shape, and serves pages (real saved
articles from a folder, and an article of its own), a redirect, a PDF, a slow page, a 429 with
``Retry-After``, a 500 and a huge page. It records every request and the status it answered, so
callers can count them and check the keys they carried.

``purr bench web`` measures web-backed edits against it (``search_delay_s`` and
``page_delay_s`` stand in for the network; ``search_status`` makes the provider fail), and the
web-research tests run against it.
"""

from __future__ import annotations

import asyncio
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse

PAGES = Path(__file__).resolve().parents[2] / "shared" / "data" / "web" / "pages"
"""The saved real pages (``shared/data/web/pages``), when they are there."""

ARTICLE = """<html><head><title>Eiffel Tower - Encyclopedia</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a> | Subscribe to our newsletter</nav>
<div class="cookie">We use cookies. Accept all cookies?</div>
<article><h1>Eiffel Tower</h1>
<p>The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is
named after the engineer Gustave Eiffel, whose company designed and built the tower from 1887 to
1889.</p>
<p>It was the centrepiece of the 1889 World's Fair. The tower is 330 metres tall, about the same
height as an 81-storey building, and was the tallest man-made structure in the world until the
Chrysler Building in New York City was finished in 1930.</p>
<p>The tower has three levels for visitors, with restaurants on the first and second levels. The
top level's upper platform is 276 metres above the ground.</p>
</article>
<aside>Related: Top 10 hotels in Paris. Buy tickets now!</aside>
<footer>Copyright 2026 Example Media. Privacy policy. Terms of use.</footer>
</body></html>"""


def _result_pages(
    base: str, query: str = "", saved: int = 0, pages: Path = PAGES, faulty: bool = True
):
    """(url, title, snippet) of the results every provider returns: the article, a redirect to
    it, a 500 and a PDF (without ``faulty``: the article only); then ``saved`` of the saved
    real pages, picked by the query."""
    names = sorted(p.name for p in pages.glob("*.html")) if saved and pages.is_dir() else []
    start = zlib.crc32(query.encode("utf-8"))
    extra = [
        (f"{base}/pages/saved/{names[(start + 7 * i) % len(names)]}", f"Saved page {i}", query)
        for i in range(min(saved, len(names)))
    ]
    article = (
        f"{base}/pages/eiffel",
        "Eiffel Tower - Encyclopedia",
        "The Eiffel Tower is a wrought-iron lattice tower in Paris, built 1887 to 1889.",
    )
    if not faulty:
        return [article, *extra]
    return [
        (
            f"{base}/pages/eiffel",
            "Eiffel Tower - Encyclopedia",
            "The Eiffel Tower is a wrought-iron lattice tower in Paris, built 1887 to 1889.",
        ),
        (f"{base}/redirect", "Eiffel Tower (moved)", "The tower was designed by Gustave Eiffel."),
        (f"{base}/broken", "A page that errors", "Gustave Eiffel's company built the tower."),
        (f"{base}/file.pdf", "Tower brochure (PDF)", "A brochure about the tower."),
        *extra,
    ]


def create_web_app(
    key: str,
    pages: Path = PAGES,
    *,
    saved_results: int = 0,
    search_delay_s: float = 0.0,
    page_delay_s: float = 0.0,
    search_status: int | None = None,
    faulty_results: bool = True,
    unresponsive_engines: tuple[tuple[str, str], ...] = (),
) -> FastAPI:
    """The loopback web. ``key``: what the hosted providers accept; ``saved_results``: saved
    pages added to each result list; ``search_delay_s`` / ``page_delay_s``: time before each
    search answer / page; ``search_status``: 500 (every search fails) or 429 (a query's first
    request, with ``Retry-After: 1``); ``faulty_results``: the redirect, the 500 and the PDF among the
    results; ``unresponsive_engines``: the (engine, reason) pairs SearXNG reports."""
    app = FastAPI()
    app.state.requests = []  # (method, path, headers, query or body)
    app.state.statuses = []  # (path, status)
    app.state.rate_hits = 0
    app.state.search_hits = 0
    app.state.limited = set()  # queries already answered 429 once

    def base(request: Request) -> str:
        return str(request.base_url).rstrip("/")

    def results(request: Request, query: str) -> list[tuple[str, str, str]]:
        return _result_pages(base(request), query, saved_results, pages, faulty_results)

    async def search_fault(query: str) -> Response | None:
        app.state.search_hits += 1
        first = query not in app.state.limited  # decided before other requests arrive
        app.state.limited.add(query)
        await asyncio.sleep(search_delay_s)
        if search_status == 500:
            return PlainTextResponse("search backend error", status_code=500)
        if search_status == 429 and first:
            return PlainTextResponse("slow down", status_code=429, headers={"Retry-After": "1"})
        return None

    @app.middleware("http")
    async def record(request: Request, call_next):
        body = await request.body()
        app.state.requests.append(
            (
                request.method,
                request.url.path,
                dict(request.headers),
                str(request.url.query),
                body.decode("utf-8", "replace"),
            )
        )
        if request.url.path.startswith("/pages/"):
            await asyncio.sleep(page_delay_s)
        response = await call_next(request)
        app.state.statuses.append((request.url.path, response.status_code))
        return response

    def unauthorised(provider: str) -> JSONResponse:
        return JSONResponse({"error": f"{provider}: invalid key"}, status_code=401)

    @app.get("/searxng/search")
    async def searxng(request: Request, q: str, format: str = "html") -> Any:
        if fault := await search_fault(q):
            return fault
        if format != "json":
            return HTMLResponse("<html>results</html>")
        rows = [
            {"url": u, "title": t, "content": s, "engine": "duckduckgo", "score": 1.0}
            for u, t, s in results(request, q)
        ]
        return {
            "query": q,
            "number_of_results": len(rows),
            "results": rows,
            "unresponsive_engines": [list(e) for e in unresponsive_engines],
        }

    @app.get("/brave/res/v1/web/search")
    async def brave(request: Request, q: str, count: int = 20) -> Any:
        if request.headers.get("x-subscription-token") != key:
            return unauthorised("brave")
        if fault := await search_fault(q):
            return fault
        rows = [
            {"title": t, "url": u, "description": s, "page_age": "2024-05-01T00:00:00"}
            for u, t, s in results(request, q)[:count]
        ]
        return {
            "type": "search",
            "query": {"original": q},
            "web": {"type": "search", "results": rows},
        }

    @app.post("/serper/search")
    async def serper(request: Request) -> Any:
        if request.headers.get("x-api-key") != key:
            return unauthorised("serper")
        body = await request.json()
        if fault := await search_fault(body.get("q", "")):
            return fault
        rows = [
            {"title": t, "link": u, "snippet": s, "position": i + 1}
            for i, (u, t, s) in enumerate(results(request, body["q"])[: body.get("num", 10)])
        ]
        return {"searchParameters": {"q": body["q"]}, "organic": rows}

    @app.post("/tavily/search")
    async def tavily(request: Request) -> Any:
        if request.headers.get("authorization") != f"Bearer {key}":
            return unauthorised("tavily")
        body = await request.json()
        if fault := await search_fault(body.get("query", "")):
            return fault
        rows = [
            {"title": t, "url": u, "content": s, "score": 0.9 - i / 10}
            for i, (u, t, s) in enumerate(
                results(request, body["query"])[: body.get("max_results", 5)]
            )
        ]
        return {"query": body["query"], "results": rows, "response_time": 0.1}

    @app.get("/echo-key")
    async def echo_key(request: Request) -> Any:  # a provider that puts the key in its error
        return JSONResponse({"error": f"bad key {key}"}, status_code=401)

    @app.get("/pages/eiffel")
    async def eiffel() -> Any:
        return HTMLResponse(ARTICLE)

    @app.get("/pages/saved/{name}")
    async def saved(name: str) -> Any:
        path = pages / name
        if not path.is_file():
            return PlainTextResponse("not found", status_code=404)
        return HTMLResponse(path.read_bytes().decode("utf-8", "replace"))

    @app.get("/redirect")
    async def redirect() -> Any:
        return RedirectResponse("/pages/eiffel", status_code=302)

    @app.get("/loop")
    async def loop() -> Any:
        return RedirectResponse("/loop", status_code=302)

    @app.get("/broken")
    async def broken() -> Any:
        return PlainTextResponse("server error", status_code=500)

    @app.get("/rate")
    async def rate() -> Any:
        app.state.rate_hits += 1
        if app.state.rate_hits % 2:
            return PlainTextResponse("slow down", status_code=429, headers={"Retry-After": "1"})
        return HTMLResponse(ARTICLE)

    @app.get("/slow")
    async def slow() -> Any:
        await asyncio.sleep(3)
        return HTMLResponse(ARTICLE)

    @app.get("/huge")
    async def huge() -> Any:
        return HTMLResponse("<html><body>" + "<p>filler text</p>" * 300_000 + "</body></html>")

    @app.get("/file.pdf")
    async def pdf() -> Any:
        return Response(b"%PDF-1.4 not a page", media_type="application/pdf")

    return app


def free_port(host: str = "127.0.0.1") -> int:
    """A loopback port nothing listens on now."""
    import socket

    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


@contextmanager
def serve_app(app: FastAPI, host: str = "127.0.0.1") -> Iterator[str]:
    """Run ``app`` with uvicorn on a free port of ``host`` (a loopback address: 127.0.0.2 is
    another host on the same machine) in a background thread; yields its URL."""
    import uvicorn

    port = free_port(host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the loopback web did not start on port {port}")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
