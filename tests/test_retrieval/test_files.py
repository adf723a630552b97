"""The durable-file helpers every long job uses: the JSONL row journal and atomic artefacts."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import pytest

from retrieval.files import RowJournal, atomic_dir, output_error, write_text
from retrieval.files.atomic import recover, remove_stale, temp_sibling


def _lines(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_journal_resumes_skips_and_refuses_doubles(tmp_path):
    out = tmp_path / "o.jsonl"
    with RowJournal(out) as j:
        for k in ["a", "b"]:
            j.write({"id": k, "v": 1})
        with pytest.raises(ValueError, match="already written"):
            j.write({"id": "a"})
    with RowJournal(out) as j:
        todo = list(j.pending(["a", "b", "c", "c", "d"]))
        assert todo == ["c", "d"] and j.skipped == 2 and j.duplicates == 1
        for k in todo:
            j.write({"id": k})
    assert [r["id"] for r in _lines(out)] == ["a", "b", "c", "d"]


def test_unreadable_and_repeated_lines_go_to_partial_and_nothing_is_lost(tmp_path):
    out = tmp_path / "o.jsonl"
    # an older version's torn row glued to the next one, a repeated row, then a cut tail
    out.write_text('{"id": "a"}\n{"id": "b", "x{"id": "c"}\n{"id": "a"}\n{"id": "d"}\n{"id": "e"')
    with RowJournal(out) as j:
        assert [r["id"] for r in j.rows] == ["a", "d"]
        assert j.redone == 3
    assert _lines(out) == [{"id": "a"}, {"id": "d"}]
    partial = (tmp_path / "o.jsonl.partial").read_text().splitlines()
    assert partial == ['{"id": "b", "x{"id": "c"}', '{"id": "a"}', '{"id": "e"']


def test_redo_takes_selected_rows_out(tmp_path):
    out = tmp_path / "o.jsonl"
    out.write_text("".join(json.dumps({"id": i, "status": s}) + "\n" for i, s in enumerate("eud")))
    with RowJournal(out, redo=lambda r: r["status"] == "d") as j:
        assert list(j.pending(["0", "1", "2"])) == ["2"] and j.redone == 1
        j.write({"id": 2, "status": "e"})
    assert [r["status"] for r in _lines(out)] == ["e", "u", "e"]


def test_a_failed_write_leaves_no_half_line(tmp_path):
    """A file-size limit (standing in for a full disk) in a child process: the row that does not
    fit is not left half-written and the error names the file and the fix."""
    out = tmp_path / "o.jsonl"
    code = f"""
import resource, sys
from retrieval.files import RowJournal, OutputError
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
try:
    with RowJournal({str(out)!r}) as j:
        for i in range(100):
            j.write({{"id": i, "pad": "x" * 90}})
except OutputError as e:
    print(e)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "file-size limit" in r.stdout and str(out) in r.stdout, r.stderr
    rows = _lines(out)
    assert out.read_bytes().endswith(b"\n") and 1 <= len(rows) < 100
    assert f"the {len(rows)} rows before it are kept" in r.stdout


def test_atomic_dir_swaps_whole_or_not_at_all(tmp_path):
    target = tmp_path / "model"
    with atomic_dir(target) as tmp:
        (tmp / "a").write_text("1")
    with pytest.raises(RuntimeError):
        with atomic_dir(target) as tmp:
            (tmp / "a").write_text("2")
            raise RuntimeError("killed mid-save")
    assert (target / "a").read_text() == "1"
    with atomic_dir(target, copy_existing=True) as tmp:
        (tmp / "b").write_text("3")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    assert sorted(p.name for p in target.iterdir()) == ["a", "b"]


def test_leftovers_of_a_killed_writer_are_recovered_or_removed(tmp_path):
    target = tmp_path / "index"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True
    )
    pid = int(dead.stdout)
    old = tmp_path / f".index.old-{pid}-1"  # moved aside, then the writer died
    old.mkdir()
    (old / "config.json").write_text("{}")
    stale = tmp_path / f".index.tmp-{pid}-2"
    stale.mkdir()
    mine = temp_sibling(target)
    mine.mkdir()  # this process's own: kept
    assert recover(target) and (target / "config.json").exists()
    assert remove_stale(target) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["index", mine.name])


def test_output_error_names_path_and_fix(tmp_path):
    e = output_error(OSError(errno.EROFS, "Read-only file system"), tmp_path / "x.json")
    assert (
        str(e)
        == f"cannot write {tmp_path / 'x.json'}: the filesystem is read-only; write to a writable path"
    )
    write_text(tmp_path / "y.json", "{}")
    assert [p.name for p in tmp_path.iterdir()] == ["y.json"]
    assert os.stat(tmp_path / "y.json").st_size == 2
