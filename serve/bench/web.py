"""``purr bench web``: latency of a web-backed ``purr edit`` by stage, and how it degrades.

Against the loopback web (``serve.loopback_web``: a real HTTP server speaking SearXNG's JSON
API, serving the saved real pages of ``shared/data/web/pages`` and an article of its own, a
redirect, a PDF and a 500), with ``--search-delay-ms`` before each search answer and
``--page-delay-ms`` before each page to stand in for the network. The passage is the README's.

1. **Concurrency.** Each search answers the article and ``--results`` saved pages (picked by
   the query). For each ``--concurrency`` value (``web.concurrency`` and ``web.per_host``:
   every page lives on one host here), ``--runs`` edits after a warm-up, each with the pages
   forgotten so they are fetched again: the median of ``timings_ms`` by stage (``web_search``,
   ``web_fetch``, ``web_extract`` inside ``research``; ``research``, ``revision``, ``report``)
   and the ratio of each median total to the first value's and to the same edit researched in
   the local index (``research.source=index``, same models, same run).
2. **Faults**, one edit each (results now include the redirect, the 500 and the PDF): the
   provider down (a closed port), slow (its answer later than
   ``web.timeout_s``), failing (HTTP 500), rate-limiting (429 with ``Retry-After: 1`` on every
   other request), out of budget (``web.max_requests=1``), pages that fail and pages that
   time out. For each:
   the status, the warnings, whether the text came back whole when not edited, the HTTP status
   codes the loopback web answered, and the wall time.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from serve.bench.cold_start import DEFAULT_TEXT
from training.args import option, switch
from training.bench.base import Benchmark, config_flags, out_flag, save_report

STAGES = ("web_search", "web_fetch", "web_extract", "research", "revision", "report")


def _pipeline(url: str, config: str, overrides: list[str], extra: list[str], shared=None):
    """A pipeline researching the web at ``url``; with ``shared``, that pipeline's models."""
    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline

    sets = [
        "research.source=web",
        "web.provider=searxng",
        f"web.url={url}",
        "web.allow_networks=[127.0.0.1/32]",  # the loopback web's pages
        *overrides,
        *extra,
    ]
    comp = Components(load_config(config, sets), progress=False)
    if shared is None:
        return Pipeline(comp)
    for name in ("reranker", "attribution", "llm", "querygen"):  # loaded once per run
        if name in shared.components.__dict__:
            comp.__dict__[name] = shared.components.__dict__[name]
    return Pipeline(comp, editor=shared.editor, attribution=shared.attribution)


def _one(pipeline, text: str) -> tuple[Any, float]:
    web = pipeline.components.web
    if web is not None:
        web.forget_pages()
    t = time.perf_counter()
    result = pipeline.edit(text)
    return result, (time.perf_counter() - t) * 1000


