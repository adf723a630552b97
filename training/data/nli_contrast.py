"""Sentence-level contrast pairs for the attribution model from minimal factual edits.

``edits/summedits.jsonl`` holds summaries with one inserted factual error (``original``) beside
the consistent summary they were made from (``gold``), with the source document as
``evidence``. The NLI view of the same data (``nli/summedits.jsonl``) labels whole summaries
against whole documents; here each edited sentence becomes a pair of its own:

- a sentence of ``gold`` that the edit changed -> ``supported``;
- the sentence of ``original`` that replaced it -> ``contradicted`` (entity, antonym or negation
  edits) or ``not_supported`` (a hallucinated fact insertion, which the document does not
  mention at all).

Both sides get the document windowed to the sentence (``window_premise``), so the model sees
two nearly identical hypotheses with opposite labels against the same evidence: the contrast the
agreement model and auto-AIS need. Rows carry the same split group as ``nli/summedits.jsonl``
(the premise hash), so a document is in train or dev for both views alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from editor.verdicts import CONTRADICTED, NOT_SUPPORTED, SUPPORTED
from retrieval.sentences import split
from training.data.nli import (
    NLIExample,
    file_rows,
    group_key,
    load_nli_file,
    premise_word_budget,
    window_premise,
)

EDITS_FILE = "edits/summedits.jsonl"

_UNSUPPORTED_TYPES = frozenset({"hallucinated_fact_insertion"})


def changed_sentences(original: str, gold: str) -> list[tuple[str, str]]:
    """(gold sentence, original sentence) pairs of the sentences an edit changed, matched by
    position among the changed ones; sentences present in both texts are left out.

    >>> changed_sentences("A is 3. B is red.", "A is 3. B is blue.")
    [('B is blue.', 'B is red.')]
    >>> changed_sentences("Same.", "Same.")
    []
    """
    before, after = split(gold) or [gold], split(original) or [original]
    gone = [s for s in before if s not in after]
    new = [s for s in after if s not in before]
    return list(zip(gone, new, strict=False))


def edit_label(edit_types: Iterable[str] | None) -> str:
    """The label of an edited sentence: ``not_supported`` for inserted facts alone, else
    ``contradicted``.

    >>> edit_label(["hallucinated_fact_insertion"]), edit_label(["antonym_swap"])
    ('not_supported', 'contradicted')
    """
    kinds = set(edit_types or [])
    return NOT_SUPPORTED if kinds and kinds <= _UNSUPPORTED_TYPES else CONTRADICTED


def _edit_rows(path: Path) -> Iterator[tuple[int, dict, list[str]]]:
    """``(line number, row, [evidence, original, gold])`` of an edits file; a missing file or a
    row without those fields is a ValueError naming the file and line."""
    keys = ("evidence", "original", "gold")
    return file_rows(path, "edits", lambda row: [str(row[k]) for k in keys])


def _pair(
    source: str, key: str, document: str, sentence: str, label: str, max_length: int | None
) -> NLIExample:
    """One pair: ``document`` windowed to ``sentence`` (whole when ``max_length`` is None)."""
    premise = document
    if max_length is not None:
        premise = window_premise(document, sentence, premise_word_budget(max_length, sentence))
    group = group_key("summedits", {"premise": document})  # the split of nli/summedits
    return NLIExample(f"{source}:{key}", source, premise, sentence, label, group)


def edit_sentence_pairs(
    path: str | Path, *, max_length: int | None = 128, source: str = "summedits-sentences"
) -> list[NLIExample]:
    """Contrast pairs (see the module doc) from an edits file ``{id, evidence, original, gold,
    edit_types?}``; each gold sentence occurs once however many edits were made of it."""
    out: list[NLIExample] = []
    seen: set[tuple[str, str]] = set()
    for n, row, (evidence, original, gold) in _edit_rows(Path(path)):
        label = edit_label(row.get("edit_types"))
        for k, (clean, wrong) in enumerate(changed_sentences(original, gold)):
            for hypothesis, target in ((clean, SUPPORTED), (wrong, label)):
                if (evidence, hypothesis) not in seen:
                    seen.add((evidence, hypothesis))
                    key = f"{row.get('id', n)}:{k}:{target}"
                    out.append(_pair(source, key, evidence, hypothesis, target, max_length))
    return out


def consistent_sentence_pairs(
    path: str | Path, *, max_length: int | None = 128, source: str = "summedits-sentences"
) -> list[NLIExample]:
    """``supported`` pairs from each sentence of the summaries an NLI file ``{premise,
    hypothesis, label}`` labels ``supported`` (SummEdits' consistent summaries, paraphrases
    included): a consistent summary's every sentence is supported by its document."""
    out: list[NLIExample] = []
    seen: set[tuple[str, str]] = set()
    for ex in load_nli_file(path, "summedits", max_length=None):
        if ex.label != SUPPORTED:
            continue
        for k, sentence in enumerate(split(ex.hypothesis) or [ex.hypothesis]):
            if (ex.premise, sentence) not in seen:
                seen.add((ex.premise, sentence))
                key = f"{ex.id.removeprefix('summedits:')}:{k}"
                out.append(_pair(source, key, ex.premise, sentence, SUPPORTED, max_length))
    return out


def summedits_sentence_pairs(
    data_dir: str | Path, *, max_length: int | None = 128
) -> list[NLIExample]:
    """Both kinds of sentence pairs from ``<data_dir>/edits/summedits.jsonl`` and
    ``<data_dir>/nli/summedits.jsonl``, each (document, sentence) once."""
    base = Path(data_dir)
    edits = edit_sentence_pairs(base / EDITS_FILE, max_length=max_length)
    seen = {(r.group, r.hypothesis) for r in edits}
    consistent = consistent_sentence_pairs(base / "nli/summedits.jsonl", max_length=max_length)
    return edits + [r for r in consistent if (r.group, r.hypothesis) not in seen]
