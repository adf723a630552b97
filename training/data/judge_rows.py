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

- **SummEdits** (``edits/summedits.jsonl``): summaries with an error an LLM inserted and people
  confirmed, and the consistent summary it was made from (at most four per document); the same
  sentence pairing, the evidence the source document's passages; and the sentences of its
  consistent summaries (``nli/summedits.jsonl``), right. Only the documents ``purr data real-claims`` puts
  in its dev half are read (train / dev here), so its test half stays a held-out measure.

- **answers** (``--answers FILE ...`` of ``purr data real-errors --skip K``): the packaged
  models' own answers to real questions, right and wrong, each read with its question against
  its gold evidence; train / dev only (the measured real-answer sets stay out by ``--skip``). An
  edit of one is right when it gives a gold answer.

- **planted** (``--planted FILE`` of ``purr data planted``): passages of the embedded
  Wikipedia summaries with one error put in by rule (a date, number, name or role), paired
  the same way, the article's passages as evidence; train / dev only (``--exclude FILE``: the
  articles of a planted set kept for measuring are left out). Synthetic, in the domain of the
  embedded corpus.

Rows: ``{id, dataset, document, text, sentence, start, end, evidence, wrong, fix, error_type,
split}``: ``text`` the whole summary (the context the sentence is read in), ``[start, end)``
the sentence in it, ``fix`` the right sentence (None for a right one); answer rows add
``context`` (the question), ``answers`` and ``qa_source``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from editor.text.words import content_words
from editor.verdicts import SUPPORTED
from retrieval.sentences import split, split_spans

SPLITS = ("train", "dev", "test")
MAX_PER_DOCUMENT = 4
"""SummEdits edits of one document kept (it has about ten of each)"""


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


def summedits_rows(data: Path) -> Iterator[dict[str, Any]]:
    """The sentences of SummEdits' summaries with an inserted error (``edits/summedits.jsonl``),
    of the documents ``purr data real-claims`` keeps for dev only (its test stays unread)."""
    from training.data.real_claims import split_of as claims_split

    right_seen: set[tuple[str, str]] = set()
    per_doc: dict[str, int] = {}

    def doc_of(evidence: str) -> str:
        return "summedits-" + hashlib.md5(evidence.encode("utf-8")).hexdigest()[:12]

    for line in (data / "edits" / "summedits.jsonl").read_text("utf-8").splitlines():
        item = json.loads(line)
        if claims_split(item["evidence"]) != "dev":
            continue
        doc = doc_of(item["evidence"])
        pairs = _aligned(item["original"].strip(), item["gold"].strip())
        if pairs is None or per_doc.get(doc, 0) >= MAX_PER_DOCUMENT:
            continue
        per_doc[doc] = per_doc.get(doc, 0) + 1
        split = "train" if split_of(doc) == "train" else "dev"  # its test: real-claims'
        for k, (text, (a, b), reference, (c, d)) in enumerate(pairs):
            yield from _pair_rows(
                f"summedits-{item['id']}-{k}", "summedits", doc, item["evidence"], split,
                (text, a, b), (reference, c, d), None, right_seen,
            )  # fmt: skip
    for line in (data / "nli" / "summedits.jsonl").read_text("utf-8").splitlines():
        r = json.loads(line)  # consistent summaries: every sentence right
        if r["label"] != SUPPORTED or claims_split(r["premise"]) != "dev":
            continue
        doc = doc_of(r["premise"])
        split = "train" if split_of(doc) == "train" else "dev"
        for k, (a, b) in enumerate(split_spans(r["hypothesis"])):
            sentence = r["hypothesis"][a:b]
            if (doc, sentence) in right_seen:
                continue
            right_seen.add((doc, sentence))
            yield {"dataset": "summedits", "document": doc, "split": split, "error_type": None,
                   "id": f"summedits-ok-{r['id']}-{k}", "text": r["hypothesis"],
                   "sentence": sentence, "start": a, "end": b, "wrong": False, "fix": None,
                   "evidence": passages(sentence, r["premise"])}  # fmt: skip


