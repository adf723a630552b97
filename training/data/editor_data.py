"""``purr data make``: PURR's synthetic denoising data for training editors.

For each seed: research the query against an index; snippets the cross-encoder finds relevant
(``relevance >= --relevance``) form the gold evidence E+ (at most 4), the others are hard
negatives E- (at most 4, other documents first); the clean statement ``y`` is an LLM's one-line
summary of E+ (``--summarizer llm``) or, without an LLM, a sentence of the source (corpus seeds:
the seed sentence itself, which must be among E+; query seeds: the sentence of the best E+
snippet sharing most words with the query); the corrupted ``x`` comes from a corruptor
(``rules`` or ``llm``, training/data/corrupt.py). Kept only when ``x != y``, the edit is small
(Levenshtein preservation >= 0.5, at most ``--max-edit-chars`` changed), the attribution model
does *not* find ``x`` supported by E+ (P(supported) < ``--max-supported``), and ``(y, x)`` is new.

Rows: ``{id, seed_id, query, evidence_pos, evidence_neg, clean, corrupted, corruption_types,
source}``; with ``--variants N`` a seed gives up to N rows (distinct corruptions of the same clean
statement, one research call), ids ``<seed>``, ``<seed>~v1``, ...
Deterministic for a ``--seed`` (each seed has its own random stream); resumable: seeds already
written to the output, or recorded as skipped in ``<out>.skipped.jsonl``, are not redone.
"""

from __future__ import annotations

import itertools
import logging
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from tqdm.auto import tqdm

from editor.report.metrics import preservation
from editor.text.words import NUMBER_WORD, content_words
from editor.types import Query
from retrieval.files import RowJournal, read_rows
from retrieval.sentences import split
from retrieval.types import Hit
from training.data.corrupt import Corruption
from training.data.seeds import Seed

log = logging.getLogger(__name__)


def _snippet_text(h: Hit) -> str:
    s = h.snippet
    return f"{s.title}. {s.text}" if s.title and not s.text.startswith(s.title) else s.text


def _best_sentence(query: str, text: str) -> str | None:
    target = content_words(query, NUMBER_WORD)
    sents = [s for s in split(text) if 6 <= len(s.split()) <= 40]
    if not sents:
        return None
    return max(
        sents,
        key=lambda s: (len(content_words(s, NUMBER_WORD) & target), -abs(len(s.split()) - 20)),
    )


class _Prepared(NamedTuple):
    clean: str
    pos: list[str]
    neg: list[str]


