"""``purr bench ...``: the benchmarks (speed and memory). Each writes a JSON report and draws a
PNG beside it; the measuring code lives beside what it measures (``retrieval/bench*.py``,
``training/bench_*.py``, ``serve/bench_*.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from retrieval.bench import run_bench
from retrieval.bench_batch import bench_batch, write_report
from retrieval.bench_batch import plot as plot_batch
from retrieval.files import write_text
from serve.bench_cold import DEFAULT_TEXT, bench_cold_start
from serve.bench_cold import plot as plot_cold
from serve.bench_serve import bench_serve, drop_latencies
from serve.bench_serve import plot as plot_serve
from training.bench_edit import DEFAULT_PASSAGE, bench_research
from training.bench_models import bench_attribution, bench_edit, bench_passages


def _add_retrieval(bsub) -> None:
    """Register ``purr bench retrieval`` on the ``bench`` sub-command parsers."""
    b = bsub.add_parser(
        "retrieval", help="indexing throughput, query latency, index size at several corpus sizes"
    )
    b.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated passage counts")
    b.add_argument("--queries", type=int, default=100, help="queries timed per size")
    b.add_argument(
        "--repeats", type=int, default=7, help="runs of the rerank timing (median reported)"
    )
    b.add_argument(
        "--corpus", action="append", default=[], help="extra JSONL corpora for the sentence pool"
    )
    b.add_argument(
        "--baseline-max",
        type=int,
        default=100_000,
        help="largest size at which rank-bm25 is also timed",
    )
    b.add_argument(
        "--out", default="runs/bench", help="folder for bench_retrieval.json and the plot"
    )
    b.add_argument("-v", "--verbose", action="store_true")
    b.set_defaults(handler=_cmd_retrieval)


def _cmd_retrieval(args: argparse.Namespace) -> int:
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if not sizes or min(sizes) < 100:
        raise ValueError(f"--sizes must be passage counts >= 100, got {args.sizes}")
    report = run_bench(
        sizes, args.queries, args.corpus, Path(args.out), args.baseline_max, args.repeats
    )
    print(json.dumps({k: v for k, v in report.items() if k != "sizes"}, indent=2))
    for n, row in report["sizes"].items():
        b, d = row["bm25"], row["dense"]
        extra = (
            f", rank-bm25 {b['rank_bm25_query_ms']['p50']} ms ({b['speedup_vs_rank_bm25_p50']}x)"
            if "rank_bm25_query_ms" in b
            else ""
        )
        bm25 = f"bm25 p50 {b['query_ms']['p50']} ms p95 {b['query_ms']['p95']} ms{extra}"
        dense = (
            f"{d['index']} search p50 {d['search_ms']['p50']} ms p95 {d['search_ms']['p95']} ms "
            f"recall@10 {d['recall@10_vs_exact']}"
        )
        disk = f"disk bm25 {b['disk_mb']} MB + faiss {d['disk_mb']} MB"
        print(f"{int(n):>9,} passages | {bm25} | {dense} | {disk}")
    print(f"wrote {Path(args.out) / 'bench_retrieval.json'}")
    return 0


def _add_batch(bsub: argparse._SubParsersAction) -> None:
    p = bsub.add_parser("batch", help="encoder and cross-encoder throughput by batch size")
    p.add_argument("--n", type=int, default=256, help="snippets of the default corpus")
    p.add_argument("--sizes", default="4,8,16,32,64", help="comma-separated batch sizes")
    p.add_argument("--runs", type=int, default=3)
    _out_flag(p, "batch")
    p.set_defaults(handler=_cmd_batch)


def _cmd_batch(args: argparse.Namespace) -> int:
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    if not sizes or sizes[0] < 1 or args.n < 1 or args.runs < 1:
        raise ValueError("--sizes must be batch sizes >= 1, and --n, --runs >= 1")
    report = bench_batch(args.n, sizes, args.runs)
    print(json.dumps(report, indent=2))
    write_report(report, _report_file(args.out, "batch"), plot_batch)
    return 0


def _add_research(bsub) -> None:
    b = bsub.add_parser("research", help="queries per generator and research latency by stage")
    b.add_argument("text", nargs="?", default=DEFAULT_PASSAGE)
    b.add_argument("--index", default=None)
    b.add_argument("--generators", default="sentence,entity,llm")
    b.add_argument("--runs", type=int, default=5, help="timed runs per generator (median reported)")
    b.add_argument("--out", default="runs/bench")
    b.add_argument("--config", default="default")
    b.add_argument("--set", dest="overrides", action="append", default=[])
    b.add_argument("-v", "--verbose", action="store_true")
    b.set_defaults(handler=_cmd_research)


def _cmd_research(args: argparse.Namespace) -> int:
    if args.runs < 1:
        raise ValueError(f"--runs must be >= 1, got {args.runs}")
    gens = [g.strip() for g in args.generators.split(",") if g.strip()]
    report = bench_research(args.text, args.index, gens, args.runs, args.config, args.overrides)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "bench_research.json", json.dumps(report, indent=2, ensure_ascii=False))
    for gen, row in report["generators"].items():
        print(f"\n== {gen}: {len(row['queries'])} queries, median ms {row['median_ms']}")
        for q, ev in zip(row["queries"], row["evidence"], strict=True):
            print(f"  ? {q}\n    -> {ev[0] if ev else '(no evidence)'}")
    return 0


def _add_models(bsub) -> None:
    p = bsub.add_parser(
        "attribution", help="NLI throughput (pairs/s) at fixed lengths, fp32 vs int8"
    )
    p.add_argument("--model", default=None, help="model folder (default: the shipped one)")
    p.add_argument("--lengths", default="256,128", help="comma-separated pair lengths in tokens")
    p.add_argument("--n", type=int, default=192, help="pairs per run")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    _out_flag(p, "attribution")
    p.set_defaults(handler=_cmd_attribution)

    p = bsub.add_parser("edit", help="latency by stage of purr edit over 3-sentence passages")
    p.add_argument(
        "--data", default=None, help="JSONL with a 'text' field (default: 20 planted-set passages)"
    )
    p.add_argument("--n", type=int, default=20, help="passages")
    p.add_argument("--editors", default="identity,substitute", help="comma-separated editor types")
    p.add_argument("--index", default=None)
    p.add_argument("--config", default="default")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    _out_flag(p, "edit")
    p.set_defaults(handler=_cmd_edit)


def _emit(report: dict[str, Any], out: Path | None) -> int:
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_text(Path(out), text + "\n")
    return 0


def _cmd_attribution(args: argparse.Namespace) -> int:
    if args.n < 1 or args.runs < 1 or args.batch_size < 1:
        raise ValueError("--n, --runs and --batch-size must be >= 1")
    lengths = [int(x) for x in args.lengths.split(",") if x.strip()]
    return _emit(
        bench_attribution(args.model, lengths, args.n, args.runs, args.batch_size),
        _report_file(args.out, "attribution"),
    )


def _cmd_edit(args: argparse.Namespace) -> int:
    if args.n < 1:
        raise ValueError(f"--n must be >= 1, got {args.n}")
    passages = bench_passages(args.data, args.n)
    editors = [e.strip() for e in args.editors.split(",") if e.strip()]
    report = bench_edit(passages, editors, args.config, args.overrides, args.index)
    return _emit(report, _report_file(args.out, "edit"))


def _add_check(bsub: argparse._SubParsersAction) -> None:
    p = bsub.add_parser(
        "check", help="latency of purr check and citation repair: 6-sentence answer, 5 sources"
    )
    p.add_argument("--runs", type=int, default=5, help="timed runs after a warm-up (default 5)")
    p.add_argument("--config", default="default")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    _out_flag(p, "check")
    p.set_defaults(handler=_cmd_check)


def _cmd_check(args: argparse.Namespace) -> int:
    from training.bench_check import bench_check, plot

    if args.runs < 1:
        raise ValueError(f"--runs must be >= 1, got {args.runs}")
    report = bench_check(args.config, args.overrides, args.runs)
    out = _report_file(args.out, "check")
    code = _emit(report, out)
    if out is not None:
        plot(report, out.with_suffix(".png"))
    return code


def _add_serve(bsub: argparse._SubParsersAction) -> None:
    p = bsub.add_parser("serve", help="load test of purr serve on loopback (concurrent clients)")
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--duration", type=float, default=60, help="seconds of load")
    p.add_argument("--baseline-s", type=float, default=20, help="seconds of the 1-client baseline")
    p.add_argument("--workers", default="2", help="comma-separated server --workers values")
    p.add_argument("--n", type=int, default=40, help="distinct passages sent in turn")
    p.add_argument("--data", default=None, help="JSONL with a 'text' field (default: planted set)")
    p.add_argument("--deadline-s", type=float, default=120, help="server PURR_DEADLINE_S")
    p.add_argument("--start-timeout-s", type=float, default=900)
    p.add_argument("--index", default=None)
    p.add_argument("--config", default="default")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    _out_flag(p, "serve")
    p.set_defaults(handler=_cmd_serve)


def _cmd_serve(args: argparse.Namespace) -> int:
    from training.bench_models import bench_passages

    if args.clients < 1 or args.duration <= 0 or args.baseline_s <= 0:
        raise ValueError("--clients must be >= 1 and --duration, --baseline-s > 0")
    args.workers = [int(w) for w in str(args.workers).split(",") if w.strip()]
    report = bench_serve(bench_passages(args.data, args.n), args)
    # the printed summary leaves out the per-request latencies (the --out file keeps them)
    text = json.dumps(drop_latencies(report), indent=2)
    print(text)
    out = _report_file(args.out, "serve")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_text(out, json.dumps(report) + "\n")
        plot_serve(report, out.with_suffix(".png"))
    return 0


def _add_cold(bsub: argparse._SubParsersAction) -> None:
    p = bsub.add_parser("cold-start", help="wall time of a whole `purr edit` process (warm caches)")
    p.add_argument("--text", default=DEFAULT_TEXT, help="the passage (default: the README's)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--index", default=None)
    p.add_argument("--config", default="default")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    _out_flag(p, "cold-start")
    p.set_defaults(handler=_cmd_cold)


def _cmd_cold(args: argparse.Namespace) -> int:
    if args.runs < 1:
        raise ValueError(f"--runs must be >= 1, got {args.runs}")
    extra = ["--config", args.config, *(f"--set={o}" for o in args.overrides)]
    if args.index:
        extra += ["--index", args.index]
    from retrieval.bench_batch import write_report

    report = bench_cold_start(args.text, args.runs, extra)
    print(json.dumps(report, indent=2))
    write_report(report, _report_file(args.out, "cold-start"), plot_cold)
    return 0


def _add_crash(bsub: argparse._SubParsersAction) -> None:
    p = bsub.add_parser(
        "crash", help="SIGKILL trials of the batch jobs (rows lost/doubled) and durability's cost"
    )
    p.add_argument("--trials", type=int, default=5, help="seeded kill trials per job")
    p.add_argument("--index", default=None, help="index for edit and data make (default packaged)")
    p.add_argument("--corpus", required=True, help="small JSONL corpus for data make and append")
    p.add_argument("--docs", required=True, help="documents of the index that is appended to")
    p.add_argument("--rows", type=int, default=12, help="rows of the durability-cost edit loop")
    p.add_argument("--repeats", type=int, default=5, help="interleaved runs (median reported)")
    p.add_argument("--out", default="runs/bench-crash", help="folder for bench_crash.json + PNG")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(handler=_cmd_crash)


def _cmd_crash(args: argparse.Namespace) -> int:
    import tempfile

    from editor.config import editor_overrides, load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline
    from serve.bench_crash import (
        crash_append,
        crash_edit,
        crash_make,
        crash_train,
        durability_cost,
        plot,
    )

    if args.trials < 1 or args.rows < 1 or args.repeats < 1:
        raise ValueError("--trials, --rows and --repeats must be >= 1")
    out = Path(args.out)
    work = Path(tempfile.mkdtemp(prefix="purr-bench-crash-"))
    report: dict[str, Any] = {
        "edit": crash_edit(work, args.index, args.trials),
        "make": crash_make(work, args.corpus, args.index, args.trials),
        "append": crash_append(work, args.docs, args.corpus, 2 * args.trials),
    }
    report["train"] = crash_train(work, work / "make-ref.jsonl", args.trials)
    cfg = load_config("default", editor_overrides("substitute"))
    pipeline = Pipeline(Components(cfg, index_path=args.index))
    report["cost"] = durability_cost(pipeline, args.rows, args.repeats)
    write_text(out / "bench_crash.json", json.dumps(report, indent=2) + "\n")
    plot(report, out / "bench_crash.png")
    print(json.dumps(report, indent=2))
    return 0


def _add_web(bsub: argparse._SubParsersAction) -> None:
    p = bsub.add_parser(
        "web",
        help="latency of a web-backed edit by stage and fetch concurrency, and how it degrades "
        "(provider down, slow, failing, rate-limiting, out of budget; pages timing out)",
    )
    p.add_argument(
        "--concurrency", default="1,2,4,8", help="web.concurrency values (default 1,2,4,8)"
    )
    p.add_argument("--runs", type=int, default=3, help="timed edits per value after a warm-up")
    p.add_argument("--text", default=DEFAULT_TEXT, help="the passage (default: the README's)")
    p.add_argument("--results", type=int, default=6, help="saved real pages per search result list")
    p.add_argument("--search-delay-ms", type=float, default=150, help="delay of each search answer")
    p.add_argument("--page-delay-ms", type=float, default=300, help="delay of each page")
    p.add_argument(
        "--pages", default=None, help="saved pages folder (default ../shared/data/web/pages)"
    )
    p.add_argument("--no-faults", action="store_true", help="skip the degradation cases")
    p.add_argument(
        "--no-index-baseline", action="store_true", help="skip the local-index edit baseline"
    )
    p.add_argument(
        "--fault-timeout-s", type=float, default=2.0, help="web.timeout_s of the fault cases"
    )
    p.add_argument("--config", default="default")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    _out_flag(p, "web")
    p.set_defaults(handler=_cmd_web)


def _cmd_web(args: argparse.Namespace) -> int:
    from serve.bench_web import bench_web, plot

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
    out = _report_file(args.out, "web")
    code = _emit(report, out)
    if out is not None:
        plot(report, out.with_suffix(".png"))
    return code


def _add_milvus(bsub) -> None:
    from training.nli_data import default_data_dir

    shared = default_data_dir()
    p = bsub.add_parser(
        "milvus",
        help="the Milvus backend against the local index: SciFact quality per mode, build "
        "throughput, disk size and query latency at several sizes",
    )
    p.add_argument("--sizes", default="10000,100000", help="synthetic corpus sizes ('' to skip)")
    p.add_argument("--queries", type=int, default=100, help="timed queries per mode and size")
    p.add_argument(
        "--index", default=None, help="a local index of --corpus for the quality comparison"
    )
    p.add_argument("--corpus", default=str(shared / "corpus" / "scifact.jsonl"))
    p.add_argument("--beir-queries", default=str(shared / "raw" / "scifact" / "queries.jsonl"))
    p.add_argument("--qrels", default=str(shared / "raw" / "scifact" / "qrels_test.tsv"))
    p.add_argument("--limit", type=int, default=None, help="first N quality queries only")
    _out_flag(p, "milvus")
    p.set_defaults(handler=_cmd_milvus)


def _cmd_milvus(args: argparse.Namespace) -> int:
    from training.bench_milvus import plot, run

    sizes = [int(x) for x in str(args.sizes).split(",") if x.strip()]
    if any(n < 100 for n in sizes) or args.queries < 1:
        raise ValueError("--sizes must each be >= 100 passages and --queries >= 1")
    quality = None
    if args.index:
        quality = {
            "index": Path(args.index),
            "corpus": Path(args.corpus),
            "queries": Path(args.beir_queries),
            "qrels": Path(args.qrels),
        }
        for name, path in quality.items():
            if not path.exists():
                raise ValueError(f"--{name} {path}: no such file or folder")
    report = run(Path(args.out or "."), sizes, args.queries, quality, args.limit)
    out = _report_file(args.out, "milvus")
    code = _emit(report, out)
    if out is not None:
        plot(report, out.with_suffix(".png"))
    return code


def _add_ray(bsub) -> None:
    p = bsub.add_parser(
        "ray",
        help="purr edit --input on a local Ray cluster (1 and 2 workers) against the plain "
        "batch, rows per minute, and a run with a worker killed mid-way",
    )
    p.add_argument("--input", required=True, help="JSONL rows (e.g. purr data planted --n 200)")
    p.add_argument("--workers", default="1,2", help="Ray worker counts to run (default 1,2)")
    p.add_argument("--batch-size", type=int, default=4, help="rows per actor call")
    _out_flag(p, "ray")
    p.set_defaults(handler=_cmd_ray)


def _cmd_ray(args: argparse.Namespace) -> int:
    from serve.bench_ray import bench_ray, plot

    workers = [int(x) for x in str(args.workers).split(",") if x.strip()]
    if not workers or min(workers) < 1 or args.batch_size < 1:
        raise ValueError("--workers values and --batch-size must be >= 1")
    if not Path(args.input).is_file():
        raise ValueError(f"--input {args.input}: no such file")
    work = Path(args.out or ".") / "outputs"
    report = bench_ray(Path(args.input), work, workers, args.batch_size)
    out = _report_file(args.out, "ray")
    code = _emit(report, out)
    if out is not None:
        plot(report, out.with_suffix(".png"))
    return code


def _out_flag(p: argparse.ArgumentParser, name: str) -> None:
    p.add_argument(
        "--out",
        default=None,
        help=f"folder for bench_{name.replace('-', '_')}.json and its plot (a .json path, the old form, still works)",
    )


def _report_file(out: str | None, name: str) -> Path | None:
    """Where a benchmark's JSON report goes: ``OUT/bench_NAME.json`` (its plot beside it); a
    path ending in .json is the old form, kept for one release with a warning."""
    if not out:
        return None
    if out.endswith(".json"):
        print(
            f"purr bench {name}: --out FILE.json is deprecated; pass a folder "
            f"(the report goes to FOLDER/bench_{name}.json)",
            file=sys.stderr,
        )
        return Path(out)
    return Path(out) / f"bench_{name.replace('-', '_')}.json"


def register(sub, common) -> None:
    """``purr bench`` and its benchmarks."""
    bench = sub.add_parser("bench", help="benchmarks (speed and memory)")
    bsub = bench.add_subparsers(dest="bench", required=True)
    adders = (_add_retrieval, _add_research, _add_models, _add_serve, _add_cold, _add_batch)
    for add in (*adders, _add_crash, _add_check, _add_web, _add_milvus, _add_ray):
        add(bsub)
