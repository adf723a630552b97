"""Kills at scale (``purr bench crash --kind KIND --kills N``): each trial runs a real ``purr``
job, SIGKILLs it at a uniformly random moment of its run, measured from its first output (not
from the process start, which is mostly imports and model loading), resumes it with the same
command and audits the result against an uninterrupted run of the same job.

Per kind: kills that landed mid-run (the job had not finished), outputs lost, doubled or broken
(rows or artefacts), and the time to resume; every kill's moment as a share of the run, so the
report shows the kills covered the whole run (JSON and a histogram PNG).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from serve.bench.purr_jobs import (
    audit,
    edit_rows,
    newlines,
    popen_purr,
    run_purr,
    whole_checkpoint,
)

KINDS = ("edit", "score", "check", "make", "spans", "index", "append", "train")
SPAN_FILES = ("parsed", "train", "dev", "test", "real")


@dataclass
class Job:
    """One long job: its command for an output path, when its first output exists, how to
    resume it, and how to audit a finished output against the uninterrupted one."""

    kind: str
    args: Callable[[Path], list[str]]
    started: Callable[[Path], bool]
    audit: Callable[[Path, Path], dict[str, int]]
    resume: Callable[[Path], list[str]] | None = None
    prepare: Callable[[Path], None] | None = None
    after_kill: Callable[[Path], dict[str, int]] | None = None
    """what the killed job left, before the resume (an index old or new, never half)"""


def _rows_audit(order: bool) -> Callable[[Path, Path], dict[str, int]]:
    """Rows lost, doubled, unreadable, out of order and different from the reference's."""

    def check(out: Path, ref: Path) -> dict[str, int]:
        want = [str(json.loads(x)["id"]) for x in ref.read_text().splitlines()]
        got = audit(out, want)
        result = {k: got[k] for k in ("lost", "duplicated", "unreadable")}
        rows, ref_rows = _by_id(out), _by_id(ref)
        result["different"] = sum(rows.get(k) != v for k, v in ref_rows.items())
        ids = [k for k in rows]
        result["out_of_order"] = int(order and ids != [k for k in want if k in rows])
        return result

    return check


def _by_id(path: Path) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for line in path.read_bytes().split(b"\n") if path.exists() else []:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        row.pop("timings_ms", None)  # wall-clock times differ from run to run
        rows[str(row["id"])] = row
    return rows


def _xz_lines(path: Path) -> list[str] | None:
    """The lines of a whole .xz file, None where it is cut or broken."""
    import lzma

    try:
        with lzma.open(path, "rt", encoding="utf-8") as f:
            return f.read().splitlines()
    except (OSError, EOFError, lzma.LZMAError, UnicodeDecodeError):
        return None


def _spans_after_kill(out: Path) -> dict[str, int]:
    """After a kill: every span file present is whole (old or new), no temporaries left."""
    files = [out / f"{n}.jsonl.xz" for n in SPAN_FILES]
    half = sum(1 for f in files if f.exists() and _xz_lines(f) is None)
    return {"half_after_kill": half}


def _spans_audit(out: Path, ref: Path) -> dict[str, int]:
    """Each span file of the resumed run against the uninterrupted one's, line by line."""
    broken = different = 0
    for n in SPAN_FILES:
        got, want = _xz_lines(out / f"{n}.jsonl.xz"), _xz_lines(ref / f"{n}.jsonl.xz")
        broken += got is None
        different += got is not None and got != want
    leftovers = sum(1 for p in out.glob(".*") if "tmp" in p.name)
    return {"broken": broken, "different": different, "leftovers": leftovers}


def _jsonl_job(kind: str, args: Callable[[Path], list[str]], order: bool) -> Job:
    return Job(kind, args, lambda out: newlines(out) > 0, _rows_audit(order))


def _documents(out: Path) -> int | None:
    """The documents of the index at ``out`` if it opens and answers a search, else None."""
    from retrieval.index import Index

    try:
        index = Index.open(out)
        try:
            n = index.stats()["documents"]
            return n if index.search("Great Wall", k=1) else None
        finally:
            index.close()
    except Exception:  # noqa: BLE001 - counted: an index that does not open is broken
        return None


def _index_audit(docs: int) -> Callable[[Path, Path], dict[str, int]]:
    def check(out: Path, ref: Path) -> dict[str, int]:
        leftovers = len(list(out.parent.glob(f".{out.name}.*")))
        return {"broken": int(_documents(out) != docs), "leftovers": leftovers}

    return check


def _old_or_new(*allowed: int | None) -> Callable[[Path], dict[str, int]]:
    """After a kill: the index is absent (``None`` allowed) or whole, old or new, never half."""

    def check(out: Path) -> dict[str, int]:
        n = _documents(out) if out.exists() else None
        return {"half_after_kill": int(n not in allowed)}

    return check


