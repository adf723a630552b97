"""Web research parts against a real loopback HTTP server: each provider's documented request
and response, keys sent where the provider wants them and never shown, pages fetched under
their limits (redirects, non-pages, huge, slow, 429 with Retry-After, 500), and the main text
extracted and cut into windows with offsets."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from llm_helpers import serve
from web_helpers import KEY, create_web_app

from retrieval.config import ChunkingConfig
from retrieval.netguard import NetworkPolicy
from retrieval.web.extract import PageText, extract_main_text, page_snippets
from retrieval.web.fetch import PageFetcher
from retrieval.web.providers import PROVIDERS, WebSearchError, make_provider

pytestmark = pytest.mark.integration

LOOPBACK = NetworkPolicy(["127.0.0.1/32"])  # the loopback web this file serves


@pytest.fixture(scope="module")
def web():
    app = create_web_app()
    with serve(app) as url:
        yield url, app


@pytest.mark.parametrize("name", PROVIDERS)
def test_each_provider_speaks_its_format(web, name):
    url, app = web
    provider = make_provider(name, f"{url}/{name}", None if name == "searxng" else KEY)
    results = provider.search("who built the Eiffel Tower", n=3)
    assert [r.rank for r in results] == [0, 1, 2]
    assert results[0].url == f"{url}/pages/eiffel" and results[0].title.startswith("Eiffel")
    assert "1887" in results[0].snippet and results[0].provider == name
    method, path, headers, query, body = app.state.requests[-1]
    if name == "searxng":
        assert method == "GET" and "format=json" in query
    elif name == "brave":
        assert headers["x-subscription-token"] == KEY and "count=3" in query
    elif name == "serper":
        assert method == "POST" and headers["x-api-key"] == KEY and json.loads(body)["num"] == 3
    else:
        assert headers["authorization"] == f"Bearer {KEY}" and json.loads(body)["max_results"] == 3


@pytest.mark.parametrize("name", ["brave", "serper", "tavily"])
def test_a_wrong_or_missing_key_is_a_clear_error_that_never_shows_the_key(web, name):
    url, _ = web
    with pytest.raises(WebSearchError, match="check the API key") as bad:
        make_provider(name, f"{url}/{name}", "wrong-key").search("x")
    assert bad.value.status == 401 and "wrong-key" not in str(bad.value)
    with pytest.raises(WebSearchError, match="needs an API key: set PURR_"):
        make_provider(name, f"{url}/{name}", None).search("x")


def test_the_key_is_redacted_even_when_a_server_echoes_it(web):
    url, _ = web
    provider = make_provider("brave", f"{url}/echo-key#", KEY)  # an odd URL that answers 401
    with pytest.raises(WebSearchError) as err:
        provider.search("x")
    assert KEY not in str(err.value)
    unreachable = make_provider("serper", "http://127.0.0.1:9", KEY, retries=0)
    with pytest.raises(WebSearchError, match="unreachable") as err:
        unreachable.search("x")
    assert KEY not in str(err.value)


def test_unknown_provider_names_the_choices():
    with pytest.raises(ValueError, match="searxng, brave, serper, tavily"):
        make_provider("bing")


def test_pages_are_fetched_under_their_limits(web):
    url, _ = web
    waits: list[float] = []
    fetcher = PageFetcher(
        timeout_s=1.0, max_bytes=100_000, retries=1, sleep=waits.append, policy=LOOPBACK
    )
    pages = fetcher.fetch_many(
        [
            f"{url}/pages/eiffel",
            f"{url}/redirect",
            f"{url}/file.pdf",
            f"{url}/huge",
            f"{url}/broken",
            f"{url}/loop",
            "ftp://example.org/x",
        ]
    )
    ok, moved, pdf, huge, broken, loop, ftp = pages
    assert ok.error is None and "Gustave Eiffel" in ok.body and ok.fetched_at.endswith("+00:00")
    assert moved.error is None and moved.final_url == f"{url}/pages/eiffel"
    assert pdf.body is None and "application/pdf" in pdf.error
    assert huge.truncated and len(huge.body) <= 100_000
    assert broken.body is None and broken.status == 500 and broken.error == "HTTP 500"
    assert loop.error == "more than 5 redirects"
    assert ftp.error == "not an http(s) URL"
    assert waits == [0.5]  # the 500 was retried once, after 0.5 s


def test_429_is_retried_after_retry_after_and_slow_pages_time_out(web):
    url, _ = web
    waits: list[float] = []
    fetcher = PageFetcher(timeout_s=1.0, retries=2, sleep=waits.append, policy=LOOPBACK)
    page = fetcher.fetch(f"{url}/rate")
    assert page.error is None and "Eiffel" in page.body and waits == [1.0]
    slow = PageFetcher(timeout_s=0.5, retries=0, policy=LOOPBACK).fetch(f"{url}/slow")
    assert slow.body is None and "Timeout" in slow.error


def test_main_text_is_extracted_and_cut_into_windows_with_offsets(web):
    url, _ = web
    page = PageFetcher(policy=LOOPBACK).fetch(f"{url}/pages/eiffel")
    title, text = extract_main_text(page.body, page.final_url)
    assert "330 metres" in text and "Gustave Eiffel" in text
    for boilerplate in ("Subscribe", "cookies", "Buy tickets", "Privacy policy"):
        assert boilerplate not in text
    snippets = page_snippets(
        PageText(page.final_url, title, text), ChunkingConfig(window=2, stride=2)
    )
    assert len(snippets) >= 2 and all(s.url == page.final_url for s in snippets)
    for s in snippets:  # a citation can point into the page
        assert text[s.start : s.end] == s.text
    assert len({s.doc_id for s in snippets}) == 1


def test_real_saved_pages_keep_their_article(dev_data):
    with serve(create_web_app(dev_data / "web" / "pages")) as url:
        page = httpx.get(f"{url}/pages/saved/en.wikipedia.org.tsne.html", timeout=10)
    title, text = extract_main_text(page.text)
    assert "t-distributed stochastic neighbor embedding" in text.lower()
    assert len(text) > 2000 and "Privacy policy" not in text


TEXT = (
    "The Eiffel Tower is a lattice tower in Paris. It was designed and built by Thomas "
    "Edison's company from 1887 to 1889."
)


def _components(tmp_path, name, url, key=KEY, extra=()):
    from editor.config import load_config
    from editor.factory import Components
    from retrieval.settings import Settings

    overrides = [
        "research.source=web",
        f"web.provider={name}",
        f"web.url={url}",
        "web.retries=0",
        "web.allow_networks=[127.0.0.1/32]",  # the loopback web's pages
        *extra,
    ]
    keys = {} if name == "searxng" else {f"{name}_api_key": key}
    return Components(load_config("default", overrides), Settings(**keys), progress=False)


def test_research_then_edit_on_the_web_with_page_urls_in_the_citations(web, tmp_path):
    """The README's passage: edited with research.source=web; every provider format researched."""
    from editor.pipeline import Pipeline

    url, _ = web
    result = Pipeline(_components(tmp_path, "searxng", f"{url}/searxng")).edit(TEXT)
    assert result.status == "edited", result.warnings
    assert "Gustave Eiffel" in result.revised and "Edison" not in result.revised
    assert f"{url}/pages/eiffel" in {e.url for e in result.evidence}
    assert all(e.source.startswith("web") for e in result.evidence)
    # a page's evidence says when the page was fetched; a provider's snippet was not fetched
    pages = [e for e in result.evidence if e.source == "web:searxng"]
    assert pages and all(e.fetched_at and e.fetched_at.endswith("+00:00") for e in pages)
    assert all(e.fetched_at is None for e in result.evidence if e.source == "web-snippet")
    assert result.to_json()["evidence"][0].keys() >= {"url", "fetched_at"}
    web_ms = [result.timings_ms[k] for k in ("web_search", "web_fetch", "web_extract")]
    assert all(ms > 0 for ms in web_ms) and sum(web_ms) <= result.timings_ms["research"]
    for name in ("brave", "serper", "tavily"):
        comp = _components(tmp_path, name, f"{url}/{name}")
        found = comp.researcher.research(TEXT)
        urls = {e.url for qe in found for e in qe.evidence}
        assert f"{url}/pages/eiffel" in urls, (name, urls)
        # the broken page and the PDF fell back to the provider's snippet, and say so
        assert any("HTTP 500" in f for f in comp.web.failures), comp.web.failures


