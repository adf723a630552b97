"""Make span rows from parsed documents (``parse``), split by document, with the standard
library alone (it runs on a device machine's cores where spaCy is not installed):

    python -m training.data.spans.make --parsed runs/spans/parsed.jsonl.xz --out runs/spans \
        --passes 2 --workers 16

Each pass visits every sentence of every document with a fresh window around it and draws the
families it gets (``SHARES``: the chance that a family is tried on a sentence; a family that
does not apply gives nothing). ``train.jsonl[.xz]`` and ``dev.jsonl[.xz]`` (the documents
``is_span_dev`` picks) are written with ``stats.json``: rows per family and label.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from training.args import switch
from training.data.spans.context import WINDOW_CHARS
from training.data.spans.families import FAMILIES, Context, Sentence, make_window
from training.data.spans.rows import SpanRow, open_text, temp_for, write_rows

SHARES = {
    "sup-copy": 0.45,
    "sup-reword": 0.7,
    "con-same": 0.9,
    "con-other": 0.45,
    "con-closed": 0.9,
    "con-number": 0.5,
    "con-negation": 0.12,
    "nei-modifier": 0.3,
    "nei-clause": 0.15,
    "nei-specific": 0.6,
    "nei-dropped": 0.35,
    "multi": 0.35,
}
QUESTION_SHARES = {"qa-wrong": 0.35, "qa-right": 0.2, "qa-unanswered": 0.12}
"""With ``questions``: rows with a question as context (``training.data.spans.questions``)."""
RESTATED_SHARES = {"sup-restated": 0.6, "con-restated": 0.8}
"""With ``restated``: claims that restate the sentence (``training.data.spans.restate``)."""
SHORT_WINDOWS = 0.3
"""With ``restated``: the share of windows cut to a random size (the pipeline's windows hold
one sentence as often as several)."""
DEV_SALT = "purr-spans-v1"
PLACES = Path(__file__).resolve().parents[3] / "editor" / "claims" / "places.json"


def split_of(doc: str, fraction: float = 0.04) -> str:
    """``dev`` for a ``fraction`` of the documents, ``test`` for as many more, else ``train``."""
    h = int(hashlib.sha1(f"{DEV_SALT}:{doc}".encode()).hexdigest()[:12], 16) / 16**12
    return "dev" if h < fraction else "test" if h < 2 * fraction else "train"


def read_parsed(path: str | Path) -> list[tuple[str, list[Sentence]]]:
    out = []
    with open_text(path) as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                out.append((d["doc"], [Sentence.from_json(s) for s in d["sents"]]))
    return out


def banks(docs: list[tuple[str, list[Sentence]]], per_label: int = 20000, seed: int = 0):
    """Values of each entity label, adjectives, places and years, drawn over all documents."""
    rng = random.Random(seed)
    found: dict[str, set[str]] = {}
    for _, sents in docs:
        for s in sents:
            for a, b, lab in s.ents:
                v = s.text[a:b]
                if 1 < len(v) < 40 and "\n" not in v:
                    found.setdefault(lab, set()).add(v)
                    if lab == "DATE" and v.isdigit() and len(v) == 4:
                        found.setdefault("YEAR", set()).add(v)
            for a, b in s.adjs:
                found.setdefault("ADJ", set()).add(s.text[a:b])
    return {k: rng.sample(sorted(v), min(per_label, len(v))) for k, v in found.items()}


def rows_of(
    doc: str,
    sents: list[Sentence],
    bank,
    parents,
    rng: random.Random,
    shares=SHARES,
    short: float = 0.0,
) -> Iterator[SpanRow]:
    for i in range(len(sents)):
        size = WINDOW_CHARS
        if short and rng.random() < short:
            size = rng.randint(len(sents[i].text), max(WINDOW_CHARS, len(sents[i].text)))
        window, at, evidence, offsets = make_window(sents, i, rng, size)
        ctx = Context(doc, window, at, evidence, offsets, bank, parents, rng)
        for name, share in shares.items():
            if rng.random() < share and (row := FAMILIES[name](ctx)) is not None:
                yield row


_SHARED: dict = {}


def _share(bank, parents) -> None:  # each worker's values, sent once
    _die_with_parent()
    _SHARED.update(bank=bank, parents=parents)


def _die_with_parent() -> None:
    """On Linux, have the kernel kill this worker when the process that made it dies: a pool
    worker whose parent was killed would otherwise wait on its queue for ever."""
    import ctypes
    import signal
    import sys

    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _work(job) -> dict[str, list[SpanRow]]:
    docs, seed, questions, restated = job
    bank, parents = _SHARED["bank"], _SHARED["parents"]
    rng = random.Random(seed)
    shares = {**SHARES, **QUESTION_SHARES} if questions else dict(SHARES)
    if restated:
        shares.update(RESTATED_SHARES)
    short = SHORT_WINDOWS if restated else 0.0
    out: dict[str, list[SpanRow]] = {"train": [], "dev": [], "test": []}
    for doc, sents in docs:
        out[split_of(doc)].extend(rows_of(doc, sents, bank, parents, rng, shares, short))
    return out


def generate(
    parsed: Path,
    passes: int = 1,
    workers: int = 1,
    seed: int = 0,
    progress: bool = True,
    questions: bool = False,
    restated: bool = False,
) -> dict[str, list[SpanRow]]:
    """Rows of every split, the train rows shuffled; the dev and test rows of the first pass
    only (a fixed set however many passes train)."""
    docs = read_parsed(parsed)
    bank = banks(docs, seed=seed)
    parents = json.loads(PLACES.read_text("utf-8"))["parents"]
    chunk = max(1, len(docs) // (workers * 8))
    jobs = [
        (docs[i : i + chunk], seed * 1000003 + p * 7919 + i, questions, restated)
        for p in range(passes)
        for i in range(0, len(docs), chunk)
    ]
    rows: dict[str, list[SpanRow]] = {"train": [], "dev": [], "test": []}
    first = len(range(0, len(docs), chunk))
    with ProcessPoolExecutor(workers, initializer=_share, initargs=(bank, parents)) as pool:
        for done, part in enumerate(pool.map(_work, jobs), 1):
            for k, v in part.items():
                if k == "train" or done <= first:
                    rows[k] += v
            if progress and done % max(1, len(jobs) // 10) == 0:
                print(
                    f"spans: {done}/{len(jobs)} chunks, {len(rows['train'])} train rows", flush=True
                )
    random.Random(seed).shuffle(rows["train"])
    return rows


def make(
    parsed: Path,
    out: Path,
    passes: int = 1,
    workers: int = 1,
    seed: int = 0,
    suffix: str = ".jsonl.xz",
    progress: bool = True,
    questions: bool = False,
    restated: bool = False,
) -> dict:
    rows = generate(parsed, passes, workers, seed, progress, questions, restated)
    out.mkdir(parents=True, exist_ok=True)
    for k, v in rows.items():
        write_rows(v, out / f"{k}{suffix}")
    train = rows["train"]
    stats = {
        "passes": passes,
        **{k: len(v) for k, v in rows.items()},
        "families": dict(Counter(r.family for r in train).most_common()),
        "labels": dict(Counter(r.label for r in train).most_common()),
    }
    stats["shares"] = {k: round(v / len(train), 4) for k, v in stats["families"].items()}
    tmp = temp_for(out / "stats.json")  # renamed in one step: never half a file
    tmp.write_text(json.dumps(stats, indent=1), "utf-8")
    os.replace(tmp, out / "stats.json")
    return stats


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--parsed", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--passes", type=int, default=1)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--suffix", default=".jsonl.xz", help=".jsonl to skip compression")
    switch(p, "--questions", "the question families too")
    switch(p, "--restated", "the restated families and short windows too")
    a = p.parse_args(argv)
    stats = make(
        a.parsed,
        a.out,
        a.passes,
        a.workers,
        a.seed,
        a.suffix,
        questions=a.questions,
        restated=a.restated,
    )
    print(json.dumps(stats, indent=1))


if __name__ == "__main__":
    main()
