"""Scores of a span judge on labelled span rows (``purr eval spans --rows``): the held-apart
synthetic test rows of ``purr data spans`` per family, WiCE's dev claims (token F1 of the
non-supported spans against the annotators') and SummEdits' dev edits (the fix the judge makes
against the human one)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from editor.verdicts import CONTRADICTED
from training.data.spans.rows import SpanRow


def human_rows(data: Path) -> list[SpanRow]:
    """WiCE's and SummEdits' dev rows as span rows (never trained on)."""
    from training.data.spans.real import summedits_rows, wice_rows

    return list(wice_rows(data / "raw/wice/nst_dev.jsonl")) + list(
        summedits_rows(data / "edits/summedits.jsonl", split="dev")
    )


def predict(judge, data: dict):
    """What ``training.eval.span_metrics.judge_scores`` reads, from a loaded ``SpanJudge``."""
    import torch

    from editor.attribution.span_judge import best_span
    from editor.attribution.span_model import pad

    judge.load()
    n = len(data["ids"])
    probs, tags, ptr = np.zeros((n, 3), np.float32), [None] * n, np.zeros((n, 2), np.int64)
    order = np.argsort([len(x) for x in data["ids"]])
    for i in range(0, n, 64):
        idx = order[i : i + 64]
        ids, mask, types = (
            torch.from_numpy(a)
            for a in pad(
                [data["ids"][j].astype(np.int64) for j in idx], [data["seg"][j] for j in idx]
            )
        )
        with torch.inference_mode():
            pair, tok, start, end = judge._model(ids, mask, types)
        probs[idx] = torch.softmax(pair.float(), -1).numpy()
        t = tok.argmax(-1).numpy()
        for k, j in enumerate(idx):
            tags[j] = t[k, : len(data["ids"][j])]
            ptr[j] = best_span(start[k].float().numpy(), end[k].float().numpy())
    return probs, tags, ptr


def row_scores(judge, rows: list[SpanRow], limit: int = 0, seed: int = 0) -> dict[str, float]:
    from training.data.spans.arrays import label_rows
    from training.eval.span_metrics import judge_scores

    if limit and len(rows) > limit:
        rows = random.Random(seed).sample(rows, limit)
    data = label_rows(rows, str(judge.path / "tokenizer.json"), judge.max_length)
    return judge_scores(predict(judge, data), data, rows)


def summedits_fixes(fixer, rows: list[SpanRow]) -> dict[str, float]:
    """SummEdits' contradicted edits: how many the fixer turns back into the human's sentence
    exactly, how many it edits otherwise, and how many consistent sentences it changes."""
    gold = {r.id.removesuffix(":gold"): r.claim for r in rows if r.id.endswith(":gold")}
    wrong = [r for r in rows if r.family == "real-summedits" and r.label == CONTRADICTED]
    same = other = 0
    for r in wrong:
        f = fixer.fix(r.claim, [r.evidence])
        same += f.revised == gold.get(r.id)
        other += f.edited and f.revised != gold.get(r.id)
    right = [r for r in rows if r.id.endswith(":gold")]
    changed = sum(fixer.fix(r.claim, [r.evidence]).edited for r in right)
    return {
        "summedits/edits": float(len(wrong)),
        "summedits/identical_to_human_fix": same / max(1, len(wrong)),
        "summedits/other_edit": other / max(1, len(wrong)),
        "summedits/consistent_changed": changed / max(1, len(right)),
    }