def _checkpoint_or_nothing(out: Path) -> dict[str, int]:
    return {"half_after_kill": int(out.exists() and not whole_checkpoint(out))}


def _train_audit(out: Path, ref: Path) -> dict[str, int]:
    def curve(p: Path) -> Any:
        return json.loads((p / "metrics.json").read_text())["curve"]

    whole = whole_checkpoint(out)
    same = whole and curve(out) == curve(ref)
    return {"broken": int(not whole), "different": int(whole and not same)}


def jobs(
    work: Path, index: str | None, corpus: str, docs: str, data: str | None = None
) -> dict[str, Job]:
    """The long job of every kind, over small inputs written into ``work`` (``data``: the
    development data ``purr data spans`` reads, default ../shared/data)."""
    from retrieval.corpus import read_corpus

    rows = edit_rows(12)
    edit_in, score_in, check_in = work / "edit.jsonl", work / "score.jsonl", work / "check.jsonl"
    edit_in.write_text("".join(json.dumps(r) + "\n" for r in rows))
    score_in.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cited = [{"id": r["id"], "text": r["text"] + " [1]", "sources": r["evidence"]} for r in rows]
    check_in.write_text("".join(json.dumps(r) + "\n" for r in cited))
    at = ["--index", index] if index else []
    make = ["--n", "10", "--variants", "1", "--batch-size", "1", "--per-doc", "3"]
    make += ["--relevance", "0.3"]
    n_docs = sum(1 for _ in read_corpus([docs]))
    n_after = n_docs + sum(1 for _ in read_corpus([corpus]))

    def train(out: Path) -> list[str]:
        a = ["train", "editor", "--arch", "fid", "--base", "scratch:t5-mini", "--no-lora"]
        a += ["--data", str(work / "make-rows.jsonl"), "--out", str(out), "--device", "cpu"]
        a += ["--max-steps", "24", "--eval-every", "3", "--patience", "1000", "--batch-size", "4"]
        return [*a, "--dev-share", "0.3"]

    def copy_base(out: Path) -> None:
        shutil.copytree(work / "base-index", out)

    return {
        "edit": _jsonl_job(
            "edit",
            lambda o: [
                "edit",
                "--input",
                str(edit_in),
                "--output",
                str(o),
                "--editor",
                "substitute",
                *at,
            ],
            order=True,
        ),
        "score": _jsonl_job(
            "score", lambda o: ["score", "--input", str(score_in), "--output", str(o)], order=True
        ),
        "check": _jsonl_job(
            "check", lambda o: ["check", "--input", str(check_in), "--output", str(o)], order=True
        ),
        "make": _jsonl_job(
            "make",
            lambda o: ["data", "make", "--corpus", corpus, "--out", str(o), *make, *at],
            order=False,
        ),
        "spans": Job(
            "spans",
            lambda o: (
                ["data", "spans", "--out", str(o), "--limit", "40", "--passes", "1"]
                + ["--workers", "1", *(["--data", data] if data else [])]
            ),
            lambda o: o.exists(),  # made before the parse: kills land in it too
            _spans_audit,
            after_kill=_spans_after_kill,
        ),
        "index": Job(
            "index",
            lambda o: ["index", docs, "--out", str(o), "--overwrite"],
            lambda o: any(o.parent.glob(f".{o.name}.*")) or o.exists(),
            _index_audit(n_docs),
            after_kill=_old_or_new(None, n_docs),
        ),
        "append": Job(
            "append",
            lambda o: ["index", corpus, "--append", "--out", str(o)],
            lambda o: any(o.parent.glob(f".{o.name}.*")),
            _index_audit(n_after),
            prepare=copy_base,
            after_kill=_old_or_new(n_docs, n_after),
        ),
        "train": Job(
            "train",
            train,
            lambda o: True,  # timed from the start: --out must not appear before it is whole
            _train_audit,
            resume=lambda o: [*train(o), "--resume"] if (o / "resume").exists() else train(o),
            after_kill=_checkpoint_or_nothing,
        ),
    }


