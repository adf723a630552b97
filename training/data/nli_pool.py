"""A distillation pool: the labelled train pairs plus perturbed pairs made from them, for a
teacher to label and a student to learn (``purr train attribution --teacher``).

Each labelled train pair ``(premise, hypothesis)`` gives up to four more, cheap to make (no
model, no parse) and close to what real answers get wrong:

- ``pool-negated``: the hypothesis with its first auxiliary's polarity flipped;
- ``pool-number``: one number of the hypothesis moved;
- ``pool-dropped``: the premise without the sentence that shares most words with the
  hypothesis (support taken away, the rest of the context kept);
- ``pool-window``: a long premise cut to a window of its sentences (partial evidence);
- ``pool-neighbour`` (for a share of the pairs): the hypothesis against another premise of the
  same source, the one of 20 drawn that shares most words with it (related, rarely support).

The labels written are presumptions (a negated supported claim is contradicted, a dropped
sentence leaves it unsupported, else the pair keeps its label); the teacher's probabilities are
what a student learns from these rows. Pool rows keep their parent's split group, so no dev
document leaks in; the dev split is copied unchanged.

    python -m training.data.nli_pool --splits runs/splits.jsonl.xz --out runs/pool.jsonl.xz
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

from tqdm.auto import tqdm

from editor.verdicts import CONTRADICTED, NOT_SUPPORTED, SUPPORTED
from training.args import option
from training.data.corrupt import negate
from training.data.nli import NLIExample, NLISplits, read_splits, write_splits
from training.data.nli_synthetic import perturb_number

POOL_PREFIX = "pool-"
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_WORD = re.compile(r"[A-Za-z0-9]{3,}")


def sentences(text: str) -> list[str]:
    """A cheap sentence split (end punctuation before a capital or digit)."""
    return [s for s in _SENTENCE.split(text.strip()) if s]


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def without_best_sentence(premise: str, hypothesis: str) -> str | None:
    """The premise minus its sentence sharing most words with the hypothesis (None when the
    premise has one sentence or none shares a word)."""
    parts = sentences(premise)
    if len(parts) < 2:
        return None
    target = _words(hypothesis)
    overlap = [len(_words(s) & target) for s in parts]
    best = max(range(len(parts)), key=overlap.__getitem__)
    if overlap[best] == 0:
        return None
    return " ".join(parts[:best] + parts[best + 1 :])


def window(premise: str, rng: random.Random, min_sentences: int = 4) -> str | None:
    """A random window of half the premise's sentences (None for short premises)."""
    parts = sentences(premise)
    if len(parts) < min_sentences:
        return None
    size = len(parts) // 2
    start = rng.randrange(0, len(parts) - size + 1)
    return " ".join(parts[start : start + size])


def perturbed(ex: NLIExample, rng: random.Random) -> Iterator[NLIExample]:
    """The pool rows made from one labelled pair."""
    supported = ex.label == SUPPORTED

    def row(kind: str, premise: str, hypothesis: str, label: str) -> NLIExample:
        return NLIExample(
            id=f"{ex.id}:{kind}",
            source=POOL_PREFIX + kind,
            premise=premise,
            hypothesis=hypothesis,
            label=label,
            group=ex.group,
        )

    if (neg := negate(ex.hypothesis)) is not None:
        yield row("negated", ex.premise, neg, CONTRADICTED if supported else NOT_SUPPORTED)
    if (num := perturb_number(ex.hypothesis, rng)) is not None:
        yield row("number", ex.premise, num, CONTRADICTED if supported else ex.label)
    if (dropped := without_best_sentence(ex.premise, ex.hypothesis)) is not None:
        yield row("dropped", dropped, ex.hypothesis, NOT_SUPPORTED if supported else ex.label)
    if (part := window(ex.premise, rng)) is not None:
        yield row("window", part, ex.hypothesis, ex.label)


def neighbour(
    ex: NLIExample, premises: list[str], rng: random.Random, draws: int = 20
) -> NLIExample | None:
    """The hypothesis against the drawn premise (not its own) sharing most words with it."""
    target = _words(ex.hypothesis)
    drawn = [p for p in rng.sample(premises, min(draws, len(premises))) if p != ex.premise]
    if not drawn:
        return None
    best = max(drawn, key=lambda p: len(_words(p[:2000]) & target))
    return NLIExample(
        id=f"{ex.id}:neighbour",
        source=POOL_PREFIX + "neighbour",
        premise=best,
        hypothesis=ex.hypothesis,
        label=NOT_SUPPORTED,
        group=ex.group,
    )


def make_pool(
    splits: NLISplits, seed: int = 0, neighbours: float = 0.4, progress: bool = True
) -> NLISplits:
    """``splits`` with the pool rows appended after the labelled train rows."""
    rng = random.Random(seed)
    labelled = [ex for ex in splits.train if not ex.source.startswith(POOL_PREFIX)]
    by_source: dict[str, list[str]] = {}
    for ex in labelled:
        by_source.setdefault(ex.source, []).append(ex.premise)
    extra = []
    for ex in tqdm(labelled, desc="pool pairs", disable=not progress):
        extra += perturbed(ex, rng)
        if rng.random() < neighbours and (n := neighbour(ex, by_source[ex.source], rng)):
            extra.append(n)
    return NLISplits(train=[*splits.train, *extra], dev=splits.dev)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--splits", type=Path, required=True, help="prepared splits (--save-splits)")
    p.add_argument("--out", type=Path, required=True, help="the pool's splits file")
    p.add_argument("--seed", type=int, default=0)
    option(p, "--neighbours", float, 0.4, "share given a neighbour pair")
    args = p.parse_args(argv)
    pool = make_pool(read_splits(args.splits), args.seed, args.neighbours)
    print(json.dumps(write_splits(pool, args.out)))


if __name__ == "__main__":
    main()
