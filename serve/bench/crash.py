"""``purr bench crash``: the fault-injection harness as a benchmark, and what durability costs.

Real ``purr`` processes are killed with SIGKILL at seeded random moments, resumed with the same
command, and the output audited: rows lost, doubled and unreadable per job (``edit --input``,
``data make``, ``index --append``). Then ``purr edit --input``'s rows per minute with the row
journal (one write per row, fsync every batch) against the plain buffered writer it replaced,
interleaved in the same run, and the two writers alone on the same result rows.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from retrieval.files import RowJournal
from serve.bench.purr_jobs import (
    audit,
    edit_rows,
    kill_after_rows,
    newlines,
    popen_purr,
    run_purr,
    whole_checkpoint,
)
from training.args import option
from training.bench.base import Benchmark, save_report
from training.figures import save_figure


def _edit_args(src: Path, out: Path, index: str | None) -> list[str]:
    args = ["edit", "--input", str(src), "--output", str(out), "--editor", "substitute"]
    return [*args, "--index", index] if index else args


def crash_edit(work: Path, index: str | None, trials: int, n_rows: int = 12) -> dict[str, Any]:
    """``purr edit --input``: per trial two kills at random moments, then a finishing run."""
    src = work / "edit-in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in edit_rows(n_rows)))
    ids = [r["id"] for r in edit_rows(n_rows)]
    totals = {"kills": 0, "lost": 0, "duplicated": 0, "unreadable": 0, "cut_after_kill": 0}
    for seed in tqdm(range(trials), desc="crash: edit --input", unit="trial"):
        rng = random.Random(seed)
        out = work / f"edit-{seed}.jsonl"
        for _ in range(2):
            target = newlines(out) + rng.randint(0, 3)
            kill_after_rows(_edit_args(src, out, index), out, target, rng.random())
            totals["kills"] += 1
            if out.exists() and not out.read_bytes().endswith(b"\n") and out.stat().st_size:
                totals["cut_after_kill"] += 1
        run_purr(_edit_args(src, out, index))
        for k, v in audit(out, ids).items():
            if k != "rows":
                totals[k] += v
    return {"trials": trials, **totals}


def crash_make(work: Path, corpus: str, index: str | None, trials: int) -> dict[str, Any]:
    """``purr data make``: the rows of an unbroken run against those of killed-and-resumed runs."""

    def args(out: Path) -> list[str]:
        a = ["data", "make", "--corpus", corpus, "--out", str(out), "--n", "10"]
        a += ["--variants", "1", "--batch-size", "1", "--per-doc", "3", "--relevance", "0.3"]
        return [*a, "--index", index] if index else a

    reference = work / "make-ref.jsonl"
    run_purr(args(reference))
    want = [str(json.loads(x)["id"]) for x in reference.read_text().splitlines()]
    totals = {"kills": 0, "lost": 0, "duplicated": 0, "unreadable": 0, "different": 0}
    for seed in tqdm(range(trials), desc="crash: data make", unit="trial"):
        rng = random.Random(seed)
        out = work / f"make-{seed}.jsonl"
        for _ in range(2):
            kill_after_rows(args(out), out, newlines(out) + rng.randint(0, 2), rng.random())
            totals["kills"] += 1
        run_purr(args(out))
        got = audit(out, want)
        for k in ("lost", "duplicated", "unreadable"):
            totals[k] += got[k]
        totals["different"] += int(out.read_text() != reference.read_text())
    return {"trials": trials, "reference_rows": len(want), **totals}


def crash_append(work: Path, docs: str, more: str, trials: int) -> dict[str, Any]:
    """``purr index --append``: after each kill the index opens, old or new, never half."""
    from retrieval.index import Index

    base = work / "base"
    run_purr(["index", docs, "--out", str(base)])
    before = Index.open(base).stats()["documents"]
    full = work / "full"
    shutil.copytree(base, full)
    t = time.monotonic()
    run_purr(["index", more, "--append", "--out", str(full)])
    took = time.monotonic() - t
    after = Index.open(full).stats()["documents"]
    outcome = {"kills": 0, "old_index": 0, "new_index": 0, "broken_index": 0, "leftovers": 0}
    for seed in tqdm(range(trials), desc="crash: index --append", unit="trial"):
        rng = random.Random(seed)
        idx = work / f"idx{seed}"
        shutil.copytree(base, idx)
        proc = popen_purr(["index", more, "--append", "--out", str(idx)])
        time.sleep(rng.uniform(0.3, 1.1) * took)
        proc.kill()
        proc.communicate()
        outcome["kills"] += 1
        try:
            n = Index.open(idx).stats()["documents"]
            outcome[
                "old_index" if n == before else "new_index" if n == after else "broken_index"
            ] += 1
        except Exception:  # noqa: BLE001 - counted: an index that does not open is broken
            outcome["broken_index"] += 1
        run_purr(["index", more, "--append", "--out", str(idx)])
        outcome["leftovers"] += len(list(work.glob(f".idx{seed}.*")))
    return {"trials": trials, "append_s": round(took, 2), **outcome}


def crash_train(work: Path, rows: Path, trials: int, steps: int = 24) -> dict[str, Any]:
    """``purr train editor``: after each kill the output is absent or a whole checkpoint, and
    ``--resume`` gives the dev curve of an unbroken run."""

    def args(out: Path, *more: str) -> list[str]:
        a = ["train", "editor", "--arch", "fid", "--base", "scratch:t5-mini", "--no-lora"]
        a += ["--data", str(rows), "--out", str(out), "--device", "cpu", "--max-steps", str(steps)]
        a += ["--eval-every", "3", "--patience", "1000", "--batch-size", "4", "--dev-share", "0.3"]
        return [*a, *more]

    def curve(out: Path) -> list[dict[str, Any]]:
        return json.loads((out / "metrics.json").read_text())["curve"]

    t = time.monotonic()
    run_purr(args(work / "train-full"))
    took = time.monotonic() - t
    outcome: dict[str, Any] = {"kills": 0, "no_checkpoint_yet": 0, "whole_checkpoint": 0}
    outcome["broken_checkpoint"] = 0
    outcome |= {"resumed": 0, "resumed_curve_equal": 0, "train_s": round(took, 1)}
    for seed in tqdm(range(trials), desc="crash: train editor", unit="trial"):
        rng = random.Random(seed)
        out = work / f"train-{seed}"
        proc = popen_purr(args(out))
        time.sleep(rng.uniform(0.2, 1.0) * took)
        proc.kill()
        proc.communicate()
        outcome["kills"] += 1
        if not out.exists():
            outcome["no_checkpoint_yet"] += 1
            continue
        ok = whole_checkpoint(out)
        outcome["whole_checkpoint" if ok else "broken_checkpoint"] += 1
        if ok and (out / "resume").exists():
            run_purr(args(out, "--resume"))
            outcome["resumed"] += 1
            outcome["resumed_curve_equal"] += int(curve(out) == curve(work / "train-full"))
    return {"trials": trials, **outcome}


def durability_cost(pipeline: Any, n_rows: int, repeats: int, n_writes: int = 2000) -> dict:
    """Rows per minute of the edit loop writing through the journal and through the plain
    buffered writer (interleaved, medians of ``repeats``), and the two writers alone writing
    ``n_writes`` result rows."""
    rows = edit_rows(n_rows)
    work = Path(tempfile.mkdtemp(prefix="purr-bench-durability-"))
    results = [pipeline.edit(r["text"], None, r["evidence"]).to_json() for r in rows]  # warm
    many = [{"id": f"w{i}", **results[i % n_rows]} for i in range(n_writes)]

    def edit(r: dict[str, Any]) -> dict[str, Any]:
        return {"id": r["id"], **pipeline.edit(r["text"], None, r["evidence"]).to_json()}

    def plain(path: Path, items: list[dict[str, Any]], make) -> float:
        t = time.perf_counter()
        with path.open("a", encoding="utf-8") as f:  # the writer the journal replaced
            for r in items:
                f.write(json.dumps(make(r), ensure_ascii=False) + "\n")
                f.flush()
        return time.perf_counter() - t

    def journal(path: Path, items: list[dict[str, Any]], make) -> float:
        t = time.perf_counter()
        with RowJournal(path) as j:
            for r in j.pending(items, key=lambda r: r["id"]):
                j.write(make(r))
        return time.perf_counter() - t

    loop: dict[str, list[float]] = {"plain": [], "journal": []}
    write: dict[str, list[float]] = {"plain": [], "journal": []}
    for i in tqdm(range(repeats), desc="durability cost", unit="repeat"):
        for name, fn in (("plain", plain), ("journal", journal))[:: 1 if i % 2 else -1]:
            loop[name].append(fn(work / f"loop-{name}-{i}.jsonl", rows, edit))
            write[name].append(fn(work / f"write-{name}-{i}.jsonl", many, lambda r: r))
    shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in loop.items()}
    wmed = {k: statistics.median(v) for k, v in write.items()}
    return {
        "rows": n_rows,
        "repeats": repeats,
        "edit_rows_per_minute": {k: round(60 * n_rows / v, 1) for k, v in med.items()},
        "edit_ratio_journal_to_plain": round(med["plain"] / med["journal"], 3),
        "write_only_rows": n_writes,
        "write_only_rows_per_s": {k: round(n_writes / v, 1) for k, v in wmed.items()},
        "write_only_ratio_journal_to_plain": round(wmed["plain"] / wmed["journal"], 3),
    }


def plot(report: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    bad_keys = {
        "edit": ("lost", "duplicated", "unreadable"),
        "make": ("lost", "duplicated", "unreadable"),
        "append": ("broken_index",),
        "train": ("broken_checkpoint",),
    }
    jobs = [j for j in bad_keys if j in report]
    kills = [report[j]["kills"] for j in jobs]
    bad = [sum(report[j][k] for k in bad_keys[j]) for j in jobs]
    x = range(len(jobs))
    a.bar([i - 0.2 for i in x], kills, width=0.4, color="tab:grey", label="SIGKILLs")
    a.bar(
        [i + 0.2 for i in x],
        bad,
        width=0.4,
        color="tab:red",
        label="rows lost/doubled/unreadable, broken artefacts",
    )
    for i, (k, f) in enumerate(zip(kills, bad, strict=True)):
        a.text(i - 0.2, k, str(k), ha="center", va="bottom", fontsize=8)
        a.text(i + 0.2, f, str(f), ha="center", va="bottom", fontsize=8)
    a.set_xticks(list(x))
    a.set_xticklabels(["edit --input", "data make", "index --append", "train editor"][: len(jobs)])
    a.set(ylabel="count", title="kills at random moments and what they broke")
    a.set_ylim(0, max(kills) * 1.35)
    a.legend(fontsize=7)
    cost = report.get("cost")
    if cost:
        names = list(cost["edit_rows_per_minute"])
        b.bar(names, [cost["edit_rows_per_minute"][n] for n in names], color="tab:green")
        b.set(ylabel="rows per minute", title="purr edit --input: writer cost (median)")
    save_figure(fig, png)


BENCHMARK = Benchmark(
    "crash", "SIGKILL trials of the batch jobs (rows lost/doubled) and durability's cost"
)


def add_cli_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kind",
        default=None,
        help="kills at scale for these jobs (comma-separated: edit, score, check, make, spans, "
        "index, append, train, or all) instead of the trials and the writer cost",
    )
    p.add_argument(
        "--data", default=None, help="development data for --kind spans (default ../shared/data)"
    )
    option(p, "--kills", int, 200, "kills per kind (with --kind)")
    option(p, "--seed", int, 0, "seed of the kill moments (with --kind)")
    option(p, "--trials", int, 5, "seeded kill trials per job")
    p.add_argument("--index", default=None, help="index for edit and data make (default packaged)")
    p.add_argument("--corpus", required=True, help="small JSONL corpus for data make and append")
    p.add_argument("--docs", required=True, help="documents of the index that is appended to")
    option(p, "--rows", int, 12, "rows of the durability-cost edit loop")
    option(p, "--repeats", int, 5, "interleaved runs (median reported)")
    p.add_argument("--out", default="runs/bench-crash", help="folder for bench_crash.json + PNG")
    p.add_argument("-v", "--verbose", action="store_true")


def main(args: argparse.Namespace) -> dict[str, Any]:
    import tempfile

    from editor.config import editor_overrides, load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline

    if args.kind:
        from serve.bench.kills import main_kills

        return main_kills(args)
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
    save_report(report, out / "bench_crash.json", plot)
    return report