def _wait_started(proc: Any, job: Job, out: Path, timeout_s: float = 600) -> float | None:
    """When ``job``'s first output appeared (None if the process ended first)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if job.started(out):
            return time.monotonic()
        if proc.poll() is not None:
            return None
        time.sleep(0.005)
    raise TimeoutError(f"purr {job.kind} wrote nothing in {timeout_s:g} s")


def reference(job: Job, work: Path) -> tuple[Path, float]:
    """An uninterrupted run; its output and how long it ran after its first output."""
    out = work / f"{job.kind}-reference"
    if job.prepare:
        job.prepare(out)
    proc = popen_purr(job.args(out))
    first = _wait_started(proc, job, out) or time.monotonic()
    _, err = proc.communicate(timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"the reference run of {job.kind} failed: {err[-800:]}")
    return out, time.monotonic() - first


def kill_trials(job: Job, work: Path, kills: int, seed: int = 0) -> dict[str, Any]:
    """``kills`` trials of ``job``: run, SIGKILL at a uniform moment of its run from its first
    output, resume with the same command, audit against the reference."""
    ref, run_s = reference(job, work)
    rng = random.Random(seed)
    totals: dict[str, int] = {"landed": 0, "resume_failed": 0}
    moments, resume_s, faults = [], [], []
    for trial in tqdm(range(kills), desc=f"kills: {job.kind}", unit="kill"):
        out = work / f"{job.kind}-{trial}"
        if job.prepare:
            job.prepare(out)
        share = rng.random()
        proc = popen_purr(job.args(out), start_new_session=True)
        first = _wait_started(proc, job, out)
        if first is not None:
            time.sleep(max(first + share * run_s - time.monotonic(), 0))
        landed = proc.poll() is None
        proc.kill()  # the job's process alone, as the OOM killer or a kill -9 does
        try:  # its output pipes close when every process it made has gone
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # a worker outlived it, holding the pipes
            totals["orphans"] = totals.get("orphans", 0) + 1
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        totals["landed"] += int(landed)
        moments.append(round(share, 4) if landed else None)
        found = job.after_kill(out) if job.after_kill else {}
        for k, v in found.items():
            totals[k] = totals.get(k, 0) + v
        if any(found.values()):  # what a bad kill left, to see why
            left = sorted(str(p.relative_to(out)) for p in out.rglob("*")) if out.is_dir() else []
            faults.append({"trial": trial, "moment": round(share, 4), **found, "left": left[:40]})
        t = time.monotonic()
        resumed = run_purr((job.resume or job.args)(out))
        resume_s.append(time.monotonic() - t)
        totals["resume_failed"] += int(resumed.returncode != 0)
        for k, v in job.audit(out, ref).items():
            totals[k] = totals.get(k, 0) + v
        _remove(out)
    bad = sum(v for k, v in totals.items() if k not in ("landed",))
    return {
        "kind": job.kind,
        "kills": kills,
        **totals,
        "bad": bad,
        "run_s_after_first_output": round(run_s, 2),
        "resume_s_median": round(statistics.median(resume_s), 2),
        "kill_moments": moments,
        "faults": faults,
    }


def _remove(out: Path) -> None:
    if out.is_dir():
        shutil.rmtree(out, ignore_errors=True)
    else:
        out.unlink(missing_ok=True)
    for left in out.parent.glob(f".{out.name}*"):
        shutil.rmtree(left, ignore_errors=True) if left.is_dir() else left.unlink(missing_ok=True)


def plot(report: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from training.figures import save_figure

    kinds = list(report["kinds"])
    fig, axes = plt.subplots(1, len(kinds), figsize=(4.2 * len(kinds), 3.2), squeeze=False)
    for ax, kind in zip(axes[0], kinds, strict=True):
        r = report["kinds"][kind]
        moments = [m for m in r["kill_moments"] if m is not None]
        ax.hist(moments, bins=20, range=(0, 1), color="tab:grey")
        ax.set_title(f"{kind}: {r['landed']}/{r['kills']} landed mid-run, {r['bad']} bad")
        ax.set_xlabel("kill moment (share of the run after its first output)", fontsize=8)
    axes[0][0].set_ylabel("kills")
    save_figure(fig, png)


def main_kills(args: Any) -> dict[str, Any]:
    """``purr bench crash --kind KIND[,KIND] --kills N``: the report, also written to
    ``--out``/bench_crash_kills.json (after each kind, so a long run keeps what it measured)."""
    import tempfile

    from training.bench.base import save_report

    kinds = list(KINDS) if args.kind == "all" else [k.strip() for k in args.kind.split(",")]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise ValueError(
            f"--kind {','.join(unknown)}: unknown; choose from all, {', '.join(KINDS)}"
        )
    if args.kills < 1:
        raise ValueError("--kills must be >= 1")
    work = Path(tempfile.mkdtemp(prefix="purr-bench-kills-"))
    every = jobs(work, args.index, args.corpus, args.docs, getattr(args, "data", None))
    needs = {"append": ["index", args.docs, "--out", str(work / "base-index")]}
    needs["train"] = every["make"].args(work / "make-rows.jsonl")
    for kind, command in needs.items():
        if kind in kinds and run_purr(command).returncode != 0:
            raise RuntimeError(f"could not prepare the {kind} trials: purr {' '.join(command)}")
    report: dict[str, Any] = {"kills_per_kind": args.kills, "seed": args.seed, "kinds": {}}
    path = Path(args.out) / "bench_crash_kills.json"
    try:
        for kind in kinds:
            report["kinds"][kind] = kill_trials(every[kind], work, args.kills, args.seed)
            save_report(report, path, plot)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return report