def test_a_provider_that_is_down_degrades_and_never_leaks_the_key(tmp_path):
    from editor.pipeline import Pipeline

    result = Pipeline(_components(tmp_path, "serper", "http://127.0.0.1:9")).edit(TEXT)
    assert result.status == "degraded" and result.revised == TEXT
    assert "research failed" in result.warnings[0] and "unreachable" in result.warnings[0]
    assert KEY not in json.dumps(result.to_json())


TIME = r'"fetched_at": "[^"]+"'


def _research_json(comp) -> str:
    found = comp.researcher.research(TEXT)
    return json.dumps(
        [[q.query.text, [e.__dict__ for e in q.evidence]] for q in found], sort_keys=True
    )


def test_a_read_only_cache_replays_research_byte_for_byte_without_a_request(web, tmp_path):
    url, app = web
    cache = tmp_path / "web-cache"
    extra = [f"web.cache_dir={cache}"]
    first = _research_json(_components(tmp_path, "tavily", f"{url}/tavily", extra=extra))
    assert any(cache.rglob("*.json"))
    sent = len(app.state.requests)
    ro = _components(tmp_path, "tavily", f"{url}/tavily", extra=[*extra, "web.cache_mode=ro"])
    assert _research_json(ro) == first
    assert len(app.state.requests) == sent  # not one request
    # the whole edit too, warnings of the pages that failed included
    from editor.pipeline import Pipeline

    def edited(comp) -> str:
        data = Pipeline(comp).edit(TEXT).to_json()
        data.pop("timings_ms")
        return json.dumps(data, sort_keys=True)

    rw = edited(_components(tmp_path, "tavily", f"{url}/tavily", extra=extra))
    sent = len(app.state.requests)
    replay = edited(
        _components(tmp_path, "tavily", f"{url}/tavily", extra=[*extra, "web.cache_mode=ro"])
    )
    assert replay == rw and "HTTP 500" in replay and len(app.state.requests) == sent
    assert ro.web.provider.cache.hits > 0
    # refresh asks again and keeps the answers
    fresh = _components(
        tmp_path, "tavily", f"{url}/tavily", extra=[*extra, "web.cache_mode=refresh"]
    )
    again = _research_json(fresh)  # the same evidence, fetched anew
    assert re.sub(TIME, "", again) == re.sub(TIME, "", first) and len(app.state.requests) > sent
    # a query the read-only cache lacks: no request, a warning, research goes on
    empty = tmp_path / "empty"
    empty.mkdir()
    miss = _components(
        tmp_path, "tavily", f"{url}/tavily", extra=[f"web.cache_dir={empty}", "web.cache_mode=ro"]
    )
    sent = len(app.state.requests)
    assert miss.researcher.research(TEXT) is not None
    assert len(app.state.requests) == sent
    assert any("read-only web cache" in f for f in miss.web.drain_failures())


