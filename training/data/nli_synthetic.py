"""Synthetic NLI pairs from trusted documents (the packaged Wikipedia summaries by default).

For each sampled article one sentence ``s`` (6-45 words) and the window ``W`` of up to
``window`` consecutive sentences containing it (at a random offset) give three pairs:

- ``(W, s)`` -> supported (``W`` contains ``s``);
- ``(W, s')`` -> contradicted, where ``s'`` is ``s`` with one named entity swapped for another
  of the same spaCy label taken from other articles (never one that occurs in ``W``), or with a
  number / year perturbed (DATE, CARDINAL, QUANTITY, MONEY, PERCENT, ORDINAL spans with digits);
- ``(W', s)`` -> not_supported, where ``W'`` is the window of a *related* article (the sampled
  article sharing the most content words with ``s``) that overlaps ``s`` most, skipped when it
  covers more than ``max_neutral_overlap`` of ``s``'s content words (it might entail ``s``).

The same ``s`` appearing as supported and not_supported keeps the model from scoring the
hypothesis alone. Group = the article of ``s`` (so splits are by article).
"""

from __future__ import annotations

import logging
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tqdm.auto import tqdm

from editor.text.words import NUMBER_WORD, content_words
from editor.verdicts import CONTRADICTED, NOT_SUPPORTED, SUPPORTED
from retrieval.sentences import split
from retrieval.types import Document
from training.data.nli import NLIExample
from training.data.spans.families import perturb

if TYPE_CHECKING:
    from spacy.language import Language

log = logging.getLogger(__name__)

SWAP_LABELS = frozenset(
    "PERSON ORG GPE LOC NORP EVENT WORK_OF_ART FAC LANGUAGE PRODUCT LAW".split()
)
NUMBER_LABELS = frozenset("DATE CARDINAL QUANTITY MONEY PERCENT ORDINAL TIME".split())
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def perturb_number(text: str, rng: random.Random) -> str | None:
    """``text`` with one number changed (years by 1-30, others scaled), or None without digits.

    >>> perturb_number("in 1969", random.Random(0)) != "in 1969"
    True
    >>> perturb_number("many", random.Random(0)) is None
    True
    """
    matches = list(_NUMBER.finditer(text))
    if not matches:
        return None
    m = rng.choice(matches)
    new = perturb(m.group(), rng)
    if new is None:
        return None
    return text[: m.start()] + new + text[m.end() :]


def _candidate_sentence(sentences: list[str], rng: random.Random) -> int | None:
    ok = [i for i, s in enumerate(sentences) if 6 <= len(s.split()) <= 45]
    return rng.choice(ok) if ok else None


def _window(sentences: list[str], i: int, size: int, rng: random.Random) -> str:
    """A window of up to ``size`` consecutive sentences that contains sentence ``i``."""
    size = min(size, len(sentences))
    lo = rng.randint(max(0, i - size + 1), min(i, len(sentences) - size))
    return " ".join(sentences[lo : lo + size])


def _best_window(sentences: list[str], target: set[str], size: int) -> tuple[str, int]:
    """The window of ``size`` sentences sharing most content words with ``target``."""
    best, best_n = "", -1
    for lo in range(max(1, len(sentences) - size + 1)):
        text = " ".join(sentences[lo : lo + size])
        n = len(target & content_words(text, NUMBER_WORD))
        if n > best_n:
            best, best_n = text, n
    return best, best_n


def corrupt_sentence(
    sentence: str,
    entities: Sequence[tuple[str, int, int, str]],
    pool: dict[str, list[str]],
    premise: str,
    rng: random.Random,
) -> str | None:
    """``sentence`` with one entity swapped or one number perturbed; None when impossible.

    ``entities``: (text, start_char, end_char, label) of the sentence; ``pool``: label -> entity
    texts from other documents. Replacements occurring in ``premise`` are refused.
    """
    options = list(entities)
    rng.shuffle(options)
    low_premise = premise.lower()
    for text, start, end, label in options:
        new: str | None = None
        if label in NUMBER_LABELS:
            new = perturb_number(text, rng)
        if new is None and label in SWAP_LABELS | NUMBER_LABELS:
            candidates = pool.get(label, ())
            for _ in range(20 if candidates else 0):
                c = rng.choice(candidates)
                if c.lower() != text.lower() and c.lower() not in low_premise:
                    new = c
                    break
        if new is not None and new != text:
            return sentence[:start] + new + sentence[end:]
    new_sentence = perturb_number(sentence, rng)  # digits outside any entity span
    return new_sentence


ROLE_LABELS = frozenset({"PERSON", "ORG", "GPE", "NORP", "LOC"})


