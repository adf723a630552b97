"""``purr bench crash``'s harness as a test: a few seeded SIGKILLs per kind of job (score,
check, index builds, span data), each resumed to what an unbroken run writes."""

from __future__ import annotations

import json

import pytest

from serve.bench.purr_jobs import run_purr

pytestmark = pytest.mark.integration


def test_kills_at_scale_cover_score_check_and_index_builds(built_index, resources, tmp_path):
    # the benchmark's harness, a few kills per kind (purr bench crash --kills 200 is the scale)
    args = ["bench", "crash", "--kind", "score,check,index", "--kills", "2", "--seed", "4"]
    args += ["--out", str(tmp_path)]  # seed 4: kills at 24% and 10% of the run, mid-run
    args += ["--index", str(built_index), "--corpus", str(resources / "tiny_corpus.jsonl")]
    r = run_purr([*args, "--docs", str(resources / "docs")])
    assert r.returncode == 0, r.stderr
    report = json.loads((tmp_path / "bench_crash_kills.json").read_text())
    for kind in ("score", "check", "index"):
        k = report["kinds"][kind]
        assert k["kills"] == 2 and k["landed"] >= 1 and len(k["kill_moments"]) == 2, k
        assert k["bad"] == 0 and k["resume_failed"] == 0, k  # nothing lost, doubled or half
    assert report["kinds"]["index"]["half_after_kill"] == 0
    assert (tmp_path / "bench_crash_kills.png").stat().st_size > 1000


def test_a_killed_purr_data_spans_resumes_to_the_same_rows(dev_data, resources, tmp_path):
    # every span file is written whole or not at all (a kill mid-parse used to leave a cut
    # parsed.jsonl.xz that the resume trusted); the resumed rows equal an uninterrupted run's
    args = ["bench", "crash", "--kind", "spans", "--kills", "1", "--seed", "4"]
    args += ["--out", str(tmp_path), "--data", str(dev_data)]
    args += ["--corpus", str(resources / "tiny_corpus.jsonl"), "--docs", str(resources / "docs")]
    r = run_purr(args)
    assert r.returncode == 0, r.stderr
    k = json.loads((tmp_path / "bench_crash_kills.json").read_text())["kinds"]["spans"]
    assert k["kills"] == 1 and k["bad"] == 0 and k["resume_failed"] == 0, k
    assert k["half_after_kill"] == 0, k
