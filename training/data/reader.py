"""Rows for the extractive reader: questions with a passage and the answer's span in it.

Read from the shared data folder (``../shared/data/raw``; see its README): SQuAD v1.1 train,
SQuADShifts (newer Wikipedia, Amazon reviews, Reddit), QED (Natural Questions) and PolicyQA
(privacy policies) to train on; XQuAD English (a subset of SQuAD v1.1 dev) and SQuAD 2.0 dev
(its unanswerable questions) to test on. Every article of those two is a SQuAD dev article,
so nothing here trains on SQuAD dev.

"No answer in this window" is taught by two kinds of negatives made from the train rows:
- ``other``: the question against another paragraph of its article (SQuAD 2.0's recipe);
- ``dropped``: the question against its own paragraph with the sentence holding the answer
  taken out (the same topic, the same names, the answer gone: the harder kind);
- ``swapped``: the question with a name or number that its passage holds swapped for another
  of the passage's, of the same shape (SQuAD 2.0's entity-swap kind: the passage answers a
  question about the one, not about the other).
"""

from __future__ import annotations

import gzip
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

TRAIN_SOURCES = ("squad", "new_wiki", "amazon_reviews", "reddit", "qed", "policyqa")
_FILES = {
    "squad": "squad/squad-v1.1-train.json.gz",
    "new_wiki": "squadshifts/new_wiki_v1.0.json.gz",
    "amazon_reviews": "squadshifts/amazon_reviews_v1.0.json.gz",
    "reddit": "squadshifts/reddit_v1.0.json.gz",
    "policyqa": "policyqa/dev.json.gz",
    "policyqa_test": "policyqa/test.json.gz",
    "xquad": "xquad/xquad.en.json",
    "squad2_dev": "squad/squad-v2.0-dev.json.gz",
}


@dataclass(frozen=True)
class QARow:
    """One question on one passage; ``answers`` are ``(text, start)`` in ``context`` (empty:
    the passage does not answer it)."""

    question: str
    context: str
    answers: tuple[tuple[str, int], ...]
    article: str
    source: str
    kind: str = "answer"  # answer | other | dropped | swapped | unanswerable

    @property
    def answerable(self) -> bool:
        return bool(self.answers)


def raw_dir(data_dir: Path | None = None) -> Path:
    """The shared raw data folder (``../shared/data/raw`` from the project root)."""
    path = Path(data_dir) if data_dir else Path(__file__).resolve().parents[2] / "../shared/data"
    path = path / "raw" if (path / "raw").is_dir() else path
    if not (path / "squad").is_dir():
        raise FileNotFoundError(
            f"{path}: no SQuAD-family data here; pass --data the shared data folder "
            "(the one with raw/squad/ in it)"
        )
    return path


