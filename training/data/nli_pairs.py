"""NLI pairs from ``purr data make`` rows: hard pairs that differ in one slot.

Each row holds a clean statement ``y``, its corruption ``x`` (a date, number, entity or role
changed) and the gold evidence E+ it was researched with. Against E+ (joined, cut to the
sentences nearest the statement as in ``training.data.nli``):

- ``(E+, y)`` -> supported (once per seed: its variants share ``y``);
- ``(E+, x)`` -> contradicted.

Group = the seed's source document (``wiki-synthetic:<doc>`` for the packaged summaries, as
``training.data.nli_synthetic`` and the planted dev set key it), so a split by group keeps one
article on one side. ``purr data make`` holds the dev split's articles out by default.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from editor.verdicts import CONTRADICTED, SUPPORTED
from retrieval.corpus import jsonl_rows
from training.data.nli import NLIExample, premise_word_budget, window_premise

SOURCE = "make-pairs"


def read_make_rows(paths: Iterable[str | Path]) -> Iterator[dict[str, Any]]:
    """The rows of ``purr data make`` files; a ValueError names a file or line that is not."""
    for path in map(Path, paths):
        if not path.is_file():
            raise ValueError(f"{path}: no such file; pass rows written by `purr data make`")
        for n, row in jsonl_rows(path):
            if not isinstance(row, dict) or not {"clean", "corrupted", "evidence_pos"} <= set(row):
                raise ValueError(
                    f"{path}:{n}: not a `purr data make` row (needs clean, corrupted, evidence_pos)"
                )
            yield row


def make_pairs(rows: Iterable[dict[str, Any]], max_length: int | None = 256) -> list[NLIExample]:
    """Supported and contradicted pairs of each row (see the module doc).

    >>> row = {"id": "wiki:Nile#s0", "seed_id": "wiki:Nile#s0",
    ...        "evidence_pos": ["The Nile is 6,650 km long."],
    ...        "clean": "The Nile is 6,650 km long.", "corrupted": "The Nile is 5,100 km long."}
    >>> [(p.label, p.group) for p in make_pairs([row])]
    [('supported', 'wiki-synthetic:wiki:Nile'), ('contradicted', 'wiki-synthetic:wiki:Nile')]
    """
    out: list[NLIExample] = []
    seen: set[tuple[str, str]] = set()
    for row in rows:
        evidence = " ".join(str(e) for e in row["evidence_pos"] if str(e).strip())
        if not evidence:
            continue
        seed = str(row.get("seed_id") or row.get("id", ""))
        group = f"wiki-synthetic:{seed.split('#', 1)[0]}"
        for label, text in ((SUPPORTED, row["clean"]), (CONTRADICTED, row["corrupted"])):
            text = str(text)
            if not text.strip() or (label, text) in seen:
                continue
            seen.add((label, text))
            premise = evidence
            if max_length is not None:
                premise = window_premise(evidence, text, premise_word_budget(max_length, text))
            out.append(
                NLIExample(
                    id=f"{SOURCE}:{row.get('id', seed)}:{label}",
                    source=SOURCE,
                    premise=premise,
                    hypothesis=text,
                    label=label,
                    group=group,
                )
            )
    return out