def bench_web(
    concurrency: list[int],
    runs: int = 3,
    text: str = DEFAULT_TEXT,
    saved_results: int = 6,
    search_delay_ms: float = 150,
    page_delay_ms: float = 300,
    config: str = "default",
    overrides: list[str] | None = None,
    pages: Path | None = None,
    faults: bool = True,
    index_baseline: bool = True,
    fault_timeout_s: float = 2.0,
) -> dict[str, Any]:
    from tqdm.auto import tqdm

    from serve.loopback_web import PAGES, create_web_app, serve_app

    overrides = list(overrides or [])
    pages = pages or PAGES
    web_args = dict(
        saved_results=saved_results,
        search_delay_s=search_delay_ms / 1000,
        page_delay_s=page_delay_ms / 1000,
    )
    app = create_web_app("unused", pages, faulty_results=False, **web_args)
    report: dict[str, Any] = {
        "text": text,
        "saved_pages": sum(1 for _ in pages.glob("*.html")) if pages.is_dir() else 0,
        "results_per_search": 1 + saved_results,
        "search_delay_ms": search_delay_ms,
        "page_delay_ms": page_delay_ms,
        "runs": runs,
        "concurrency": {},
    }
    shared = None  # the models load once, for every pipeline of the run
    with serve_app(app) as base:
        for c in tqdm(concurrency, desc="bench web", unit="setting"):
            extra = [
                f"web.concurrency={c}",
                f"web.per_host={c}",
                f"web.results={1 + saved_results}",
            ]
            pipeline = _pipeline(f"{base}/searxng", config, overrides, extra, shared)
            first, first_ms = _one(pipeline, text)  # warm-up (loads the models once)
            shared = shared or pipeline
            rows = []
            for _ in range(runs):
                before = len(app.state.statuses)
                result, ms = _one(pipeline, text)
                pages_fetched = sum(p.startswith("/pages/") for p, _ in app.state.statuses[before:])
                rows.append((result, ms, pages_fetched))
            med = {
                s: round(statistics.median(r.timings_ms.get(s, 0.0) for r, _, _ in rows), 1)
                for s in STAGES
            }
            report["concurrency"][str(c)] = {
                "total_ms_p50": round(statistics.median(ms for _, ms, _ in rows), 1),
                "total_ms_min": round(min(ms for _, ms, _ in rows), 1),
                "total_ms_max": round(max(ms for _, ms, _ in rows), 1),
                "stages_ms_p50": med,
                "pages_fetched": rows[-1][2],
                "queries": len(rows[-1][0].queries),
                "status": rows[-1][0].status,
                "revised": rows[-1][0].revised,
                "warm_up_ms": round(first_ms, 1),
                "warm_up_status": first.status,
            }
        base_ms = report["concurrency"][str(concurrency[0])]["total_ms_p50"]
        for row in report["concurrency"].values():
            row["ratio_to_first"] = round(row["total_ms_p50"] / base_ms, 3) if base_ms else None
    if index_baseline:
        report["index_baseline"] = _index_baseline(text, config, overrides, runs, shared)
        local = report["index_baseline"]["total_ms_p50"]
        for row in report["concurrency"].values():
            row["ratio_to_index"] = round(row["total_ms_p50"] / local, 3) if local else None
    if faults:
        report["faults"] = _faults(
            text, config, overrides, pages, web_args, shared, fault_timeout_s
        )
    return report


def _index_baseline(text, config, overrides, runs, shared) -> dict[str, Any]:
    """The same edit researched in the local index (``research.source=index``), same models."""
    pipeline = _pipeline("http://127.0.0.1:9", config, overrides, ["research.source=index"], shared)
    _one(pipeline, text)  # warm-up: opens the index
    rows = [_one(pipeline, text) for _ in range(runs)]
    return {
        "total_ms_p50": round(statistics.median(ms for _, ms in rows), 1),
        "stages_ms_p50": {
            s: round(statistics.median(r.timings_ms.get(s, 0.0) for r, _ in rows), 1)
            for s in ("research", "revision", "report")
        },
        "status": rows[-1][0].status,
        "revised": rows[-1][0].revised,
    }


def _faults(text, config, overrides, pages, web_args, shared, timeout_s) -> dict[str, Any]:
    """One edit per fault; ``timeout_s`` is ``web.timeout_s``, and "slow" is twice that."""
    from serve.loopback_web import create_web_app, serve_app

    quick = ["web.retries=1", "web.page_retries=1", f"web.timeout_s={timeout_s}"]
    cases = {
        "provider down": (None, []),
        "provider slow": ({"search_delay_s": 2 * timeout_s}, []),
        "provider HTTP 500": ({"search_status": 500}, []),
        "provider 429 + Retry-After": ({"search_status": 429}, []),
        "out of budget": ({}, ["web.max_requests=1"]),
        "pages fail (500, PDF, redirect)": ({}, []),
        "pages time out": ({"page_delay_s": 2 * timeout_s}, []),
    }
    out = {}
    for name, (knobs, extra) in cases.items():
        if knobs is None:
            url, statuses = "http://127.0.0.1:9/searxng", None
            result, ms = _run_fault(url, text, config, overrides, quick + extra, shared)
        else:
            app = create_web_app("unused", pages, **{**web_args, **knobs})
            with serve_app(app) as base:
                result, ms = _run_fault(
                    f"{base}/searxng", text, config, overrides, quick + extra, shared
                )
                statuses = dict(Counter(str(s) for _, s in app.state.statuses))
        out[name] = {
            "status": result.status,
            "text_whole": result.revised == text or result.status == "edited",
            "revised": result.revised,
            "warnings": list(result.warnings)[:4],
            "warnings_total": len(result.warnings),
            "http_statuses": statuses,
            "ms": round(ms, 1),
        }
    return out


