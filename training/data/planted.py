"""A dev set of short passages with one planted factual error, and passages left correct.

``purr data planted --out dev.jsonl [--n 200] [--seed 0] [--sentences 3]``: passages are the
first sentences of packaged Wikipedia summaries (the default corpus, so research finds their
source). Half the rows (``--error-share``) get one error in one sentence:

- ``date``: a year or date moved (e.g. 1889 -> 1874),
- ``number``: a count, quantity, money or percentage changed,
- ``entity``: a person, place, organisation or group swapped for another of the same type
  drawn from other articles,
- ``role``: two same-type names of the sentence trade places ("X defeated Y" -> "Y defeated X").

Rows: ``{id, text, reference, planted, error_type, wrong, right, title}`` where ``reference``
is the original passage. ``purr eval`` then reports the fix rate (planted rows whose revision
equals the reference) and the false-edit rate (correct rows that were changed).

Only articles in the attribution model's dev split (``training.data.nli.is_dev`` on the
article) are used, so the model that judges the edits never trained on these passages.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from editor.text.nlp import ner_only
from retrieval.files import write_text
from retrieval.sentences import split
from retrieval.types import Document
from training.data.nli import is_dev
from training.data.nli_synthetic import NUMBER_LABELS, SWAP_LABELS, perturb_number

log = logging.getLogger(__name__)

ERROR_TYPES = ("date", "number", "entity", "role")
"""The default rotation; ``negation`` (an auxiliary negated, or its negation dropped) is opt-in."""
ALL_ERROR_TYPES = (*ERROR_TYPES, "negation")

_AUX = re.compile(
    r"\b(is|are|was|were|has|have|had|can|could|will|would|did|does|do)(\s+not\b|n't)?(?!\w)",
    re.I,
)

_ROLE_LABELS = frozenset({"PERSON", "ORG", "GPE", "NORP", "LOC"})


def _negate(sentence: str) -> tuple[str, str, str] | None:
    """The sentence with its first auxiliary negated ("was" -> "was not"), or its negation
    dropped ("was not" -> "was"); (new sentence, wrong span, right span), or None.

    >>> _negate("The tower was completed in 1889.")
    ('The tower was not completed in 1889.', 'was not', 'was')
    >>> _negate("It is not a planet.")
    ('It is a planet.', 'It is', 'is not')
    >>> _negate("Skin cancers can spread.")  # not the "can" of "cancers"
    ('Skin cancers can not spread.', 'can not', 'can')
    """
    m = _AUX.search(sentence)
    if m is None:
        return None
    aux = m.group(1)
    if m.group(2):  # drop the negation; the wrong span needs context to be found again
        new = sentence[: m.start()] + aux + sentence[m.end() :]
        before = new[: m.start()].split()
        wrong = " ".join([*before[-1:], aux])
        return new, wrong, sentence[m.start() : m.end()]
    return sentence[: m.end()] + " not" + sentence[m.end() :], f"{aux} not", aux


def _plant(sentence: str, ents, pool, rng: random.Random, kind: str) -> tuple[str, str, str] | None:
    """(new sentence, wrong span, right span) with one error of ``kind``, or None."""
    if kind == "negation":
        return _negate(sentence)
    if kind in {"date", "number"}:
        labels = {"DATE", "TIME"} if kind == "date" else NUMBER_LABELS - {"DATE", "TIME"}
        for text, a, b, label in rng.sample(ents, len(ents)):
            if label in labels:
                new = perturb_number(text, rng)
                if new and new != text:
                    return sentence[:a] + new + sentence[b:], new, text
        return None
    if kind == "entity":
        for text, a, b, label in rng.sample(ents, len(ents)):
            if label in SWAP_LABELS and pool.get(label):
                for _ in range(20):
                    c = rng.choice(pool[label])
                    if c.lower() != text.lower() and c.lower() not in sentence.lower():
                        return sentence[:a] + c + sentence[b:], c, text
        return None
    # role: two same-type names trade places
    by_label: dict[str, list] = defaultdict(list)
    for e in ents:
        if e[3] in _ROLE_LABELS:
            by_label[e[3]].append(e)
    pairs = [
        (x, y)
        for group in by_label.values()
        for i, x in enumerate(group)
        for y in group[i + 1 :]
        if x[0].lower() != y[0].lower() and x[2] <= y[1]
    ]
    if not pairs:
        return None
    (t1, a1, b1, _), (t2, a2, b2, _) = rng.choice(pairs)
    new = sentence[:a1] + t2 + sentence[b1:a2] + t1 + sentence[b2:]
    return new, f"{t2} ... {t1}", f"{t1} ... {t2}"


def entity_pool(
    docs: list[Document], nlp: Any, size: int = 1500, cache_dir: Path | None = None
) -> dict[str, list[str]]:
    """Named entities by spaCy label from every ``len(docs) // size``-th document (the start
    of its text): the same-type replacements of entity swaps. With ``cache_dir``, a pool made
    once from the same texts by the same spaCy model is read back instead of parsed again
    (several seconds of NER in every process that corrupts)."""
    step = max(1, len(docs) // max(1, size))
    texts = [d.text[:600] for d in docs[::step]]
    cached = None
    if cache_dir is not None:
        key = hashlib.sha256(
            json.dumps([nlp.meta.get("name"), nlp.meta.get("version"), texts]).encode("utf-8")
        ).hexdigest()[:20]
        cached = Path(cache_dir) / "entity-pools" / f"{key}.json"
        try:
            return json.loads(cached.read_text("utf-8"))
        except (OSError, ValueError):
            pass  # not made yet, or unreadable: make it again
    pool: dict[str, list[str]] = defaultdict(list)
    for doc in nlp.pipe(texts, disable=ner_only(nlp)):
        for e in doc.ents:
            pool[e.label_].append(e.text)
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            write_text(cached, json.dumps(pool, ensure_ascii=False))
        except OSError as e:  # a read-only cache only costs the parse next time
            log.warning("could not cache the entity pool at %s (%s)", cached, e)
    return pool


def make_planted(
    docs: Iterable[Document],
    n: int = 200,
    seed: int = 0,
    error_share: float = 0.5,
    sentences: int = 3,
    progress: bool = True,
    pool_size: int = 1500,
    types: tuple[str, ...] = ERROR_TYPES,
) -> list[dict[str, Any]]:
    """``n`` rows (see the module doc), deterministic for a seed; error ``types`` rotate evenly.
    Replacement entities come from every ``len(docs) // pool_size``-th document."""
    unknown = [t for t in types if t not in ALL_ERROR_TYPES]
    if unknown or not types:
        raise ValueError(f"error types {unknown or types} unknown; choose from {ALL_ERROR_TYPES}")
    from editor.text.nlp import get_nlp

    rng = random.Random(seed)
    pool_docs = list(docs)
    candidates = [d for d in pool_docs if is_dev(f"wiki-synthetic:{d.id}")]
    rng.shuffle(candidates)
    nlp = get_nlp()
    pool = entity_pool(pool_docs, nlp, pool_size)
    rows: list[dict[str, Any]] = []
    n_err = round(n * error_share)
    bar = tqdm(total=n, desc="planted dev set", disable=not progress)
    for d in candidates:
        if len(rows) >= n:
            break
        sents = [s for s in split(d.text)][:sentences]
        if len(sents) < sentences or not all(5 <= len(s.split()) <= 45 for s in sents):
            continue
        passage = " ".join(sents)
        want_error = sum(r["planted"] for r in rows) < n_err and (
            len(rows) % 2 == 0 or len(rows) - sum(r["planted"] for r in rows) >= n - n_err
        )
        row: dict[str, Any] = {
            "id": f"planted-{len(rows):04d}",
            "text": passage,
            "reference": passage,
            "planted": False,
            "error_type": None,
            "wrong": None,
            "right": None,
            "title": d.title,
        }
        if want_error:
            kind = types[sum(r["planted"] for r in rows) % len(types)]
            order = list(range(len(sents)))
            rng.shuffle(order)
            planted = None
            for i in order:
                doc = nlp(sents[i])
                ents = [(e.text, e.start_char, e.end_char, e.label_) for e in doc.ents]
                got = (
                    _plant(sents[i], ents, pool, rng, kind) if ents or kind == "negation" else None
                )
                others = sents[:i] + sents[i + 1 :]
                if got and not any(got[1] in other for other in others):
                    planted = (i, *got)  # the wrong span names this sentence alone
                    break
            if planted is None:
                continue
            i, new_sentence, wrong, right = planted
            row.update(
                text=" ".join(sents[:i] + [new_sentence] + sents[i + 1 :]),
                planted=True,
                error_type=kind,
                wrong=wrong,
                right=right,
            )
        rows.append(row)
        bar.update(1)
    bar.close()
    return rows