@dataclass(eq=False)
class EditorDataMaker:
    """Turns seeds into training rows (see the module doc)."""

    researcher: Any
    attribution: Any
    corruptor: Any
    summarizer: Any = None
    relevance: float = 0.5
    max_pos: int = 4
    max_neg: int = 4
    max_supported: float = 0.5
    max_edit_chars: int = 80
    held_out: Callable[[str], bool] | None = None
    """documents (ids) whose snippets never enter a row: a dev split"""
    _seen: set[tuple[str, str]] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0 <= self.relevance <= 1:
            raise ValueError(f"relevance threshold must be in [0, 1], got {self.relevance}")

    def remember(self, clean: str, corrupted: str) -> None:
        """A pair already written (resuming): later duplicates of it are skipped."""
        self._seen.add((clean, corrupted))

    def evidence(self, query: str) -> tuple[list[Hit], list[Hit]]:
        [qe] = self.researcher.research_queries([Query(query, "seed")])
        ranked = [h for h in qe.hits if not (self.held_out and self.held_out(h.snippet.doc_id))]
        pos = [h for h in ranked if (h.relevance or 0.0) >= self.relevance][: self.max_pos]
        pos_docs = {h.snippet.doc_id for h in pos}
        rest = [h for h in ranked if h not in pos]
        neg = [h for h in rest if h.snippet.doc_id not in pos_docs]
        neg += [h for h in rest if h.snippet.doc_id in pos_docs]
        return pos, neg[: self.max_neg]

    def make(
        self, seed: Seed, rng: random.Random, variants: int = 1
    ) -> list[tuple[dict[str, Any] | None, str]]:
        """Up to ``variants`` rows for ``seed`` (distinct corruptions of one clean statement
        sharing one research call), each ``(row, "ok")`` or ``(None, why it was skipped)``."""
        return self.make_many([seed], [rng], variants)[0]

    def _prepare(self, seed: Seed) -> _Prepared | str:
        """The clean statement and evidence of a seed, or why it has none."""
        if seed.evidence is not None:
            e_pos, e_neg = list(seed.evidence[0]), list(seed.evidence[1])
            if not seed.clean or not e_pos:
                return "no relevant evidence"
            return _Prepared(seed.clean, e_pos, e_neg)
        pos, neg = self.evidence(seed.query)
        if not pos:
            return "no relevant evidence"
        e_pos = [_snippet_text(h) for h in pos]
        e_neg = [_snippet_text(h) for h in neg]
        clean: str | None
        if seed.clean is not None:
            clean = seed.clean
            if not any(" ".join(clean.split()) in " ".join(h.snippet.text.split()) for h in pos):
                return "source sentence not among the relevant evidence"
        elif self.summarizer is not None:
            clean = self.summarizer.summarize(seed.query, e_pos)
        else:
            clean = _best_sentence(seed.query, pos[0].snippet.text)
        return _Prepared(clean, e_pos, e_neg) if clean else "no clean statement"

    def make_many(
        self, seeds: list[Seed], rngs: list[random.Random], variants: int = 1
    ) -> list[list[tuple[dict[str, Any] | None, str]]]:
        """``make`` for several seeds: one corruptor call (an LLM batches its prompts) and one
        attribution batch for all of them. Same rows as seed by seed."""
        prepared = [self._prepare(s) for s in seeds]
        requests = [
            (p.clean, p.neg, rng)
            for p, rng in zip(prepared, rngs, strict=True)
            if not isinstance(p, str)
            for _ in range(variants)
        ]
        corruptions = iter(self.corruptor.corrupt_batch(requests))
        outcomes: list[list[tuple[dict[str, Any] | None, str]]] = []
        kept: list[tuple[int, int, Corruption, _Prepared]] = []  # (seed, candidate index, ..)
        for i, p in enumerate(prepared):
            if isinstance(p, str):
                outcomes.append([(None, p)])
                continue
            outcomes.append([])
            mine: list[Corruption] = []
            for _ in range(variants):
                corruption = next(corruptions)
                why = self._reject(p.clean, corruption, mine)
                if why or corruption is None:
                    outcomes[i].append((None, why or "no corruption applies"))
                else:
                    mine.append(corruption)
            kept += [(i, k, c, p) for k, c in enumerate(mine)]
        pairs = [(e, c.text) for _, _, c, p in kept for e in p.pos]
        scores = iter([s.supported for s in self.attribution.score_batch(pairs)] if pairs else [])
        for i, k, corruption, (clean, e_pos, e_neg) in kept:
            seed = seeds[i]
            if max(next(scores) for _ in e_pos) >= self.max_supported:
                outcomes[i].append((None, "corruption still supported by the evidence"))
                continue
            self._seen.add((clean, corruption.text))
            # rows corrupted again from earlier rows (--from) get ids of their own
            base = seed.id if seed.evidence is None else f"{seed.id}~{self.corruptor.name}"
            row = {
                "id": base if not k else f"{base}~v{k}",
                "seed_id": seed.id,
                "query": seed.query,
                "evidence_pos": e_pos,
                "evidence_neg": e_neg,
                "clean": clean,
                "corrupted": corruption.text,
                "corruption_types": list(corruption.types),
                "source": self.corruptor.name,
            }
            outcomes[i].append((row, "ok"))
        return outcomes

    def _reject(
        self, clean: str, corruption: Corruption | None, earlier: list[Corruption]
    ) -> str | None:
        """Why a corruption is unusable before the attribution check, or None."""
        if corruption is None or corruption.text.strip() == clean.strip():
            return "no corruption applies"
        x = corruption.text
        changed = round(len(clean) * (1 - preservation(clean, x)))
        if preservation(clean, x) < 0.5 or changed > self.max_edit_chars:
            return "edit too large"
        if (clean, x) in self._seen or any(c.text == x for c in earlier):
            return "duplicate"
        return None


def previous_run(out: Path, skipped: Path) -> tuple[list[dict[str, Any]], set[str]]:
    """What an earlier run left: the rows written to ``out``, and the ids (``seed_id`` where
    rows have one) of everything written or skipped, which a resumed run does not redo (a cut
    last line, as a killed run can leave, is not a row)."""
    written: list[dict[str, Any]] = []
    done: set[str] = set()
    for path in (out, skipped):
        if path.exists():
            for row in read_rows(path):
                done.add(str(row.get("seed_id", row["id"])))
                if path == out:
                    written.append(row)
    return written, done


def _drop_seen(
    outcomes: list[tuple[dict[str, Any] | None, str]], seen: set[tuple[str, str]]
) -> list[tuple[dict[str, Any] | None, str]]:
    """A seed's outcomes with the rows another worker already made turned into duplicates;
    the rows kept are added to ``seen``."""
    out: list[tuple[dict[str, Any] | None, str]] = []
    for row, why in outcomes:
        if row is not None:
            pair = (row["clean"], row["corrupted"])
            if pair in seen:
                row, why = None, "duplicate"
            else:
                seen.add(pair)
        out.append((row, why))
    return out


