"""Span rows with human labels: WiCE's non-supported spans, SummEdits' error/fix pairs and
FEVER's claims against their evidence sentences (train documents and claims only).

- ``real-wice``: a WiCE train claim against its supporting sentences (and their neighbours);
  the annotators' non-supported tokens become ``U`` spans; supported claims have none.
- ``real-summedits``: the sentence an edit changed (``C``, or ``U`` for an inserted fact) with
  the consistent sentence's words as the fix where the document states them, and the
  consistent sentence itself as supported.
- ``real-fever``: FEVER claims (supported or refuted) against their evidence; refuted claims
  carry no spans (their tokens are left out of the token loss).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from editor.text.words import changed_run
from editor.verdicts import CONTRADICTED, NOT_SUPPORTED, SUPPORTED
from training.data.nli import group_key, is_dev, premise_word_budget, window_premise
from training.data.nli_contrast import changed_sentences, edit_label
from training.data.spans.rows import Span, SpanRow

_WORDCH = re.compile(r"\w")


def token_spans(claim: str, tokens: list[str], flags: list[bool]) -> list[tuple[int, int]]:
    """Character runs of the flagged tokens, found in order in ``claim``.

    >>> token_spans("The audience is Australian ex-pats.", ["The", "audience", "is",
    ...     "Australian", "ex", "-", "pats", "."], [0, 0, 0, 1, 0, 0, 0, 0])
    [(16, 26)]
    """
    runs: list[list[int]] = []
    pos, prev = 0, False
    for tok, flag in zip(tokens, flags, strict=False):
        at = claim.find(tok, pos)
        if at < 0:
            prev = False
            continue
        end = at + len(tok)
        if flag and _WORDCH.search(tok):
            if prev and runs and not claim[runs[-1][1] : at].strip(" -"):
                runs[-1][1] = end
            else:
                runs.append([at, end])
            prev = True
        elif not (flag and prev):
            prev = False
        pos = end
    return [(a, b) for a, b in runs]


def wice_rows(path: Path, max_chars: int = 600) -> Iterator[SpanRow]:
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f):
            row = json.loads(line)
            sents, claim = row["evidence"], row["claim"]
            support = sorted({i for group in row.get("supporting_sentences") or [] for i in group})
            if not support:
                continue
            keep = set(support)
            for i in support:  # neighbours while they fit
                for j in (i - 1, i + 1):
                    if 0 <= j < len(sents) and not sents[j].startswith("(meta data)"):
                        if sum(len(sents[k]) for k in keep | {j}) < max_chars:
                            keep.add(j)
            evidence = " ".join(sents[k].strip() for k in sorted(keep))[: max_chars * 2]
            flags = row.get("non_supported_spans") or []
            runs = token_spans(claim, row.get("claim_tokens") or [], flags) if any(flags) else []
            supported = row["label"] == SUPPORTED
            label = SUPPORTED if supported else NOT_SUPPORTED
            spans = () if supported else tuple(Span(a, b, "U") for a, b in runs)
            yield SpanRow(f"wice:{n}", "real-wice", label, claim, evidence, f"wice:{n}", spans)


def diff_span(wrong: str, clean: str) -> tuple[int, int, int, int] | None:
    """Word-aligned ``(start, end)`` in ``wrong`` and in ``clean`` of what an edit changed.

    >>> w, c = "He lived in Rome for 3 years.", "He lived in Paris for 3 years."
    >>> a, b, x, y = diff_span(w, c); w[a:b], c[x:y]
    ('Rome', 'Paris')
    """
    a, b, y = changed_run(wrong, clean)
    x = a
    if a >= b or len(wrong[a:b].split()) > 5:
        return None
    return a, b, x, y


def summedits_rows(path: Path, split: str = "train") -> Iterator[SpanRow]:
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f):
            row = json.loads(line)
            doc = row["evidence"]
            group = group_key("summedits", {"premise": doc})
            if is_dev(group) != (split == "dev"):
                continue
            tag = "U" if edit_label(row.get("edit_types")) == NOT_SUPPORTED else "C"
            for k, (clean, wrong) in enumerate(changed_sentences(row["original"], row["gold"])):
                d = diff_span(wrong, clean)
                if d is None:
                    continue
                a, b, x, y = d
                evidence = window_premise(doc, clean, premise_word_budget(160, clean))
                fix = clean[x:y]
                at = evidence.find(fix) if tag == "C" and fix.strip() else -1
                span = Span(a, b, tag, at, at + len(fix)) if at >= 0 else Span(a, b, tag)
                label = CONTRADICTED if tag == "C" else NOT_SUPPORTED
                key = f"summedits:{row.get('id', n)}:{k}"
                yield SpanRow(key, "real-summedits", label, wrong, evidence, group, (span,))
                yield SpanRow(key + ":gold", "real-summedits", SUPPORTED, clean, evidence, group)


def fever_rows(path: Path) -> Iterator[SpanRow]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            group = group_key("fever-nli", row)
            if is_dev(group) or row["label"] not in (SUPPORTED, CONTRADICTED):
                continue
            yield SpanRow(
                str(row["id"]),
                "real-fever",
                row["label"],
                row["hypothesis"],
                row["premise"],
                group,
            )


def real_rows(data_dir: Path) -> Iterator[SpanRow]:
    yield from wice_rows(data_dir / "raw/wice/nst_train.jsonl")
    yield from summedits_rows(data_dir / "edits/summedits.jsonl")
    yield from fever_rows(data_dir / "nli-extra/fever_nli.jsonl")
