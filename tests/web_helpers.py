"""A loopback web for the web-research tests: one real HTTP server that answers each search
provider's documented request with its documented response shape, and serves pages (real saved
articles when ``../shared/data/web/pages`` is there, an article of its own otherwise), a redirect,
a PDF, a slow page, a 429 with ``Retry-After``, a 500 and a huge page. It records every request
so tests can count them and check the keys they carried."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse

PAGES = Path(__file__).resolve().parents[2] / "shared" / "data" / "web" / "pages"
KEY = "sk-test-5ecret-KEY-0123456789"

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


def _result_pages(base: str) -> list[tuple[str, str, str]]:
    """(url, title, snippet) of the results every provider returns."""
    return [
        (
            f"{base}/pages/eiffel",
            "Eiffel Tower - Encyclopedia",
            "The Eiffel Tower is a wrought-iron lattice tower in Paris, built 1887 to 1889.",
        ),
        (f"{base}/redirect", "Eiffel Tower (moved)", "The tower was designed by Gustave Eiffel."),
        (f"{base}/broken", "A page that errors", "Gustave Eiffel's company built the tower."),
        (f"{base}/file.pdf", "Tower brochure (PDF)", "A brochure about the tower."),
    ]


def create_web_app() -> FastAPI:
    app = FastAPI()
    app.state.requests = []  # (method, path, headers, query or body)
    app.state.rate_hits = 0

    def base(request: Request) -> str:
        return str(request.base_url).rstrip("/")

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
        return await call_next(request)

    def unauthorised(provider: str) -> JSONResponse:
        return JSONResponse({"error": f"{provider}: invalid key"}, status_code=401)

    @app.get("/searxng/search")
    async def searxng(request: Request, q: str, format: str = "html") -> Any:
        if format != "json":
            return HTMLResponse("<html>results</html>")
        rows = [
            {"url": u, "title": t, "content": s, "engine": "duckduckgo", "score": 1.0}
            for u, t, s in _result_pages(base(request))
        ]
        return {"query": q, "number_of_results": len(rows), "results": rows}

    @app.get("/brave/res/v1/web/search")
    async def brave(request: Request, q: str, count: int = 20) -> Any:
        if request.headers.get("x-subscription-token") != KEY:
            return unauthorised("brave")
        rows = [
            {"title": t, "url": u, "description": s, "page_age": "2024-05-01T00:00:00"}
            for u, t, s in _result_pages(base(request))[:count]
        ]
        return {
            "type": "search",
            "query": {"original": q},
            "web": {"type": "search", "results": rows},
        }

    @app.post("/serper/search")
    async def serper(request: Request) -> Any:
        if request.headers.get("x-api-key") != KEY:
            return unauthorised("serper")
        body = await request.json()
        rows = [
            {"title": t, "link": u, "snippet": s, "position": i + 1}
            for i, (u, t, s) in enumerate(_result_pages(base(request))[: body.get("num", 10)])
        ]
        return {"searchParameters": {"q": body["q"]}, "organic": rows}

    @app.post("/tavily/search")
    async def tavily(request: Request) -> Any:
        if request.headers.get("authorization") != f"Bearer {KEY}":
            return unauthorised("tavily")
        body = await request.json()
        rows = [
            {"title": t, "url": u, "content": s, "score": 0.9 - i / 10}
            for i, (u, t, s) in enumerate(
                _result_pages(base(request))[: body.get("max_results", 5)]
            )
        ]
        return {"query": body["query"], "results": rows, "response_time": 0.1}

    @app.get("/echo-key")
    async def echo_key(request: Request) -> Any:  # a provider that puts the key in its error
        return JSONResponse({"error": f"bad key {KEY}"}, status_code=401)

    @app.get("/pages/eiffel")
    async def eiffel() -> Any:
        return HTMLResponse(ARTICLE)

    @app.get("/pages/saved/{name}")
    async def saved(name: str) -> Any:
        path = PAGES / name
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
