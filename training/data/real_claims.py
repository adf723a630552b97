"""Human-labelled real claims, for ``purr eval edits``: what people and real dialogue systems
wrote, with the evidence they cite and a human verdict (and, for SummEdits, the human fix).

``purr data real-claims --out DIR [--n 150]`` writes ``DIR/dev.jsonl`` and ``DIR/test.jsonl``:

- **WiCE**: a real Wikipedia claim against the web article it cites. Partly supported claims
  from ``raw/wice/nst_{dev,test}.jsonl`` (the dataset's own split) carry ``unsupported``, the
  words annotators marked not supported: an edit should change only those. Supported claims
  from ``nli/wice_claim.jsonl`` (split by cited article) must come back unchanged.
- **BEGIN** (``raw/begin/``: the dev files for dev, ``begin_test_wow.tsv`` for test): a
  dialogue system's reply (``text``) to a message (``context``) grounded in a knowledge
  snippet; only "Fully attributable" replies are kept, labelled supported: each must come back
  unchanged.
- **SummEdits** (``edits/summedits.jsonl`` and ``nli/summedits.jsonl``, split by source
  document): a summary with an inserted factual error and the consistent summary it was made
  from as ``gold`` (the human minimal fix), and consistent summaries labelled supported.

Rows: ``{id, dataset, text, context, evidence, label, gold?, unsupported?, split}``; the
evidence is given, so no index is needed.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from editor.verdicts import NOT_SUPPORTED, SUPPORTED

DATASETS = ("wice", "begin", "summedits")


def _row(
    id: str, dataset: str, text: str, evidence: str, label: str, split: str, **extra: Any
) -> dict[str, Any]:
    """One row in the shape ``purr eval edits`` reads (``context`` None unless given)."""
    return {"id": id, "dataset": dataset, "text": text, "context": extra.pop("context", None),
            "evidence": evidence, "label": label, **extra, "split": split}  # fmt: skip


def split_of(document: str) -> str:
    """``dev`` or ``test``, fixed by the source document (about half each)."""
    return "dev" if hashlib.md5(document.encode("utf-8")).digest()[0] % 2 == 0 else "test"


def wice_rows(data: Path, n: int) -> Iterator[dict[str, Any]]:
    """Up to ``n`` partly supported WiCE claims with their marked words per split (WiCE's own),
    and ``n`` supported ones (``nli/wice_claim.jsonl``, split by cited article)."""
    for split in ("dev", "test"):
        path = data / "raw" / "wice" / f"nst_{split}.jsonl"
        lines = path.read_text("utf-8").splitlines()
        for i, line in enumerate(lines[:n]):
            r = json.loads(line)
            evidence = [s for s in r["evidence"] if not s.startswith("(meta data)")]
            flags = zip(r["claim_tokens"], r["non_supported_spans"], strict=False)
            yield _row(f"wice-{split}-{i}", "wice", r["claim"], " ".join(evidence), "partial",
                       split, unsupported=[t for t, bad in flags if bad])  # fmt: skip
    kept: dict[str, int] = {}
    for line in (data / "nli" / "wice_claim.jsonl").read_text("utf-8").splitlines():
        r = json.loads(line)
        split = split_of(r["premise"])
        if r["label"] != SUPPORTED or kept.get(split, 0) >= n:
            continue
        kept[split] = kept.get(split, 0) + 1
        yield _row(f"wice-ok-{r['id']}", "wice", r["hypothesis"], r["premise"], SUPPORTED, split)


def begin_rows(data: Path, n: int) -> Iterator[dict[str, Any]]:
    """Up to ``n`` fully attributable BEGIN replies per split (see the module doc)."""
    folder = data / "raw" / "begin"
    files = {"dev": sorted(folder.glob("begin_dev_*.tsv")), "test": [folder / "begin_test_wow.tsv"]}
    for split, paths in files.items():
        kept = 0
        for path in paths:
            with path.open(encoding="utf-8", newline="") as f:
                for i, r in enumerate(csv.DictReader(f, delimiter="\t")):
                    if kept >= n:
                        break
                    if r["begin_label"].strip().lower() != "fully attributable":
                        continue
                    kept += 1
                    yield _row(f"begin-{path.stem}-{i}", "begin", r["response"].strip(),
                               r["knowledge"].strip(), SUPPORTED, split,
                               context=r["message"].strip() or None)  # fmt: skip


def summedits_rows(data: Path, n: int) -> Iterator[dict[str, Any]]:
    """Up to ``n`` SummEdits summaries with an error (and their fix) and ``n`` consistent ones
    per split (see the module doc)."""
    counts: dict[tuple[str, str], int] = {}

    def room(split: str, kind: str) -> bool:
        counts[(split, kind)] = counts.get((split, kind), 0) + 1
        return counts[(split, kind)] <= n

    for line in (data / "edits" / "summedits.jsonl").read_text("utf-8").splitlines():
        r = json.loads(line)
        split = split_of(r["evidence"])
        if room(split, "error"):
            yield _row(f"summedits-{r['id']}", "summedits", r["original"], r["evidence"],
                       NOT_SUPPORTED, split, gold=r["gold"])  # fmt: skip
    for line in (data / "nli" / "summedits.jsonl").read_text("utf-8").splitlines():
        r = json.loads(line)
        if r["label"] != SUPPORTED:
            continue
        split = split_of(r["premise"])
        if room(split, "consistent"):
            yield _row(f"summedits-ok-{r['id']}", "summedits", r["hypothesis"], r["premise"],
                       SUPPORTED, split)  # fmt: skip


def claim_rows(data: Path, n: int, datasets=DATASETS) -> list[dict[str, Any]]:
    """The rows of ``datasets`` (see the module doc), ``n`` of each kind per split."""
    makers = {"wice": wice_rows, "begin": begin_rows, "summedits": summedits_rows}
    return [row for name in datasets for row in makers[name](data, n)]
