"""``purr bench serve --mix`` end to end: a real ``purr serve`` process under clients that cycle
edit, check, score and streamed chat (through a loopback upstream); every answer checked."""

from __future__ import annotations

import json

import pytest
from helpers import run_purr

# the CLI as a subprocess, a real HTTP server
pytestmark = pytest.mark.integration


def test_mixed_load_answers_every_kind_of_request_and_reports_memory(built_index, tmp_path):
    r = run_purr(
        "bench", "serve", "--mix", "--clients", "4", "--duration", "6", "--baseline-s", "3",
        "--batching", "off", "--threads", "1", "--index", str(built_index),
        "--out", str(tmp_path),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    runs = json.loads((tmp_path / "bench_serve.json").read_text())["runs"]
    run = runs["workers=2, threads=1, batching off"]
    mix = run["mix"]
    assert run["threads"] == 1 and run["workers"] == 2
    assert mix["server_errors"] == 0 and mix["lost"] == 0, mix
    assert mix["research_cache"]["hits"] + mix["research_cache"]["misses"] >= 1, mix
    assert mix["by_op"]["score"]["p50_s"] <= mix["by_op"]["score"]["p95_s"]
    for op in ("edit", "check", "score", "chat"):
        assert mix["by_op"][op]["ok"] >= 1 and mix["by_op"][op]["wrong_answer"] == 0, (op, mix)
    assert run["server_rss_mb_before"] > 100 and run["server_rss_mb_after"] > 100
    assert run["rss_timeline_mb"] and all(mb > 100 for _, mb in run["rss_timeline_mb"])
    assert (tmp_path / "bench_serve.png").stat().st_size > 1000


def test_the_schema_bench_runs_schemathesis_over_every_operation(built_index, tmp_path):
    r = run_purr(
        "bench", "schema", "--max-examples", "1", "--index", str(built_index),
        "--out", str(tmp_path),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    report = json.loads((tmp_path / "bench_schema.json").read_text())
    assert report["operations_tested"] >= 7 and report["test_cases"] > 50, report
    assert report["failures"] == [] and report["errors"] == 0, report
    assert report["server_alive_after"] and "POST /v1/edit" in report["by_operation"]
    assert (tmp_path / "bench_schema.png").stat().st_size > 1000
