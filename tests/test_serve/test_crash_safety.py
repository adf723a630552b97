"""Crash safety with real ``purr`` processes: SIGKILL at seeded random moments during
``edit --input``, ``data make`` and ``index --append`` (every row exactly once, every artefact
whole), a cut last line, SIGTERM on a batch job, and a full disk (a file-size limit). The
first seeds run by default, the rest under ``-m slow``; the kills of ``purr bench crash`` are
in ``test_crash_bench.py``."""

from __future__ import annotations

import json
import random
import resource
import shutil
import signal
import time
from pathlib import Path

import pytest

from serve.bench.purr_jobs import (
    EDIT_FACTS,
    edit_rows,
    kill_after_rows,
    newlines,
    popen_purr,
    run_purr,
)

# the CLI as a subprocess
pytestmark = pytest.mark.integration

SEEDS = [0, pytest.param(1, marks=pytest.mark.slow)]
"""The seeded kill trials of a job (each: kill, kill again, then finish)."""


def _whole_rows(path: Path) -> list[dict]:
    """Every line of ``path`` as JSON (fails on an unreadable or cut line)."""
    data = path.read_bytes()
    assert data.endswith(b"\n"), "the file ends in a cut line"
    return [json.loads(line) for line in data.splitlines()]


@pytest.fixture(scope="module")
def edit_input(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("edit") / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in edit_rows(8)))
    return src


def _edit_args(src: Path, out: Path, index: Path) -> list[str]:
    return ["edit", "--input", str(src), "--output", str(out), "--index", str(index)] + [
        "--editor",
        "substitute",
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_edit_input_killed_at_random_moments_loses_and_doubles_nothing(
    seed, edit_input, built_index, tmp_path
):
    rng = random.Random(seed)
    out = tmp_path / "out.jsonl"
    ids = [r["id"] for r in edit_rows(8)]
    for _ in range(2):  # two kills at random moments: while loading, or between/during rows
        done = newlines(out)
        r = kill_after_rows(
            _edit_args(edit_input, out, built_index), out, done + rng.randint(0, 3), rng.random()
        )
        assert r.returncode in (-signal.SIGKILL, 0), r.stderr
        if out.exists():
            rows = _whole_rows(out)  # a kill never leaves half a line
            assert [x["id"] for x in rows] == ids[: len(rows)]
    r = run_purr(_edit_args(edit_input, out, built_index))
    assert r.returncode == 0, r.stderr
    rows = _whole_rows(out)
    assert [x["id"] for x in rows] == ids  # every row once, in order
    assert [x["tag"] for x in rows] == list(range(8))  # extra fields carried through
    assert rows[0]["revised"] == EDIT_FACTS[0][1] and rows[2]["revised"] == EDIT_FACTS[2][0]
    summary = json.loads(r.stdout)
    assert summary["written"] + summary["skipped"] == 8


def test_cut_last_line_is_moved_aside_and_its_row_redone(edit_input, built_index, tmp_path):
    out = tmp_path / "out.jsonl"
    r = kill_after_rows(_edit_args(edit_input, out, built_index), out, 3, 0.0)
    whole = _whole_rows(out)
    assert len(whole) >= 3
    cut = json.dumps({"id": f"r{len(whole)}", "original": "The Eiffel"})[:25]
    with out.open("a") as f:  # what a crash of the machine mid-write leaves
        f.write(cut)
    r = run_purr(_edit_args(edit_input, out, built_index))
    assert r.returncode == 0, r.stderr
    assert f"{out}.partial" in r.stderr  # the warning names the file
    assert Path(f"{out}.partial").read_text() == cut + "\n"  # nothing is lost
    rows = _whole_rows(out)
    assert [x["id"] for x in rows] == [f"r{i}" for i in range(8)]
    summary = json.loads(r.stdout)
    assert summary["redone"] == 1 and summary["skipped"] == len(whole)


def test_sigterm_finishes_the_row_in_hand_and_says_how_to_resume(edit_input, built_index, tmp_path):
    out = tmp_path / "out.jsonl"
    r = kill_after_rows(_edit_args(edit_input, out, built_index), out, 2, 0.0, signal.SIGTERM)
    assert r.returncode == 128 + signal.SIGTERM, r.stderr
    assert "interrupted by SIGTERM" in r.stderr and "Resume with:" in r.stderr
    assert f"purr edit --input {edit_input}" in r.stderr
    assert "Traceback" not in r.stderr
    rows = _whole_rows(out)
    assert 2 <= len(rows) < 8
    assert json.loads(r.stdout)["written"] == len(rows)
    r = run_purr(_edit_args(edit_input, out, built_index))
    assert [x["id"] for x in _whole_rows(out)] == [f"r{i}" for i in range(8)]


def test_retry_degraded_redoes_only_degraded_rows(edit_input, built_index, tmp_path):
    out = tmp_path / "out.jsonl"
    assert run_purr(_edit_args(edit_input, out, built_index)).returncode == 0
    rows = _whole_rows(out)
    rows[5]["status"] = "degraded"  # as a timeout or an upstream down leaves it
    rows[5]["revised"] = rows[5]["original"]
    out.write_text("".join(json.dumps(x) + "\n" for x in rows))
    r = run_purr(_edit_args(edit_input, out, built_index) + ["--retry-degraded"])
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["written"], summary["skipped"], summary["redone"]) == (1, 7, 1)
    again = _whole_rows(out)
    assert sorted(x["id"] for x in again) == sorted(x["id"] for x in rows)
    assert [x for x in again if x["id"] == "r5"][0]["status"] != "degraded"


