"""Multi-fact NLI pairs from trusted documents: claims shaped like real LLM answers, which fuse
two facts of a passage in one long sentence and are supported only by the two together.

For each sampled article, two sentences ``a`` and ``b`` (6-35 words each, ``b`` about the same
subject: it opens with a pronoun or the article's title) are fused into one claim,
"``a``, and ``b``" (``b``'s pronoun lower-cased). Against the article's sentences from ``a`` to
``b`` (a combination of sentences when they are apart):

- the fused claim -> supported;
- the fused claim with ``b``'s part corrupted (an entity swapped or a number perturbed, as in
  ``training.data.nli_synthetic``) -> contradicted;
- the fused claim against the same sentences with ``b`` left out -> not_supported (one fact is
  stated, the other is not: partial support), skipped when the rest still holds most of
  ``b``'s content words.

Group = the article (splits are by article).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tqdm.auto import tqdm

from editor.text.words import NUMBER_WORD, content_words
from editor.verdicts import CONTRADICTED, NOT_SUPPORTED, SUPPORTED
from retrieval.sentences import split
from training.data.nli import NLIExample
from training.data.nli_synthetic import corrupt_sentence

if TYPE_CHECKING:
    from spacy.language import Language

    from retrieval.corpus import Document

_PRONOUN = re.compile(r"^(He|She|It|They|Its|His|Her|Their)\b")
MAX_GAP = 3
"""At most this many sentences between the two facts (the premise spans them)."""


def fuse(a: str, b: str, text: str = "") -> str:
    """One sentence stating ``a`` and ``b``; ``b``'s first word lower-cased when it is a
    pronoun or a word ``text`` (the article) also writes in lower case.

    >>> fuse("Marie Curie was a physicist.", "She won two Nobel Prizes.")
    'Marie Curie was a physicist, and she won two Nobel Prizes.'
    >>> fuse("Peat forms in wetlands.", "Peat stores carbon.", "Peat forms ... dried peat ...")
    'Peat forms in wetlands, and peat stores carbon.'
    """
    b = _PRONOUN.sub(lambda m: m.group(1).lower(), b.strip(), count=1)
    first = b.split(" ", 1)[0]
    if first[:1].isupper() and re.search(rf"\b{re.escape(first.lower())}\b", text):
        b = first.lower() + b[len(first) :]
    return f"{a.rstrip().rstrip('.!;:')}, and {b}"


def _same_subject(sentence: str, title: str) -> bool:
    first = title.split(" (")[0].strip()
    return bool(_PRONOUN.match(sentence)) or bool(first) and sentence.startswith(first)


def _pick(sentences: list[str], title: str, rng: random.Random) -> tuple[int, int] | None:
    ok = [i for i, s in enumerate(sentences) if 6 <= len(s.split()) <= 35]
    pairs = [
        (i, j)
        for i in ok
        for j in ok
        if i < j <= i + 1 + MAX_GAP and _same_subject(sentences[j], title)
    ]
    return rng.choice(pairs) if pairs else None


def multifact_pairs(
    documents: Iterable[Document],
    *,
    max_articles: int | None = 2000,
    seed: int = 0,
    max_rest_overlap: float = 0.6,
    nlp: Language | None = None,
    progress: bool = True,
    source: str = "wiki-multifact",
) -> list[NLIExample]:
    """Supported / contradicted / not_supported multi-fact pairs (see the module doc)."""
    rng = random.Random(seed)
    docs = [d for d in documents if d.text.strip()]
    if max_articles is not None and len(docs) > max_articles:
        docs = rng.sample(docs, max_articles)
    picked = []
    for d in docs:
        sentences = split(d.text)
        ij = _pick(sentences, d.title, rng)
        if ij is not None:
            picked.append((d, sentences, *ij))
    if not picked:
        return []
    if nlp is None:
        from editor.text.nlp import get_nlp

        nlp = get_nlp()
    parsed = nlp.pipe([sentences[j] for _, sentences, _, j in picked], batch_size=64)
    ents = [
        [(e.text, e.start_char, e.end_char, e.label_) for e in doc.ents]
        for doc in tqdm(parsed, total=len(picked), desc="NER (multi-fact)", disable=not progress)
    ]
    pool: dict[str, list[str]] = defaultdict(list)
    for es in ents:
        for text, _, _, label in es:
            pool[label].append(text)
    out: list[NLIExample] = []
    for (d, sentences, i, j), es in zip(picked, ents, strict=True):
        a, b = sentences[i], sentences[j]
        premise = " ".join(sentences[i : j + 1])
        group = base = f"{source}:{d.id}"
        claim = fuse(a, b, d.text)
        out.append(NLIExample(f"{base}:sup", source, premise, claim, SUPPORTED, group))
        wrong = corrupt_sentence(b, es, pool, premise, rng)
        if wrong and wrong != b:
            out.append(
                NLIExample(
                    f"{base}:con", source, premise, fuse(a, wrong, d.text), CONTRADICTED, group
                )
            )
        rest = " ".join(sentences[i:j])  # a and what lies between, without b
        target = content_words(b, NUMBER_WORD)
        if target and len(target & content_words(rest, NUMBER_WORD)) / len(target) <= (
            max_rest_overlap
        ):
            out.append(NLIExample(f"{base}:part", source, rest, claim, NOT_SUPPORTED, group))
    return out
