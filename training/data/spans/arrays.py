"""Span rows as the span judge's training arrays: token ids, token tags, pointer targets.

Every row gives one plain pair (pair label, token tags of the claim). A row with a
contradicted span gives a second, marked pair: the span inside ``« »`` and the evidence
tokens of its fix as the pointer's start and end ([CLS], position 0, where the evidence does
not state the fix or the window cut it off). A not-supported or contradicted row without spans
has unknown tags (left out of the token loss). Needs numpy and tokenizers only.
"""

from __future__ import annotations

import os
import random
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from editor.attribution.span_model import (
    IGNORE,
    TOKEN_TAGS,
    encode_batch,
    first_segment,
    layout,
    marked,
)
from editor.verdicts import SUPPORTED
from training.data.spans.rows import LABELS, SpanRow

TAG = {t: i for i, t in enumerate(TOKEN_TAGS)}


def claim_tags(spans, firsts, origin, claim_at: int, known: bool) -> dict[int, int]:
    """Tag id per first-segment token (claim tokens only; the marks and the question get
    IGNORE)."""
    out: dict[int, int] = {}
    open_span = None
    for i, a, b in firsts:
        if a == b:
            continue
        ca = a - claim_at
        if ca < 0 or (origin is not None and origin[ca] < 0):
            out[i] = IGNORE
            continue
        c = origin[ca] if origin is not None else ca
        if not known:
            out[i] = IGNORE
            continue
        hit = next((s for s in spans if s.start <= c < s.end), None)
        if hit is None:
            out[i], open_span = TAG["O"], None
        else:
            begin = open_span is not hit
            out[i] = TAG[("B-" if begin else "I-") + hit.tag]
            open_span = hit
    return out


def pointer_target(seconds, fix_start: int, fix_end: int) -> tuple[int, int]:
    """Token indices of the first and last evidence token inside the fix, or (0, 0)."""
    if fix_start < 0:
        return 0, 0
    inside = [i for i, a, b in seconds if a < fix_end and b > fix_start and a != b]
    if not inside or max(b for _, a, b in seconds) < fix_end:
        return 0, 0  # cut off by the window
    return inside[0], inside[-1]


def label_rows(rows: list[SpanRow], tokenizer_file: str, max_length: int, seed: int = 0) -> dict:
    """The arrays of ``rows`` (see the module doc): lists of ids, segments, tags, labels,
    pointer targets (-1 for pairs without a marked span) and each pair's row index."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(tokenizer_file)
    rng = random.Random(seed)
    firsts, evs, metas = [], [], []
    for k, r in enumerate(rows):
        text, at = first_segment(r.claim, r.question)
        firsts.append(text)
        evs.append(r.evidence)
        metas.append((k, None, at, None))
        cons = [s for s in r.spans if s.tag == "C"]
        if cons:
            s = rng.choice(cons)
            mtext, origin = marked(r.claim, s.start, s.end)
            ftext, mat = first_segment(mtext, r.question)
            firsts.append(ftext)
            evs.append(r.evidence)
            metas.append((k, origin, mat, s))
    out: dict[str, list] = {k: [] for k in ("ids", "seg", "tags", "label", "ptr", "row")}
    for enc, (k, origin, at, span) in zip(
        encode_batch(tok, firsts, evs, max_length), metas, strict=True
    ):
        r = rows[k]
        segment, fs, ss = layout(enc)
        known = r.label == SUPPORTED or bool(r.spans)
        tags = np.full(len(enc.ids), IGNORE, np.int16)
        for i, t in claim_tags(r.spans, fs, origin, at, known).items():
            tags[i] = t
        ptr = pointer_target(ss, span.fix_start, span.fix_end) if span else (-1, -1)
        out["ids"].append(np.array(enc.ids, np.uint16))
        out["seg"].append(segment)
        out["tags"].append(tags)
        out["label"].append(LABELS.index(r.label))
        out["ptr"].append(ptr)
        out["row"].append(k)
    return out


def _job(args):
    rows, tokenizer_file, max_length, seed = args
    return label_rows(rows, tokenizer_file, max_length, seed)


def label_all(rows: list[SpanRow], tokenizer_file: str, max_length: int, workers: int = 0):
    """``label_rows`` over worker processes, row indices kept global."""
    workers = workers or os.cpu_count() or 1
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    size = max(1000, len(rows) // (workers * 4) + 1)
    jobs = [(rows[i : i + size], tokenizer_file, max_length, i) for i in range(0, len(rows), size)]
    merged: dict[str, list] = {k: [] for k in ("ids", "seg", "tags", "label", "ptr", "row")}
    from training.data.spans.make import _die_with_parent

    with ProcessPoolExecutor(workers, initializer=_die_with_parent) as pool:
        for start, part in zip(range(0, len(rows), size), pool.map(_job, jobs), strict=True):
            for key, values in part.items():
                merged[key] += [v + start for v in values] if key == "row" else values
    return merged
