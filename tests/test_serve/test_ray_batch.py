"""Batch jobs on a real local Ray cluster: results in input order, an actor process killed
mid-run with every row returned exactly once, and ``purr edit --input --ray`` writing what the
plain batch writes, resuming a cut output, and refusing an address where no cluster answers."""

from __future__ import annotations

import json
import os
import signal
import time
from functools import partial
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the Ray extra: pip install 'purr-edit[ray]'")

from tests.helpers import run_purr  # noqa: E402
from training.jobs.ray_pool import RayJob, actor_pool, ray_map, start, stop  # noqa: E402


def slow_double(delay_s: float):
    """A worker: each item takes ``delay_s`` and comes back doubled, with the worker's pid."""

    def run(items):
        time.sleep(delay_s * len(items))
        return [(os.getpid(), 2 * x) for x in items]

    return run


@pytest.fixture(scope="module")
def local_ray():
    import sys

    from ray import cloudpickle

    # the workers cannot import this test module: ship its worker function by value
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    started = start(RayJob(workers=2))
    yield
    stop(started)


def test_results_come_back_in_order_and_a_killed_actor_loses_nothing(local_ray):
    job = RayJob(workers=2, batch_size=2)
    pool = actor_pool(job, partial(slow_double, 0.1))
    pids = {ray.get(a.pid.remote()) for a in pool}
    batches = [list(range(i, i + 2)) for i in range(0, 40, 2)]
    out, killed = [], None
    for n, (_batch, results) in enumerate(ray_map(job, None, batches, actors=pool)):
        out.extend(results)
        if n == 3:  # mid-run: kill one worker process outright
            killed = ray.get(pool[1].pid.remote())
            os.kill(killed, signal.SIGKILL)
    values = [v for _, v in out]
    assert values == [2 * x for x in range(40)]  # every item once, in order
    after = {pid for pid, _ in out[16:]}  # past the batches that may have finished before the kill
    assert killed in pids and killed not in after  # the rest ran on a restarted process
    assert len(after) == 2
    for a in pool:
        ray.kill(a)


@pytest.mark.slow  # a default run keeps the kill test of the same pool
def test_stopping_drops_the_batches_in_flight(local_ray):
    job = RayJob(workers=2, batch_size=1)
    seen = []
    batches = ([i] for i in range(100))
    for _batch, results in ray_map(
        job, partial(slow_double, 0.05), batches, lambda: len(seen) >= 5
    ):
        seen.append(results[0][1])
    assert seen[:5] == [0, 2, 4, 6, 8] and len(seen) <= 5 + 4  # the window, no more


@pytest.mark.integration
def test_purr_edit_on_ray_writes_what_the_plain_batch_writes_and_resumes(tmp_path):
    rows = [
        {"id": f"r{i}", "text": text, "evidence": [evidence], "tag": i}
        for i, (text, evidence) in enumerate(
            [
                (
                    "The Eiffel Tower was finished in 1899.",
                    "The Eiffel Tower was finished in 1889.",
                ),
                ("Marie Curie was born in Paris.", "Marie Curie was born in Warsaw in 1867."),
                ("Mount Everest is 8,849 metres high.", "Mount Everest is 8,849 metres high."),
                ("Python was created by James Gosling.", "Python was created by Guido van Rossum."),
            ]
        )
    ]
    src = tmp_path / "rows.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    editor = ["--editor", "substitute"]
    plain = run_purr(
        "edit", "--input", str(src), "--output", str(tmp_path / "plain.jsonl"), *editor
    )
    assert plain.returncode == 0, plain.stderr
    want = [json.loads(x) for x in (tmp_path / "plain.jsonl").read_text().splitlines()]
    # a run that was killed after one whole row and half of the next
    out = tmp_path / "ray.jsonl"
    lines = (tmp_path / "plain.jsonl").read_text().splitlines(keepends=True)
    out.write_text(lines[0] + lines[1][:40])
    on_ray = run_purr(
        "edit", "--input", str(src), "--output", str(out), *editor,
        "--ray", "--ray-workers", "2", "--ray-batch-size", "1",
    )  # fmt: skip
    assert on_ray.returncode == 0, on_ray.stderr
    summary = json.loads(on_ray.stdout)
    assert summary["skipped"] == 1 and summary["written"] == 3
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["id"] for r in got] == ["r0", "r1", "r2", "r3"]  # each once, in input order
    assert [r["tag"] for r in got] == [0, 1, 2, 3]  # other fields carried through
    for g, w in zip(got, want, strict=True):
        assert (g["revised"], g["status"]) == (w["revised"], w["status"])
    assert got[0]["revised"] == "The Eiffel Tower was finished in 1889."


@pytest.mark.integration
def test_a_ray_address_that_does_not_answer_is_one_line_and_writes_nothing(tmp_path):
    from serve.loopback_web import free_port

    src = tmp_path / "rows.jsonl"
    src.write_text(json.dumps({"id": "a", "text": "The Eiffel Tower is in Paris."}) + "\n")
    out = tmp_path / "out.jsonl"
    port = free_port()
    r = run_purr("edit", "--input", str(src), "--output", str(out), "--ray", f"127.0.0.1:{port}")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and f"no Ray cluster answers at 127.0.0.1:{port}" in r.stderr
    assert "ray start --head" in r.stderr
    assert not out.exists() and not Path(str(out) + ".errors.jsonl").exists()
    lite = run_purr(
        "edit",
        "--input",
        str(src),
        "--output",
        str(out),
        "--ray",
        "--index",
        str(tmp_path / "c.db"),
    )
    assert lite.returncode == 2 and "milvus-lite server" in lite.stderr and not out.exists()


@pytest.mark.slow  # a default run keeps the kill test of the same pool
def test_a_worker_that_cannot_start_is_one_error(local_ray):
    from training.jobs.ray_pool import RayJobError

    def broken():
        raise FileNotFoundError("no purr index at /nowhere")

    with pytest.raises(RayJobError, match="no purr index at /nowhere"):
        list(ray_map(RayJob(workers=1), broken, [[1], [2]]))


@pytest.mark.slow  # each actor builds the rule corruptor's entity pool: about 80 s on 2 cores
@pytest.mark.integration
def test_purr_data_make_on_ray_makes_the_rows_the_plain_run_makes(tmp_path, built_index, resources):
    common = ["--corpus", str(resources / "tiny_corpus.jsonl"), "--index", str(built_index)]
    common += ["--n", "4", "--batch-size", "2"]
    plain = run_purr("data", "make", *common, "--out", str(tmp_path / "plain.jsonl"))
    assert plain.returncode == 0, plain.stderr
    on_ray = run_purr(
        "data", "make", *common, "--out", str(tmp_path / "ray.jsonl"), "--ray", "--ray-workers", "2"
    )
    assert on_ray.returncode == 0, on_ray.stderr
    assert json.loads(on_ray.stdout)["rows"] == 4
    want = (tmp_path / "plain.jsonl").read_text().splitlines()
    assert (tmp_path / "ray.jsonl").read_text().splitlines() == want  # same rows, same order