def swap_roles(sentence: str, entities: Sequence[tuple[str, int, int, str]]) -> str | None:
    """``sentence`` with its first two distinct same-label names traded, or None.

    >>> swap_roles("Moscow is the capital of Russia.", [("Moscow", 0, 6, "GPE"), ("Russia", 25, 31, "GPE")])
    'Russia is the capital of Moscow.'
    """
    ents = sorted((e for e in entities if e[3] in ROLE_LABELS), key=lambda e: e[1])
    for i, (t1, a1, b1, l1) in enumerate(ents):
        for t2, a2, b2, l2 in ents[i + 1 :]:
            if l1 == l2 and t1.lower() != t2.lower() and b1 <= a2:
                return sentence[:a1] + t2 + sentence[b1:a2] + t1 + sentence[b2:]
    return None


def synthetic_pairs(
    documents: Iterable[Document],
    *,
    max_articles: int | None = 2000,
    seed: int = 0,
    window: int = 4,
    max_neutral_overlap: float = 0.6,
    nlp: Language | None = None,
    progress: bool = True,
    source: str = "wiki-synthetic",
    role_swaps: float = 0.0,
    same_article_neutrals: float = 0.0,
) -> list[NLIExample]:
    """Supported / contradicted / not_supported pairs from ``documents`` (see module doc).

    ``role_swaps``: the share of articles whose sentence names two same-type entities that also
    get a contradicted pair with the two swapped ("X defeated Y" -> "Y defeated X");
    ``same_article_neutrals``: the share of articles that also pair the sentence with the
    article's other sentences (a window that leaves it out, about the same subject but not
    stating it) as not_supported, so that "not stated" is not read as "contradicted"."""
    if window < 1:
        raise ValueError(f"window must be >= 1 sentence, got {window}")
    rng = random.Random(seed)
    docs = [d for d in documents if d.text.strip()]
    if max_articles is not None and len(docs) > max_articles:
        docs = rng.sample(docs, max_articles)
    picked: list[tuple[Document, list[str], int]] = []
    for d in docs:
        sentences = split(d.text)
        i = _candidate_sentence(sentences, rng)
        if i is not None:
            picked.append((d, sentences, i))
    if not picked:
        return []
    if nlp is None:
        from editor.text.nlp import get_nlp

        nlp = get_nlp()
    texts = [sentences[i] for _, sentences, i in picked]
    parsed = list(
        tqdm(
            nlp.pipe(texts, batch_size=64),
            total=len(texts),
            desc="NER (synthetic pairs)",
            disable=not progress,
        )
    )
    ents = [[(e.text, e.start_char, e.end_char, e.label_) for e in doc.ents] for doc in parsed]
    pool: dict[str, list[str]] = defaultdict(list)  # label -> entity texts
    for es in ents:
        for text, _, _, label in es:
            pool[label].append(text)
    # inverted index: content word -> picked articles containing it (for related negatives)
    words = [content_words(d.title + " " + d.text, NUMBER_WORD) for d, _, _ in picked]
    index: dict[str, list[int]] = defaultdict(list)
    for j, ws in enumerate(words):
        for w in ws:
            index[w].append(j)
    out: list[NLIExample] = []
    for j, ((d, sentences, i), es) in enumerate(
        tqdm(list(zip(picked, ents, strict=True)), desc="synthetic pairs", disable=not progress)
    ):
        sentence = sentences[i]
        premise = _window(sentences, i, window, rng)
        group = f"{source}:{d.id}"
        base = f"{source}:{d.id}"
        out.append(NLIExample(f"{base}:sup", source, premise, sentence, SUPPORTED, group))
        corrupted = corrupt_sentence(sentence, es, pool, premise, rng)
        if corrupted and corrupted != sentence:
            out.append(NLIExample(f"{base}:con", source, premise, corrupted, CONTRADICTED, group))
        if role_swaps > 0:
            draw = rng.random()  # only drawn when enabled, so 0 keeps the old data byte for byte
            swapped = swap_roles(sentence, es) if draw < role_swaps else None
            if swapped:
                out.append(
                    NLIExample(f"{base}:role", source, premise, swapped, CONTRADICTED, group)
                )
        target = content_words(sentence, NUMBER_WORD)
        if same_article_neutrals > 0 and target and rng.random() < same_article_neutrals:
            rest = sentences[i + 1 : i + 1 + window] or sentences[max(0, i - window) : i]
            text = " ".join(rest)
            if rest and len(target & content_words(text, NUMBER_WORD)) / len(target) <= (
                max_neutral_overlap
            ):
                out.append(NLIExample(f"{base}:same", source, text, sentence, NOT_SUPPORTED, group))
        votes: dict[int, int] = defaultdict(int)
        for w in target:
            postings = index.get(w, ())
            if len(postings) > 200:  # too common to tell related articles apart
                continue
            for k in postings:
                if k != j:
                    votes[k] += 1
        if not votes or not target:
            continue
        k = max(votes, key=lambda x: (votes[x], -x))
        other, other_sentences, _ = picked[k]
        neutral, shared = _best_window(other_sentences, target, window)
        if neutral and shared / len(target) <= max_neutral_overlap:
            out.append(NLIExample(f"{base}:neu", source, neutral, sentence, NOT_SUPPORTED, group))
    return out