def test_a_spent_budget_degrades_to_the_evidence_found_with_a_warning(web, tmp_path):
    from editor.pipeline import Pipeline

    url, app = web
    comp = _components(tmp_path, "serper", f"{url}/serper", extra=["web.max_requests=1"])
    before = sum(1 for r in app.state.requests if r[1] == "/serper/search")
    result = Pipeline(comp).edit(TEXT)
    searches = sum(1 for r in app.state.requests if r[1] == "/serper/search") - before
    assert searches == 1 and result.status in {"edited", "unchanged"}
    assert any("budget of 1 requests per run is spent" in w for w in result.warnings)
    assert result.evidence  # what the one search found is used


def test_bench_web_reports_stages_and_every_fault_keeps_the_text(tmp_path):
    """``purr bench web`` end to end (its figures are not asserted: only what it reports)."""
    from serve.bench.web import bench_web, plot

    pages = tmp_path / "pages"  # two saved pages of its own, whether or not the dev data is here
    pages.mkdir()
    for name, subject in (
        ("a.example.bridges.html", "bridges"),
        ("b.example.rivers.html", "rivers"),
    ):
        body = " ".join(f"<p>Paragraph {i} of a saved page about {subject}.</p>" for i in range(20))
        (pages / name).write_text(
            f"<html><head><title>{subject}</title></head><body>{body}</body></html>"
        )
    report = bench_web(
        [1, 4],
        runs=1,
        saved_results=2,
        pages=pages,
        search_delay_ms=0,
        page_delay_ms=50,
        index_baseline=False,
        fault_timeout_s=1.0,
    )
    assert report["saved_pages"] == 2
    for row in report["concurrency"].values():
        assert row["status"] == "edited" and "Gustave Eiffel" in row["revised"]
        # the article and the two saved pages
        assert row["pages_fetched"] >= 3 and all(
            row["stages_ms_p50"][s] > 0 for s in ("web_search", "web_fetch", "research")
        )
    assert report["concurrency"]["1"]["ratio_to_first"] == 1.0
    faults = report["faults"]
    assert all(f["text_whole"] for f in faults.values())
    for name in ("provider down", "provider slow", "provider HTTP 500"):
        assert (
            faults[name]["status"] == "degraded"
            and "research failed" in faults[name]["warnings"][0]
        )
    assert "did not answer within 1 s" in faults["provider slow"]["warnings"][0]
    assert faults["provider HTTP 500"]["http_statuses"] == {"500": 4}  # 2 queries, 1 retry each
    assert faults["provider 429 + Retry-After"]["http_statuses"]["429"] >= 1
    assert faults["provider 429 + Retry-After"]["status"] == "edited"
    assert any("budget" in w for w in faults["out of budget"]["warnings"])
    assert any("timed out" in w for w in faults["pages time out"]["warnings"])
    plot(report, tmp_path / "bench_web.png")
    assert (tmp_path / "bench_web.png").stat().st_size > 10_000