def batch_outcomes(
    maker: EditorDataMaker, batch: list[Seed], seed: int, variants: int
) -> list[list[tuple[dict[str, Any] | None, str]]]:
    """``maker.make_many`` on one batch, each seed with its own seeded random generator (the
    same rows wherever the batch runs)."""
    rngs = [random.Random(f"{seed}:{s.id}") for s in batch]
    return maker.make_many(batch, rngs, variants)


def make_file(
    maker: EditorDataMaker | None,
    seeds: Iterable[Seed],
    out: Path,
    n: int,
    seed: int = 0,
    progress: bool = True,
    variants: int = 1,
    batch_size: int = 1,
    exclude: Iterable[Path] = (),
    stop: Any = None,
    run_batches: Callable[[Iterator[list[Seed]]], Iterator[tuple[list[Seed], list[Any]]]]
    | None = None,
) -> dict[str, Any]:
    """Write up to ``n`` rows to ``out`` (appending to a previous run), up to ``variants``
    corruptions per seed, ``batch_size`` seeds at a time (one corruptor call and one attribution
    batch each: an LLM corruptor wants 16 or more); seeds of the ``exclude`` files (earlier runs'
    rows, with their ``.skipped.jsonl``) are not redone; counts and the rate. Both files are
    ``RowJournal``s (a killed run resumes); ``stop`` (a ``GracefulStop``) ends it between batches.
    ``run_batches`` computes the batches elsewhere (Ray actors, ``batch_outcomes`` on each),
    returning them in order; rows another worker already made are then skipped here."""
    if variants < 1:
        raise ValueError(f"variants must be >= 1, got {variants}")
    if maker is None and run_batches is None:
        raise ValueError("make_file needs a maker, or run_batches that computes the batches")
    if batch_size < 1:
        raise ValueError(f"batch size must be >= 1, got {batch_size}")
    skipped_path = out.with_name(out.name + ".skipped.jsonl")
    for path in exclude:
        if not path.is_file():
            raise FileNotFoundError(f"--exclude {path}: no such file")
    with RowJournal(out) as f, RowJournal(skipped_path) as sk:
        written = f.rows
        done = {str(r.get("seed_id", r["id"])) for r in written} | {str(r["id"]) for r in sk.rows}
        for path in exclude:
            done |= previous_run(path, path.with_name(path.name + ".skipped.jsonl"))[1]
        made = len(written)
        for old in written if maker is not None else ():
            maker.remember(old["clean"], old["corrupted"])
        reasons: Counter[str] = Counter()
        types: Counter[str] = Counter()
        started = time.perf_counter()
        new_rows = seeds_tried = 0
        bar = tqdm(
            total=n, initial=min(made, n), desc="editor data", unit="row", disable=not progress
        )
        todo = (s for s in seeds if s.id not in done)
        seen = {(r["clean"], r["corrupted"]) for r in written}  # with run_batches only

        def batches() -> Iterator[list[Seed]]:
            while True:
                batch = list(itertools.islice(todo, batch_size))
                if not batch:
                    return
                yield batch

        def stopped() -> bool:
            return made >= n or (stop is not None and stop.requested)

        results = (
            run_batches(batches())
            if run_batches is not None
            else ((b, batch_outcomes(maker, b, seed, variants)) for b in batches())
        )
        for batch, outcomes_of_batch in results if not stopped() else ():
            done.update(s.id for s in batch)
            seeds_tried += len(batch)
            for s, outcomes in zip(batch, outcomes_of_batch, strict=True):
                if run_batches is not None:  # each worker remembers only its own rows
                    outcomes = _drop_seen(outcomes, seen)
                kept = []
                for row, why in outcomes:
                    reasons[why] += 1
                    if row is None or made + len(kept) >= n:
                        continue
                    kept.append(row)
                f.write_many(kept)  # a seed's variants in one write: all of them or none
                for row in kept:
                    types.update(row["corruption_types"])
                made += len(kept)
                new_rows += len(kept)
                bar.update(len(kept))
                if not any(row for row, _ in outcomes):
                    sk.write({"id": s.id, "reason": outcomes[0][1]})
            f.sync()
            sk.sync()
            if stopped():
                break
        results.close()  # batches still in flight elsewhere are dropped now
    bar.close()
    minutes = (time.perf_counter() - started) / 60
    return {
        "rows": made,
        "new_rows": new_rows,
        "redone": f.redone,
        "partial": str(f.partial) if f.partial else None,
        "interrupted": bool(stop is not None and stop.requested),
        "rows_per_minute": round(new_rows / minutes, 1) if minutes > 0 else None,
        "seeds_tried": seeds_tried,
        "outcomes": dict(reasons),
        "corruption_types": dict(types),
    }
