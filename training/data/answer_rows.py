"""Question rows for the judge's reader head: an answer written from a document, right or with
the wrong value taken from elsewhere in the same document.

From SQuAD-family passages the reader never trained on (SQuAD 2.0 dev's answerable questions,
XQuAD's passages left out): the sentence that holds the gold answer is the text, the question
its context, the passage the evidence; its wrong twin puts in another span of the same entity
label from the passage, preferably from another sentence (the "elsewhere" error: the wrong value
stands in the evidence, so every word of the text does). Rows are split by article.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrieval.sentences import split_spans


@dataclass(frozen=True)
class AnswerRow:
    """One answer: ``text`` answers ``question`` from ``evidence``; ``gold`` its right answers;
    ``wrong``: the text states another value (``said``) in place of the gold one."""

    question: str
    text: str
    evidence: str
    gold: tuple[str, ...]
    wrong: bool
    said: str
    article: str


def _twins(row: Any, doc: Any, rng: random.Random) -> Iterator[AnswerRow]:
    from editor.claims.answer_types import labels_at
    from editor.judge.answer_match import same_answer

    text, start = row.answers[0]
    end = start + len(text)
    ctx = row.context
    sent = next(((a, b) for a, b in split_spans(ctx) if a <= start < b), None)
    if sent is None or end > sent[1]:
        return
    a, b = sent
    gold = tuple(dict.fromkeys(t for t, _ in row.answers))
    sentence = ctx[a:b].strip()
    yield AnswerRow(row.question, sentence, ctx, gold, False, text, row.article)
    labels = labels_at(doc, start, end)
    if not labels:
        return
    others = [
        e
        for e in doc.ents
        if e.label_ in labels
        and (e.end_char <= start or e.start_char >= end)
        and not any(same_answer(g, e.text) for g in gold)
    ]
    if not others:
        return
    elsewhere = [e for e in others if not a <= e.start_char < b]
    e = rng.choice(elsewhere or others)
    wrong = (ctx[a:start] + e.text + ctx[end:b]).strip()
    yield AnswerRow(row.question, wrong, ctx, gold, True, e.text, row.article)


def document_rows(path: Path) -> dict[str, list[AnswerRow]]:
    """A documents set (``training/eval/documents.jsonl``'s shape) split in two by id: the rows
    of even number train, of odd number dev."""
    import json

    out: dict[str, list[AnswerRow]] = {"train": [], "dev": []}
    for line in path.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        number = int("".join(c for c in r["id"] if c.isdigit()) or 0)
        said = r.get("wrong_value") or r["answers"][0]
        row = AnswerRow(
            r["context"], r["text"], r["evidence"][0], tuple(r["answers"]), bool(r["wrong"]),
            said, r["id"],
        )  # fmt: skip
        out["train" if number % 2 == 0 else "dev"].append(row)
    return out


def real_rows(path: Path, share_dev: int = 5) -> dict[str, list[AnswerRow]]:
    """Real answers of ``purr data real-errors`` (a file of its rows: the question as
    ``context``, the gold ``answers`` and the passage that states one, ``evidence_text``), split
    by evidence passage (one in ``share_dev`` to dev)."""
    import json

    out: dict[str, list[AnswerRow]] = {"train": [], "dev": []}
    passages: dict[str, int] = {}
    for line in path.read_text("utf-8").splitlines():
        r = json.loads(line) if line.strip() else None
        if not r or not r.get("evidence_text") or not r.get("context"):
            continue
        k = passages.setdefault(r["evidence_text"], len(passages))
        row = AnswerRow(
            r["context"], r["text"], r["evidence_text"], tuple(r["answers"]), bool(r["wrong"]),
            "", r["id"],
        )  # fmt: skip
        out["dev" if k % share_dev == share_dev - 1 else "train"].append(row)
    return out


def answer_rows(
    data_dir: Path | None = None,
    paragraphs: int = 1500,
    seed: int = 0,
    sources: tuple[str, ...] = ("squad2_dev", "policyqa_test"),
) -> dict[str, list[AnswerRow]]:
    """``train`` and ``dev`` rows (dev: one article in five), one question per paragraph, at
    most ``paragraphs`` a source."""
    from training.data.reader import load, test_contexts

    out: dict[str, list[AnswerRow]] = {"train": [], "dev": []}
    held = test_contexts(data_dir)
    for source in sources:
        rows = [r for r in load(source, data_dir) if r.answers and r.context not in held]
        for split, part in _rows(rows, paragraphs, seed).items():
            out[split].extend(part)
    return out


def _rows(rows: list[Any], paragraphs: int, seed: int) -> dict[str, list[AnswerRow]]:
    from editor.text.nlp import get_nlp

    by_ctx: dict[str, list[Any]] = {}
    for r in rows:
        by_ctx.setdefault(r.context, []).append(r)
    rng = random.Random(seed)
    picked = [rng.choice(qs) for qs in by_ctx.values()]
    rng.shuffle(picked)
    picked = picked[:paragraphs]
    articles = sorted({r.article for r in picked})
    dev_articles = set(articles[::5])
    out: dict[str, list[AnswerRow]] = {"train": [], "dev": []}
    nlp = get_nlp()
    for r, doc in zip(picked, nlp.pipe(r.context for r in picked), strict=True):
        split = "dev" if r.article in dev_articles else "train"
        out[split].extend(_twins(r, doc, rng))
    return out
