"""Seeds of ``purr data make``: the queries (with their trusted sentence, or their evidence
already researched) that each become training rows, read from a file of queries, from earlier
rows (``--from``) or sampled from a corpus, and split into disjoint shards.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrieval.corpus import jsonl_rows, read_utf8
from retrieval.sentences import split
from retrieval.types import Document
from training.args import read_rows


@dataclass(frozen=True)
class Seed:
    """A seed query; ``clean`` is the trusted sentence it came from (corpus seeds);
    ``evidence`` is ``(E+, E-)`` already researched (seeds read back from rows, ``--from``)."""

    id: str
    query: str
    clean: str | None = None
    title: str | None = None
    evidence: tuple[tuple[str, ...], tuple[str, ...]] | None = None


def _qid(text: str) -> str:
    return "q-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def read_seeds(path: Path) -> list[Seed]:
    """Seed queries: a text file (one per line), JSONL rows with ``question``/``query``/``text``,
    or a JSON list of such objects (StrategyQA's format)."""
    content = read_utf8(path)
    items: list[Any]
    if path.suffix.lower() == ".json":
        try:
            items = json.loads(content)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: invalid JSON ({e.msg})") from None
        if not isinstance(items, list):
            raise ValueError(f"{path}: expected a JSON list of objects with a 'question'")
    elif path.suffix.lower() == ".jsonl":
        items = [row for _, row in jsonl_rows(path)]
    else:
        items = [line for line in content.splitlines() if line.strip()]
    seeds: dict[str, Seed] = {}
    for item in items:
        if isinstance(item, dict):
            item = item.get("question") or item.get("query") or item.get("text")
        if isinstance(item, str) and item.strip():
            q = " ".join(item.split())
            seeds.setdefault(_qid(q), Seed(_qid(q), q))
    if not seeds:
        raise ValueError(f"{path}: no seed queries found (one per line, or 'question' fields)")
    return list(seeds.values())


def row_seeds(path: Path) -> list[Seed]:
    """One seed per clean statement of an earlier ``purr data make`` output, with its evidence,
    so another corruptor can corrupt the same statements without researching them again
    (``purr data make --from``). Rows missing a field are named in the error."""
    seeds: dict[str, Seed] = {}
    need = ("id", "query", "clean", "evidence_pos", "evidence_neg")
    for line_no, row in jsonl_rows(path):
        missing = [k for k in need if k not in row]
        if missing:
            raise ValueError(f"{path}:{line_no}: row lacks {', '.join(missing)}")
        sid = str(row.get("seed_id", row["id"]))
        ev = (tuple(row["evidence_pos"]), tuple(row["evidence_neg"]))
        seeds.setdefault(sid, Seed(sid, row["query"], row["clean"], None, ev))
    if not seeds:
        raise ValueError(f"{path}: no rows")
    return list(seeds.values())


def corpus_seeds(docs: Iterable[Document], per_doc: int = 1, seed: int = 0) -> Iterator[Seed]:
    """Sentences of trusted documents (6-40 words, with a name or number) as seeds: the
    sentence is both the query and the clean statement."""
    for doc in docs:
        rng = random.Random(f"{seed}:{doc.id}")
        sents = [
            (i, s)
            for i, s in enumerate(split(doc.text))
            if 6 <= len(s.split()) <= 40 and any(c.isdigit() or c.isupper() for c in s[1:])
        ]
        for i, s in rng.sample(sents, min(per_doc, len(sents))):
            yield Seed(f"{doc.id}#s{i}", s, s, doc.title)


def parse_shard(spec: str) -> tuple[int, int]:
    """``"I/N"`` (1-based) as ``(I - 1, N)``.

    >>> parse_shard("3/8")
    (2, 8)
    """
    try:
        i, n = (int(x) for x in spec.split("/"))
    except ValueError:
        raise ValueError(f"--shard must look like 3/8 (shard 3 of 8), got {spec!r}") from None
    if not 1 <= i <= n:
        raise ValueError(f"--shard {spec}: the shard number must be between 1 and {n}")
    return i - 1, n


def shard(seeds: Iterable[Seed], index: int, count: int) -> Iterator[Seed]:
    """Every ``count``-th seed from ``index``: N processes with shards 1/N ... N/N (each with its
    own ``--out``) make disjoint rows; concatenated, they are one data set."""
    for k, s in enumerate(seeds):
        if k % count == index:
            yield s


def read_editor_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a ``purr data make`` file, each checked for the fields training reads."""
    need = ("clean", "corrupted", "evidence_neg", "evidence_pos")
    return read_rows(Path(path), need, "make them with `purr data make`")
