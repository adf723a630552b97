"""Read every corpus on hand once with spaCy: the parsed documents ``make`` builds rows from.

One JSON line per document: ``{"doc", "source", "sents": [{"t", "e", "a", "n", "p"}]}`` with
each sentence's entities ``[start, end, label]``, adjectives right before a noun
``[start, end]``, starts of nouns with no modifier (where one may be put), and its rewording
(``training.data.nli_paraphrase``) or "". Corpora: the packaged Wikipedia summaries, SciFact's
abstracts, SummEdits' documents, the articles WiCE's train claims cite and FEVER's evidence
sentences. Documents of any dev or test set are left out here (``held_out``): CLAPnq (the
real-error sets read it), the dev split of every shared set (by its split group), WiCE's dev
and test articles, FEVER's dev claims' evidence, and the articles the statements suites are
about.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

from tqdm.auto import tqdm

from retrieval.sentences import split
from training.data.nli import group_key, is_dev, text_hash
from training.data.spans.rows import open_text

log = logging.getLogger(__name__)

SUITES = ("statements.jsonl", "statements_meaning.jsonl")
MIN_WORDS, MAX_WORDS = 5, 60


def wiki_summaries() -> dict[str, str]:
    from retrieval.corpus import read_wiki_summaries  # the embedded corpus's reader

    return {d.title: d.text for d in read_wiki_summaries()}


def suite_titles(eval_dir: Path) -> set[str]:
    """The articles a statements suite is about (its ``article`` key, else its words)."""
    out: set[str] = set()
    for name in SUITES:
        path = eval_dir / name
        if not path.is_file():
            continue
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out.add(str(row.get("article") or "").lower())
                out.add(str(row.get("reference", "")).lower())
    return out - {""}


def _about(title: str, suites: set[str]) -> bool:
    t = title.lower()
    return t in suites or any(len(t) > 3 and f"{t} " in s[: len(t) + 40] for s in suites)


def documents(data_dir: Path, eval_dir: Path) -> Iterator[tuple[str, str, str]]:
    """``(doc id, source, text)`` of every training document, dev and test ones left out."""
    suites = suite_titles(eval_dir)
    for title, text in wiki_summaries().items():
        if not _about(title, suites) and not is_dev(f"wiki:{title}"):
            yield f"wiki:{title}", "wiki", text
    for line in (data_dir / "corpus/scifact.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        if not is_dev(group_key("scifact", {"doc_id": row["id"]})):
            yield f"scifact:{row['id']}", "scifact", f"{row['title']}. {row['text']}"
    seen: set[str] = set()
    for line in (data_dir / "edits/summedits.jsonl").open(encoding="utf-8"):
        doc = json.loads(line)["evidence"]
        g = group_key("summedits", {"premise": doc})
        if g not in seen and not is_dev(g):
            seen.add(g)
            yield g, "summedits", doc
    for line in (data_dir / "raw/wice/nst_train.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        sents = [s for s in row["evidence"] if not s.startswith(("(meta data)", "#"))]
        text = " ".join(s.strip() for s in sents if len(s.split()) >= MIN_WORDS)
        h = text_hash(text)
        if text and h not in seen:
            seen.add(h)
            yield f"wice:{h}", "wice", text
    for line in (data_dir / "nli-extra/fever_nli.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        h = text_hash(row["premise"])
        if h not in seen and not is_dev(group_key("fever-nli", row)):
            seen.add(h)
            yield f"fever:{h}", "fever", row["premise"]


def _sentence(doc) -> dict:
    from training.data.nli_paraphrase import paraphrase

    text = doc.text
    ents = [[e.start_char, e.end_char, e.label_] for e in doc.ents]
    adjs, nouns = [], []
    for t in doc:
        if t.pos_ == "NOUN" and t.i > 0:
            prev = doc[t.i - 1]
            if prev.pos_ == "ADJ" and prev.dep_ == "amod":
                adjs.append([prev.idx, prev.idx + len(prev.text)])
            elif prev.pos_ == "DET":
                nouns.append(t.idx)
    p = paraphrase(doc)
    return {"t": text, "e": ents, "a": adjs, "n": nouns, "p": p[1] if p else ""}


def parse(data_dir: Path, eval_dir: Path, out: Path, limit: int = 0, n_process: int = 1) -> int:
    """Write the parsed documents to ``out`` (.jsonl or .jsonl.xz); returns their number."""
    from editor.text.nlp import get_nlp
    from retrieval.files.atomic import atomic_file

    nlp = get_nlp()
    docs = list(documents(data_dir, eval_dir))
    if limit:
        docs = docs[:limit]
    sents, owner = [], []
    for k, (_, _, text) in enumerate(docs):
        for s in split(text):
            if MIN_WORDS <= len(s.split()) <= MAX_WORDS:
                sents.append(s)
                owner.append(k)
    parsed: list[list[dict]] = [[] for _ in docs]
    stream = nlp.pipe(sents, batch_size=256, n_process=n_process)
    for k, doc in zip(owner, tqdm(stream, total=len(sents), desc="parse"), strict=True):
        parsed[k].append(_sentence(doc))
    n = 0
    with atomic_file(out) as tmp, open_text(tmp, "wt") as f:  # a kill leaves none, not half
        for (doc_id, source, _), ss in zip(docs, parsed, strict=True):
            if ss:
                f.write(json.dumps({"doc": doc_id, "source": source, "sents": ss}) + "\n")
                n += 1
    log.info("parsed %d documents, %d sentences -> %s", n, len(sents), out)
    return n
