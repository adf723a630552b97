"""Rows for distilling the reranker: the (query, window) pairs research really ranks, each with
the teacher cross-encoder's logit.

The research stage runs as in an edit (query generation, first-stage search, the windows a
query's documents give), on two kinds of text:

- ``generated``: sentences of the embedded Wikipedia summaries, researched as claims (the
  queries are the query generator's);
- ``questions``: NQ-open questions, researched with the question as the context (the queries
  are the user's own question and the generator's), taken ``beyond`` the first ``skip`` of
  each source so that a real-answer measurement set built with ``--n skip`` is never read.

Every pair the reranker scores goes to the rows with the teacher's raw logit, so the student
learns the scores of exactly the pairs it will rank. ``depth`` widens the windows scored per
query beyond the default's so the student also sees the windows that lose.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from training.args import option

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PairRow:
    """One scored pair: ``kind`` is ``generated`` or ``questions``."""

    query: str
    passage: str
    logit: float
    kind: str


@contextmanager
def recording(reranker: Any, sink: list[tuple[str, str, float]]) -> Iterator[None]:
    """Every pair ``reranker``'s scorer scores during the block goes to ``sink`` with its logit."""
    scorer = reranker.scorer
    original = scorer.pair_logits

    def pair_logits(pairs: list[tuple[str, str]]) -> np.ndarray:
        out = original(pairs)
        sink.extend((q, p, float(x)) for (q, p), x in zip(pairs, out, strict=True))
        return out

    scorer.pair_logits = pair_logits
    try:
        yield
    finally:
        del scorer.pair_logits


def texts(data: Path, n_generated: int, n_questions: int, skip: int, seed: int) -> list[tuple]:
    """``(kind, text, context)`` to research: corpus sentences and held-apart questions."""
    from retrieval.corpus import read_wiki_summaries
    from training.data.real_errors import beyond, nq_open_questions
    from training.data.seeds import corpus_seeds

    docs = list(read_wiki_summaries())
    random.Random(seed).shuffle(docs)
    out: list[tuple] = [
        ("generated", s.query, None) for s in corpus_seeds(docs[: n_generated * 2], 1, seed)
    ][:n_generated]
    if n_questions:
        qs = beyond(nq_open_questions(data, skip + n_questions, progress=False), skip)
        out += [("questions", q.question, q.question) for q in qs[:n_questions]]
    return out


def make_pairs(
    data: Path,
    out: Path,
    *,
    n_generated: int,
    n_questions: int,
    skip: int,
    depth: int,
    seed: int = 0,
    progress: bool = True,
) -> dict[str, Any]:
    """Write ``pairs.jsonl`` (one :class:`PairRow` a line) under ``out``; returns counts."""
    from tqdm import tqdm

    from editor.config import load_config
    from editor.factory import Components

    cfg = load_config("default", [f"research.rerank_depth={depth}"])
    comp = Components(cfg, progress=False)
    researcher, reranker = comp.researcher, comp.reranker
    if reranker is None:
        raise ValueError("the configuration has no reranker to distil; enable rerank")
    todo = texts(data, n_generated, n_questions, skip, seed)
    out.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    with (out / "pairs.jsonl").open("w", encoding="utf-8") as f:
        for kind, text, context in tqdm(todo, desc="teacher pairs", disable=not progress):
            sink: list[tuple[str, str, float]] = []
            with recording(reranker, sink):
                researcher.research(text, context)
            for q, p, x in sink:
                f.write(json.dumps(PairRow(q, p, x, kind).__dict__) + "\n")
            counts[kind] = counts.get(kind, 0) + len(sink)
    summary = {"texts": len(todo), "pairs": counts, "depth": depth, "skip": skip, "seed": seed}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def read_pairs(path: Path) -> list[PairRow]:
    """Rows written by :func:`make_pairs` (``pairs.jsonl``, or gzipped as a kit carries them)."""
    import gzip

    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [PairRow(**json.loads(line)) for line in f if line.strip()]


def add_parser(dsub: Any) -> None:
    """``purr data rerank-pairs``."""
    from training.args import positive_int

    p = dsub.add_parser(
        "rerank-pairs", help="the pairs research ranks, with the teacher reranker's logits"
    )
    p.add_argument("--out", required=True, help="folder for pairs.jsonl and summary.json")
    p.add_argument(
        "--data-dir", default=None, help="the shared/data folder (default ../shared/data)"
    )
    option(p, "--generated", positive_int, 1000, "corpus sentences researched")
    option(p, "--questions", positive_int, 500, "NQ-open questions researched")
    option(
        p,
        "--skip",
        int,
        100,
        "questions of each source left out first (a `purr data real-errors --n SKIP` set)",
    )
    option(p, "--depth", positive_int, 16, "windows scored per query")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(handler=_run)


def _run(args: Any) -> int:
    from training.args import check_data_dir
    from training.data.nli import default_data_dir

    check_data_dir(args.data_dir)
    data = Path(args.data_dir) if args.data_dir else default_data_dir()
    summary = make_pairs(
        data,
        Path(args.out),
        n_generated=args.generated,
        n_questions=args.questions,
        skip=args.skip,
        depth=args.depth,
        seed=args.seed,
    )
    print(json.dumps(summary))
    return 0
