"""Labelled sentences for training and measuring the judge on errors people wrote: each row a
sentence of a text, the evidence it should rest on, whether it is wrong, and its fix.

``purr data judge-rows --out DIR`` writes ``DIR/{train,dev,test}.jsonl``, split by source
document (about 60 / 20 / 20; no document in two splits; ``test`` is for the final figures
only, no choice is tuned on it):

- **BUMP** (``raw/bump/task{1,2}_dataset.json``): a CNN/DailyMail summary with one error a
  person put in, and the reference it was made from. The summaries are split into sentences;
  where both have the same number, the sentence that differs is wrong (its fix: the reference
  sentence); every sentence of the reference, read in the reference, is right (it must stay as
  it is; each kept once per article). The evidence is what research would give from the article:
  its passages that share the most words with the sentence (``passages``: two windows of four
  sentences, about 800 characters).

Rows: ``{id, dataset, document, text, sentence, start, end, evidence, wrong, fix, error_type,
split}``: ``text`` the whole summary (the context the sentence is read in), ``[start, end)``
the sentence in it, ``fix`` the right sentence (None for a right one).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from editor.text.words import content_words
from retrieval.sentences import split, split_spans

SPLITS = ("train", "dev", "test")


def passages(sentence: str, article: str, windows: int = 2, size: int = 4) -> str:
    """The article's passages about ``sentence``, as research would give them: of its windows of
    ``size`` sentences (stride ``size // 2``), the ``windows`` sharing the most content words
    with it, their sentences once each, in the article's order.

    >>> art = "Ann sang. Bob ran. Cy ate fish. Di slept. Ed cooked fish. Fay left."
    >>> passages("Cy ate fish", art, windows=1, size=2)
    'Bob ran. Cy ate fish.'
    """
    sents = split(article) or [article]
    step = max(1, size // 2)
    words = content_words(sentence)
    starts = range(0, max(1, len(sents) - size + step), step)
    ranked = sorted(
        starts, key=lambda i: (-len(words & content_words(" ".join(sents[i : i + size]))), i)
    )
    keep = sorted({j for i in ranked[:windows] for j in range(i, min(i + size, len(sents)))})
    return " ".join(sents[j] for j in keep)


def split_of(document: str) -> str:
    """``train``, ``dev`` or ``test`` (about 60 / 20 / 20), fixed by the source document.

    >>> split_of("cnn-628"), split_of("cnn-628") == split_of("cnn-628")
    ('train', True)
    """
    bucket = hashlib.md5(document.encode("utf-8")).digest()[0] % 10
    return "train" if bucket < 6 else "dev" if bucket < 8 else "test"


def bump_rows(data: Path) -> Iterator[dict[str, Any]]:
    """The sentences of BUMP's edited summaries (see the module doc)."""
    seen: set[tuple[str, str]] = set()
    right_seen: set[tuple[str, str]] = set()  # a reference sentence is in many of its items
    for task in (1, 2):
        path = data / "raw" / "bump" / f"task{task}_dataset.json"
        for item in json.loads(path.read_text("utf-8")):
            doc = f"bump-{item['article_id']}"
            edited, reference = item["edited_summary"].strip(), item["reference_summary"].strip()
            if edited == reference or (doc, edited) in seen:
                continue
            seen.add((doc, edited))
            spans, ref = split_spans(edited), split_spans(reference)
            if len(spans) != len(ref):
                continue  # the edit split or joined a sentence: no sentence pairs with another
            split = split_of(doc)
            for k, ((a, b), (c, d)) in enumerate(zip(spans, ref, strict=True)):
                sentence, right = edited[a:b], reference[c:d]
                wrong = sentence != right
                base = {"dataset": "bump", "document": doc}
                if wrong:  # the sentence with the person's error, and its fix
                    yield {
                        **base,
                        "id": f"bump{task}-{item['id']}-{k}",
                        "text": edited,
                        "sentence": sentence,
                        "start": a,
                        "end": b,
                        "evidence": passages(sentence, item["article"]),
                        "wrong": True,
                        "fix": right,
                        "error_type": item.get("error_type"),
                        "split": split,
                    }
                if (doc, right) in right_seen:
                    continue
                right_seen.add((doc, right))  # a right sentence, read in the reference summary
                yield {
                    **base,
                    "id": f"bump{task}-{item['id']}-{k}-ref",
                    "text": reference,
                    "sentence": right,
                    "start": c,
                    "end": d,
                    "evidence": passages(right, item["article"]),
                    "wrong": False,
                    "fix": None,
                    "error_type": None,
                    "split": split,
                }


def judge_rows(data: Path) -> list[dict[str, Any]]:
    """Every row (see the module doc)."""
    return list(bump_rows(data))


def write_rows(data: Path, out: Path) -> dict[str, dict[str, int]]:
    """Write the rows of each split to ``out/SPLIT.jsonl``; the counts (wrong / right)."""
    out.mkdir(parents=True, exist_ok=True)
    rows = judge_rows(data)
    counts: dict[str, dict[str, int]] = {}
    for part in SPLITS:
        mine = [r for r in rows if r["split"] == part]
        with (out / f"{part}.jsonl").open("w", encoding="utf-8") as f:
            for r in mine:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        counts[part] = {
            "wrong": sum(r["wrong"] for r in mine),
            "right": sum(not r["wrong"] for r in mine),
            "documents": len({r["document"] for r in mine}),
        }
    return counts