def _open(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open("rb")


def read_squad(path: Path, source: str) -> list[QARow]:
    """Rows of a SQuAD-format file (v1.1 or v2.0: ``is_impossible`` rows have no answers)."""
    with _open(path) as f:
        data = json.load(f)["data"]
    rows = []
    for article in data:
        for para in article["paragraphs"]:
            ctx = para["context"]
            for qa in para["qas"]:
                answers = tuple(
                    (a["text"], int(a["answer_start"]))
                    for a in qa.get("answers", [])
                    if ctx[int(a["answer_start"]) : int(a["answer_start"]) + len(a["text"])]
                    == a["text"]
                )
                impossible = bool(qa.get("is_impossible", False))
                if not answers and not impossible:
                    continue  # an answer whose offset does not match its passage
                kind = "unanswerable" if impossible else "answer"
                rows.append(
                    QARow(
                        qa["question"],
                        ctx,
                        () if impossible else answers,
                        article.get("title", ""),
                        source,
                        kind,
                    )
                )
    return rows


def read_qed(path: Path) -> list[QARow]:
    """QED rows (Natural Questions' question, passage and short answer spans)."""
    rows = []
    with _open(path) as f:
        for line in f:
            r = json.loads(line)
            ctx = r["paragraph_text"]
            spans = [tuple(x) for x in r.get("answer_spans", [])]
            for annotator in r.get("original_nq_answers", []):  # the dev file: one per person
                spans += [(a["start"], a["end"]) for a in annotator]
            answers = tuple(
                dict.fromkeys((ctx[s:e], s) for s, e in spans if 0 <= s < e <= len(ctx))
            )
            if answers:
                rows.append(QARow(r["question_text"] + "?", ctx, answers, r["title_text"], "qed"))
    return rows


def load(source: str, data_dir: Path | None = None) -> list[QARow]:
    """The rows of one source: a name of ``TRAIN_SOURCES``, ``xquad``, ``squad2_dev``,
    ``policyqa_test`` or ``qed_dev``."""
    root = raw_dir(data_dir)
    if source in ("qed", "qed_dev"):
        return read_qed(root / f"qed/qed-{'dev' if source == 'qed_dev' else 'train'}.jsonl.gz")
    if source not in _FILES:
        raise ValueError(f"unknown reader source {source!r}; use one of {sorted(_FILES)}")
    return read_squad(root / _FILES[source], source)


def test_contexts(data_dir: Path | None = None) -> set[str]:
    """The passages of XQuAD English, kept out of every no-answer test."""
    return {r.context for r in load("xquad", data_dir)}


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of a passage's sentences (a light splitter: training data only).

    >>> sentences("It rained. Then it stopped.")
    [(0, 10), (11, 27)]
    """
    out, at = [], 0
    for m in _SENTENCE.finditer(text):
        out.append((at, m.start()))
        at = m.end()
    out.append((at, len(text)))
    return [(a, b) for a, b in out if b > a]


def dropped(row: QARow) -> QARow | None:
    """``row``'s question against its passage without the sentences holding any answer, or
    None when too little of the passage would be left."""
    spans = sentences(row.context)
    keep = [(a, b) for a, b in spans if not any(s < b and s + len(t) > a for t, s in row.answers)]
    if len(keep) < 2 or len(keep) == len(spans):
        return None
    ctx = " ".join(row.context[a:b] for a, b in keep)
    if any(t.lower() in ctx.lower() for t, _ in row.answers):
        return None  # the answer stands elsewhere too: not a negative
    return replace(row, context=ctx, answers=(), kind="dropped")


def other_paragraph(row: QARow, paragraphs: list[str], rng: random.Random) -> QARow | None:
    """``row``'s question against another paragraph of its article that does not contain the
    answer's text."""
    pool = [p for p in paragraphs if p != row.context]
    rng.shuffle(pool)
    for ctx in pool[:3]:
        if not any(t.lower() in ctx.lower() for t, _ in row.answers):
            return replace(row, context=ctx, answers=(), kind="other")
    return None


_MENTION = re.compile(
    r"\b(?:[A-Z][\w'\u2019-]+(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w'\u2019-]+)*|\d[\d,.]*\d|\d)\b"
)
_WORDS = frozenset(
    "what who whom whose when where which why how in on at the a an is was were did does do "
    "during after before for by of to from as if".split()
)


def _shape(mention: str) -> str:
    """``year``, ``number`` or ``name``: a mention is swapped only for one of its shape."""
    if mention.isdigit() and len(mention) == 4 and mention[0] in "12":
        return "year"
    return "number" if mention[0].isdigit() else "name"


def mentions(text: str) -> list[tuple[int, int, str]]:
    """Names (capitalised runs) and numbers in ``text`` as ``(start, end, shape)``.

    >>> mentions("When did Marie Curie win in 1911? At the Sorbonne.")
    [(9, 20, 'name'), (28, 32, 'year'), (41, 49, 'name')]
    """
    out = []
    for m in _MENTION.finditer(text):
        start, words = m.start(), m.group().split(" ")
        while words and words[0].lower() in _WORDS:  # "The Council", "At the Council"
            start += len(words.pop(0)) + 1
        if words:
            out.append((start, m.end(), _shape(" ".join(words))))
    return out


def _opens_sentence(text: str, start: int, end: int) -> bool:
    """A single capitalised word that opens a sentence ("They", "Among"): no name."""
    return (
        " " not in text[start:end]
        and not text[start].isdigit()
        and (start == 0 or text[:start].rstrip()[-1:] in ".!?\"'")
    )


def swapped(row: QARow, rng: random.Random) -> QARow | None:
    """``row``'s question with one mention that its passage also holds swapped for another
    mention of the passage of the same shape (not in the question, not in an answer), or None
    when there is none."""
    found = [(a, b, k) for a, b, k in mentions(row.question) if row.question[a:b] in row.context]
    if not found:
        return None
    a, b, kind = rng.choice(found)
    said = row.question[a:b]
    q = row.question.lower()
    pool = sorted(
        {
            row.context[s:e]
            for s, e, k in mentions(row.context)
            if k == kind
            and not _opens_sentence(row.context, s, e)
            and row.context[s:e].lower() not in q
            and said.lower() not in row.context[s:e].lower()
            and not any(s < x + len(t) and x < e for t, x in row.answers)
        }
    )
    if not pool:
        return None
    question = row.question[:a] + rng.choice(pool) + row.question[b:]
    return replace(row, question=question, answers=(), kind="swapped")


def training_rows(
    data_dir: Path | None = None,
    sources: tuple[str, ...] = TRAIN_SOURCES,
    negatives: float = 0.5,
    seed: int = 0,
    swap: float = 0.0,
) -> list[QARow]:
    """Every train row of ``sources`` plus ``negatives`` as many no-answer rows (``swap`` of
    them ``swapped`` where the row allows, the rest half ``dropped``, half ``other``),
    shuffled with ``seed``."""
    rng = random.Random(seed)
    rows: list[QARow] = []
    for source in sources:
        rows.extend(load(source, data_dir))
    by_article: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        paras = by_article.setdefault((r.source, r.article), [])
        if not paras or paras[-1] != r.context:
            paras.append(r.context)
    negs: list[QARow] = []
    for r in rng.sample(rows, min(len(rows), int(len(rows) * negatives))):
        made = swapped(r, rng) if swap and rng.random() < swap else None
        made = made or (dropped(r) if rng.random() < 0.5 else None)
        made = made or other_paragraph(r, by_article[(r.source, r.article)], rng)
        if made is not None:
            negs.append(made)
    out = rows + negs
    rng.shuffle(out)
    return out


def dev_rows(data_dir: Path | None = None, n: int = 400, seed: int = 1) -> Iterator[QARow]:
    """A small tuning slice that is not a test: QED dev (answerable) and, for "no answer",
    the ``other`` negatives of the same rows."""
    rng = random.Random(seed)
    rows = load("qed_dev", data_dir)
    rng.shuffle(rows)
    paras = [r.context for r in rows]
    for r in rows[: n // 2]:
        yield r
        neg = other_paragraph(r, paras, rng)
        if neg is not None:
            yield neg
