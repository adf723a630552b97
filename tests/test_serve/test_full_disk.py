"""A disk that really fills (a small tmpfs mounted by the test, ENOSPC from the kernel): batch
edit output, an index build and an append, the web cache and training checkpoints. Each says
in one line which path, the space needed and the space free; nothing is left half-written;
what was there before stays whole; the same command completes once space is freed."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from helpers import fill, run_purr, small_filesystem

from retrieval.web.cache import WebCache
from serve.bench.purr_jobs import edit_rows

# the CLI as a subprocess
pytestmark = pytest.mark.integration


def _one_error_line(stderr: str, command: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith(f"purr {command}: error:")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def _whole_rows(path: Path) -> list[dict]:
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), "a cut line was left"
    return [json.loads(line) for line in data.splitlines()]


def test_batch_edit_on_a_full_disk_keeps_its_whole_rows_and_resumes(built_index, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in edit_rows(8)))
    with small_filesystem(tmp_path / "disk", 256) as disk:
        out = disk / "out.jsonl"
        filler = fill(disk, 6000)  # room for a few rows (each about 1.5 KB), not all 8
        args = ["edit", "--input", str(src), "--output", str(out), "--index", str(built_index)]
        args += ["--editor", "substitute"]
        r = run_purr(*args)
        assert r.returncode == 2, r.stderr
        line = _one_error_line(r.stderr, "edit")
        assert str(out) in line and "no space left on the device" in line
        assert " needed, " in line and " free)" in line and "rows before it are kept" in line
        rows = _whole_rows(out)
        assert 1 <= len(rows) < 8
        filler.unlink()  # space again: the same command finishes the job
        r = run_purr(*args)
        assert r.returncode == 0, r.stderr
        assert [x["id"] for x in _whole_rows(out)] == [f"r{i}" for i in range(8)]
        assert rows == _whole_rows(out)[: len(rows)]  # the earlier rows, byte for byte


def test_an_index_build_and_an_append_on_a_full_disk_leave_nothing_half_written(
    resources, tmp_path
):
    with small_filesystem(tmp_path / "disk", 4096) as disk:
        idx = disk / "idx"
        r = run_purr("index", str(resources / "docs"), "--out", str(idx))
        assert r.returncode == 0, r.stderr
        before = sorted((p.name, p.stat().st_size) for p in idx.iterdir())
        filler = fill(disk, 16_000)
        append = ["index", str(resources / "tiny_corpus.jsonl"), "--append", "--out", str(idx)]
        r = run_purr(*append)
        assert r.returncode == 2, r.stderr
        line = _one_error_line(r.stderr, "index")
        assert str(idx) in line and "no space left" in line and "is unchanged" in line
        assert "it needs more than the" in line and "free there" in line
        assert sorted((p.name, p.stat().st_size) for p in idx.iterdir()) == before
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "idx"]  # no temporary left
        fresh = disk / "fresh"
        r = run_purr("index", str(resources / "docs"), "--out", str(fresh))
        assert r.returncode == 2 and not fresh.exists(), r.stderr
        filler.unlink()
        assert run_purr(*append).returncode == 0
        r = run_purr("search", "Great Wall", "--index", str(idx), "--json")
        assert r.returncode == 0 and "Great Wall" in r.stdout, r.stderr


def test_a_full_disk_under_the_web_cache_leaves_research_uncached(tmp_path, caplog):
    with small_filesystem(tmp_path / "disk", 64) as disk:
        cache = WebCache(disk / "cache")
        filler = fill(disk, 0)
        with caplog.at_level(logging.WARNING, logger="retrieval.web.cache"):
            cache.put("page", "k" * 64, {"text": "x" * 10_000})  # no exception
            cache.put("page", "j" * 64, {"text": "y" * 10_000})
        assert cache.unwritable and "no space left" in cache.unwritable
        assert len([r for r in caplog.records if "going on without caching" in r.message]) == 1
        assert cache.get("page", "k" * 64) is None
        assert [p for p in (disk / "cache").rglob("*") if p.is_file()] == []  # nothing half
        filler.unlink()
        cache.put("page", "k" * 64, {"text": "x"})
        assert cache.get("page", "k" * 64) == {"text": "x"}