def _aligned(edited: str, reference: str):
    """The summaries' sentences paired, or None where the edit split or joined one."""
    spans, ref = split_spans(edited), split_spans(reference)
    if edited == reference or len(spans) != len(ref):
        return None
    return [(edited, s, reference, r) for s, r in zip(spans, ref, strict=True)]


def _pair_rows(rid, dataset, doc, article, split, edited, reference, error_type, right_seen):
    """The rows of one aligned pair of sentences: the edited one when it differs (wrong, with
    the reference's as its fix), and the reference's (right) once per document."""
    text, a, b = edited
    ref_text, c, d = reference
    sentence, right = text[a:b], ref_text[c:d]
    base = {"dataset": dataset, "document": doc, "split": split, "error_type": None}
    if sentence != right:
        yield {**base, "id": rid, "text": text, "sentence": sentence, "start": a, "end": b,
               "evidence": passages(sentence, article), "wrong": True, "fix": right,
               "error_type": error_type}  # fmt: skip
    if (doc, right) not in right_seen:
        right_seen.add((doc, right))
        yield {**base, "id": f"{rid}-ref", "text": ref_text, "sentence": right, "start": c,
               "end": d, "evidence": passages(right, article), "wrong": False, "fix": None}  # fmt: skip


def planted_rows(path: Path, exclude: Path | None = None) -> Iterator[dict[str, Any]]:
    """The sentences of ``purr data planted`` passages (train / dev only), their evidence the
    article's passages; articles of the ``exclude`` rows (a planted set kept for measuring)
    are left out."""
    from retrieval.corpus import DEFAULT_CORPUS, read_corpus

    def rows(p: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in p.read_text("utf-8").splitlines() if line.strip()]

    skip = {r["title"] for r in rows(exclude)} if exclude else set()
    articles = {d.title: d.text for d in read_corpus([DEFAULT_CORPUS])}
    right_seen: set[tuple[str, str]] = set()
    for item in rows(path):
        title = item.get("title")
        if title in skip or title not in articles:
            continue
        doc = f"planted-{title}"
        text, reference = item["text"], item["reference"]
        spans = split_spans(reference)
        pairs = _aligned(text, reference) if text != reference else [
            (reference, s, reference, s) for s in spans
        ]  # fmt: skip
        if pairs is None:
            continue
        split = "train" if split_of(doc) == "train" else "dev"
        for k, (t, (a, b), ref, (c, d)) in enumerate(pairs):
            yield from _pair_rows(
                f"{item['id']}-{k}", "planted", doc, articles[title], split,
                (t, a, b), (ref, c, d), item.get("error_type"), right_seen,
            )  # fmt: skip


def answer_rows(paths: Sequence[Path]) -> Iterator[dict[str, Any]]:
    """The packaged models' own answers (``purr data real-errors`` rows, made with ``--skip``
    so that no evidence document of a measured set is among them): each answer one row, read
    with its question, its gold evidence as evidence; train / dev by evidence document. No fix
    sentence is known: an edit is right when it gives a gold answer (``answers``)."""
    for path in paths:
        for line in path.read_text("utf-8").splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            title, text = r["evidence_title"], r["text"]
            doc = f"answer-{title}"
            yield {
                "id": f"{r['id']}",
                "dataset": f"llm-{r['model']}",
                "document": doc,
                "text": text,
                "context": r["context"],
                "sentence": text,
                "start": 0,
                "end": len(text),
                "evidence": f"{title}. {r['evidence_text']}",
                "wrong": bool(r["wrong"]),
                "fix": None,
                "answers": r["answers"],
                "qa_source": r["source"],
                "error_type": None,
                "split": "train" if split_of(doc) == "train" else "dev",
            }


def judge_rows(
    data: Path,
    planted: Path | None = None,
    exclude: Path | None = None,
    answers: Sequence[Path] = (),
) -> list[dict[str, Any]]:
    """Every row (see the module doc); with ``planted``, its passages' sentences too; with
    ``answers``, the packaged models' answers."""
    rows = [*bump_rows(data), *summedits_rows(data)]
    if planted:
        rows += list(planted_rows(planted, exclude))
    return rows + list(answer_rows(answers))