def _run_fault(url, text, config, overrides, extra, shared):
    return _one(_pipeline(url, config, overrides, extra, shared), text)


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from training.figures import save_figure

    rows = report["concurrency"]
    names = list(rows)
    parts = [
        ("web_search", "search"),
        ("web_fetch", "fetch"),
        ("web_extract", "extract"),
        (None, "rest of research"),
        ("revision", "revision"),
        ("report", "report"),
    ]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    bottom = [0.0] * len(names)
    for key, label in parts:
        if key is None:
            vals = [
                rows[n]["stages_ms_p50"]["research"]
                - sum(
                    rows[n]["stages_ms_p50"][k] for k in ("web_search", "web_fetch", "web_extract")
                )
                for n in names
            ]
        else:
            vals = [rows[n]["stages_ms_p50"][key] for n in names]
        vals = [max(v, 0.0) / 1000 for v in vals]
        ax.bar(names, vals, bottom=bottom, label=label)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.set_xlabel("web.concurrency (pages fetched at once)")
    ax.set_ylabel("seconds (median by stage)")
    ax.set_title(
        f"web-backed edit, {report['results_per_search']} results/search, "
        f"page delay {report['page_delay_ms']:.0f} ms"
    )
    ax.legend(fontsize=8)
    save_figure(fig, path)


BENCHMARK = Benchmark(
    "web",
    "latency of a web-backed edit by stage and fetch concurrency, and how it degrades "
    "(provider down, slow, failing, rate-limiting, out of budget; pages timing out)",
)


def add_cli_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--concurrency", default="1,2,4,8", help="web.concurrency values (default 1,2,4,8)"
    )
    option(p, "--runs", int, 3, "timed edits per value after a warm-up")
    p.add_argument("--text", default=DEFAULT_TEXT, help="the passage (default: the README's)")
    option(p, "--results", int, 6, "saved real pages per search result list")
    option(p, "--search-delay-ms", float, 150, "delay of each search answer")
    option(p, "--page-delay-ms", float, 300, "delay of each page")
    p.add_argument(
        "--pages", default=None, help="saved pages folder (default ../shared/data/web/pages)"
    )
    switch(p, "--no-faults", "skip the degradation cases")
    switch(p, "--no-index-baseline", "skip the local-index edit baseline")
    option(p, "--fault-timeout-s", float, 2.0, "web.timeout_s of the fault cases")
    config_flags(p)
    out_flag(p, "web")


def main(args: argparse.Namespace) -> dict[str, Any]:
    values = [int(c) for c in str(args.concurrency).split(",") if c.strip()]
    if not values or min(values) < 1 or args.runs < 1 or args.results < 0:
        raise ValueError("--concurrency values and --runs must be >= 1, --results >= 0")
    if args.fault_timeout_s <= 0:
        raise ValueError(f"--fault-timeout-s must be > 0, got {args.fault_timeout_s}")
    if args.search_delay_ms < 0 or args.page_delay_ms < 0:
        raise ValueError("--search-delay-ms and --page-delay-ms must be >= 0")
    report = bench_web(
        values,
        args.runs,
        args.text,
        args.results,
        args.search_delay_ms,
        args.page_delay_ms,
        args.config,
        args.overrides,
        Path(args.pages) if args.pages else None,
        not args.no_faults,
        not args.no_index_baseline,
        args.fault_timeout_s,
    )
    save_report(report, args.report_file, plot)
    return report
