"""Scores of the span judge on encoded dev pairs (pure functions over arrays).

``judge_scores(predictions, data, rows)`` returns, overall and per family:
- ``pair/balanced_accuracy``: mean recall over the three classes (the primary pair figure),
  ``pair/supported_balanced_accuracy``: supported against the rest;
- ``token/f1``: claim tokens tagged C or U, a hit when the kind matches (plain pairs, tokens
  whose tags are known);
- ``pointer/exact``: marked pairs whose predicted start and end both equal the target
  ([CLS] for "none").
``nli_scores(probs, data, sources)``: balanced accuracy and ROC-AUC of supported against
the rest per NLI source, and their mean over the four shared sets.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from editor.attribution.span_model import IGNORE, TOKEN_TAGS

SHARED = ("scifact", "climate-fever", "wice", "summedits")
_KIND = np.array([0] + [1 if t.endswith("C") else 2 for t in TOKEN_TAGS[1:]])


def balanced_accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    """Mean recall over the classes present in ``y``.

    >>> balanced_accuracy(np.array([0, 0, 1]), np.array([0, 1, 1]))
    0.75
    """
    return (
        float(np.mean([(pred[y == c] == c).mean() for c in np.unique(y)])) if len(y) else math.nan
    )


def f1(tp: int, fp: int, fn: int) -> float:
    """F1 from counts.

    >>> f1(2, 1, 1)
    0.6666666666666666
    """
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def judge_scores(predictions, data: dict, rows) -> dict[str, float]:
    probs, tags, ptr = predictions
    y = np.array(data["label"])
    gold_ptr = np.array(data["ptr"])
    plain = gold_ptr[:, 0] < 0
    pred = probs.argmax(-1)
    fam = np.array([rows[k].family for k in data["row"]])
    out: dict[str, float] = {}
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    hits: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for j in range(len(y)):
        if plain[j]:
            gold = np.asarray(data["tags"][j])
            known = gold != IGNORE
            if not known.any():
                continue
            g, p = _KIND[gold[known]], _KIND[np.asarray(tags[j])[known]]
            for key in ("all", fam[j]):
                c = counts[key]
                c[0] += int(((g == p) & (g > 0)).sum())
                c[1] += int(((p > 0) & (g != p)).sum())
                c[2] += int(((g > 0) & (g != p)).sum())
        else:
            ok = int(ptr[j][0] == gold_ptr[j][0] and ptr[j][1] == gold_ptr[j][1])
            for key in ("all", fam[j]):
                hits[key][0] += ok
                hits[key][1] += 1
    out["pair/balanced_accuracy"] = balanced_accuracy(y[plain], pred[plain])
    out["pair/supported_balanced_accuracy"] = balanced_accuracy(
        (y[plain] == 0).astype(int), (pred[plain] == 0).astype(int)
    )
    out["token/f1"] = f1(*counts["all"])
    out["pointer/exact"] = hits["all"][0] / hits["all"][1] if hits["all"][1] else math.nan
    for f in sorted(set(fam.tolist())):
        m = plain & (fam == f)
        out[f"family/{f}/pair_accuracy"] = float((pred[m] == y[m]).mean()) if m.any() else math.nan
        out[f"family/{f}/n"] = int(m.sum())
        if f in counts and counts[f][0] + counts[f][2]:
            out[f"family/{f}/token_f1"] = f1(*counts[f])
        elif f in counts and m.any():  # nothing to flag: how often it flags anyway
            out[f"family/{f}/false_flags_per_row"] = counts[f][1] / int(m.sum())
        if f in hits:
            out[f"family/{f}/pointer_exact"] = hits[f][0] / hits[f][1]
    return out


def nli_scores(probs: np.ndarray, data: dict, sources: list[str]) -> dict[str, float]:
    from sklearn.metrics import roc_auc_score

    y = (np.array(data["label"]) == 0).astype(int)
    src = np.array([sources[k] for k in data["row"]])
    out: dict[str, float] = {}
    for s in sorted(set(src.tolist())):
        m = src == s
        out[f"nli/{s}/balanced_accuracy"] = balanced_accuracy(y[m], (probs[m, 0] >= 0.5) * 1)
        out[f"nli/{s}/roc_auc"] = (
            float(roc_auc_score(y[m], probs[m, 0])) if 0 < y[m].sum() < m.sum() else math.nan
        )
    shared = [
        out[f"nli/{s}/balanced_accuracy"] for s in SHARED if f"nli/{s}/balanced_accuracy" in out
    ]
    out["nli/shared_balanced_accuracy"] = float(np.mean(shared)) if shared else math.nan
    aucs = [out[f"nli/{s}/roc_auc"] for s in SHARED if f"nli/{s}/roc_auc" in out]
    out["nli/shared_roc_auc"] = float(np.mean(aucs)) if aucs else math.nan
    return out