def test_the_pages_kept_in_memory_are_bounded_least_recent_first(monkeypatch):
    """A long-running service keeps at most MAX_PAGES pages; one asked for again stays."""
    from retrieval.web import retriever as web_retriever
    from retrieval.web.providers import Features, WebResult
    from retrieval.web.retriever import WebRetriever

    class Listed:  # a provider whose answers are given: one page per query
        name, features = "listed", Features()

        def search(self, query, n=10, site=None, recency_days=None, language=None):
            return [WebResult(f"https://e.org/{query}", query, f"{query} text.", 0, "listed")]

    monkeypatch.setattr(web_retriever, "MAX_PAGES", 2)
    web = WebRetriever(Listed(), None, search_concurrency=1)
    for q in ("a", "b", "a", "c"):
        assert web.search(q)[0].snippet.url == f"https://e.org/{q}"
    assert [s[0].url for s in web._pages.values()] == ["https://e.org/a", "https://e.org/c"]


def test_concurrent_researches_each_get_their_own_web_warnings():
    """Two edits on one service share the web retriever; each result lists its own pages."""
    import threading

    from retrieval.web.providers import Features, WebResult
    from retrieval.web.retriever import WebRetriever

    class Listed:
        name, features = "listed", Features()

        def search(self, query, n=10, site=None, recency_days=None, language=None):
            return [WebResult(f"https://e.org/{query}", query, f"{query} text.", 0, "listed")]

    web = WebRetriever(Listed(), None, search_concurrency=1)  # no fetching: each page falls back
    web.search("a")
    other: list[list[str]] = []

    def research_b() -> None:
        web.search("b")
        other.append(web.drain_failures())

    thread = threading.Thread(target=research_b)
    thread.start()
    thread.join()
    [theirs] = other
    mine = web.drain_failures()
    assert len(mine) == 1 and mine[0].startswith("https://e.org/a:")
    assert len(theirs) == 1 and theirs[0].startswith("https://e.org/b:")
    assert set(web.drain_timings()) == {"web_search", "web_extract"}


def test_searxng_engines_that_did_not_answer_become_a_warning_replayed_by_the_cache(tmp_path):
    """SearXNG answers even when some of its engines were blocked: the result says so."""
    from editor.pipeline import Pipeline

    app = create_web_app(unresponsive_engines=(("google", "too many requests"),))
    cache = tmp_path / "cache"
    with serve(app) as url:
        extra = [f"web.cache_dir={cache}"]
        first = Pipeline(_components(tmp_path, "searxng", f"{url}/searxng", extra=extra)).edit(TEXT)
        ro = [*extra, "web.cache_mode=ro"]
        again = Pipeline(_components(tmp_path, "searxng", f"{url}/searxng", extra=ro)).edit(TEXT)
    notes = [w for w in first.warnings if "did not answer" in w]
    assert (
        notes and "google (too many requests)" in notes[0] and notes[0].startswith("web: searxng:")
    )
    assert first.status == "edited" and again.warnings == first.warnings