def _limit_file_size(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_full_disk_is_one_line_and_keeps_every_whole_row(edit_input, built_index, tmp_path):
    out = tmp_path / "out.jsonl"
    # a file-size limit stands in for a full disk: the same failed write, EFBIG for ENOSPC
    r = run_purr(_edit_args(edit_input, out, built_index), preexec_fn=_limit_file_size(9000))
    assert r.returncode == 2, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("purr edit: error:")]
    assert len(lines) == 1 and str(out) in lines[0] and "file-size limit" in lines[0], r.stderr
    assert "rows before it are kept" in lines[0] and "Traceback" not in r.stderr
    rows = _whole_rows(out)  # valid up to the last whole row
    assert 1 <= len(rows) < 8 and out.stat().st_size <= 9000
    r = run_purr(_edit_args(edit_input, out, built_index))  # space again: the same command resumes
    assert r.returncode == 0, r.stderr
    assert [x["id"] for x in _whole_rows(out)] == [f"r{i}" for i in range(8)]


def _make_args(corpus: Path, index: Path, out: Path) -> list[str]:
    return ["data", "make", "--corpus", str(corpus), "--index", str(index), "--out", str(out)] + [
        "--n",
        "10",
        "--variants",
        "1",
        "--batch-size",
        "1",
        "--per-doc",
        "3",
        "--relevance",
        "0.3",
    ]


@pytest.fixture(scope="module")
def made_rows(resources, built_index, tmp_path_factory) -> dict[str, dict]:
    """The rows an unbroken ``data make`` run makes, by id."""
    reference = tmp_path_factory.mktemp("made") / "reference.jsonl"
    r = run_purr(_make_args(resources / "tiny_corpus.jsonl", built_index, reference))
    assert r.returncode == 0, r.stderr
    return {x["id"]: x for x in _whole_rows(reference)}


@pytest.mark.parametrize("seed", SEEDS)
def test_data_make_killed_at_random_moments_makes_the_same_rows(
    seed, made_rows, resources, built_index, tmp_path
):
    corpus = resources / "tiny_corpus.jsonl"
    assert len(made_rows) >= 4
    rng = random.Random(seed)
    out = tmp_path / "out.jsonl"
    for _ in range(2):
        target = newlines(out) + rng.randint(0, 2)
        r = kill_after_rows(_make_args(corpus, built_index, out), out, target, rng.random())
        assert r.returncode in (-signal.SIGKILL, 0), r.stderr
    assert run_purr(_make_args(corpus, built_index, out)).returncode == 0
    rows = _whole_rows(out)
    assert len({x["id"] for x in rows}) == len(rows)  # none doubled
    assert {x["id"]: x for x in rows} == made_rows  # none lost, each as an unbroken run makes it


@pytest.mark.parametrize(
    "seeds", [range(3), pytest.param(range(3, 8), marks=pytest.mark.slow)], ids=["0-2", "3-7"]
)
def test_index_append_killed_at_random_moments_leaves_a_whole_index(seeds, resources, tmp_path):
    from retrieval.index import Index

    base = tmp_path / "base"
    build = ["index", str(resources / "docs"), "--out", str(base)]
    assert run_purr(build).returncode == 0
    before = Index.open(base).stats()["documents"]
    append = ["index", str(resources / "tiny_corpus.jsonl"), "--append"]
    full = tmp_path / "full"
    shutil.copytree(base, full)
    t = time.monotonic()
    assert run_purr([*append, "--out", str(full)]).returncode == 0
    took = time.monotonic() - t
    after = Index.open(full).stats()["documents"]
    assert after > before
    for seed in seeds:  # cheap: a small index appends in under a second
        rng = random.Random(seed)
        idx = tmp_path / f"idx{seed}"
        shutil.copytree(base, idx)
        proc = popen_purr([*append, "--out", str(idx)])
        time.sleep(rng.uniform(0.3, 1.1) * took)
        proc.kill()
        proc.communicate()
        opened = Index.open(idx)  # old or new, never half
        assert opened.stats()["documents"] in (before, after)
        assert opened.search("Great Wall", k=1)
        opened.close()
        assert run_purr([*append, "--out", str(idx)]).returncode == 0
        assert Index.open(idx).stats()["documents"] == after
        assert sorted(p.name for p in tmp_path.glob(f".idx{seed}.*")) == []  # no leftovers
