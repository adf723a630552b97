"""Evaluate an attribution (NLI) model on the dev split of each shared NLI source.

Targets are binary (supported vs rest, as auto-AIS uses them); the score is P(supported) from
``model.score_batch``, so long premises go through the model's own chunking (``ChunkedNLI``)
unless ``windowed=True`` (the training-time sentence selection). A hypothesis of several
sentences (a SummEdits summary) is scored sentence by sentence and is supported when every
sentence is (``all_sentences``), as auto-AIS reads a passage; ``per_sentence=False`` scores it
whole. Per source:
``balanced_accuracy`` at 0.5 (primary), at the best threshold, ``roc_auc``, and 3-way accuracy
(argmax over the three scores); ``mean/*`` averages over sources. Throughput is pairs/s of
``score_batch`` on dev pairs windowed to fill ``max_length`` tokens.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from editor.attribution.base import AttributionModel, build
from editor.attribution.decoder import is_decoder_folder
from editor.attribution.factories import PRESETS
from editor.config import AttributionConfig
from editor.policy import CONTRADICTED_MIN
from editor.verdicts import SUPPORTED
from retrieval.files import write_text
from retrieval.sentences import split
from training.args import add_dev_set_args, add_device_args, check_data_dir, option, switch
from training.data.nli import (
    DEV_FRACTION,
    LABELS,
    NLI_FILES,
    NLIExample,
    load_nli_sets,
    split_source,
)
from training.eval.attribution_metrics import binary_report, expected_calibration_error
from training.eval.base import Evaluation
from training.figures import save_figure

EVALUATION = Evaluation(
    name="attribution",
    help="evaluate an attribution model on the dev splits",
    primary="mean/balanced_accuracy",
)

log = logging.getLogger(__name__)


def load_dev_sets(
    data_dir: str | Path | None = None,
    sources: Sequence[str] | None = None,
    *,
    limit: int | None = None,
    max_length: int | None = None,
    dev_fraction: float = DEV_FRACTION,
) -> dict[str, list[NLIExample]]:
    """The dev split (by document, as in training) of each source, first ``limit`` rows each
    (``dev``- and ``eval``-use sets whole: never trained on); ``max_length`` windows premises
    (None keeps them whole)."""
    sets = load_nli_sets(data_dir, sources, max_length=max_length)
    dev = {name: split_source(name, rows, dev_fraction).dev for name, rows in sets.items()}
    return {name: rows[:limit] if limit else rows for name, rows in dev.items()}


def build_model(
    ref: str | AttributionConfig,
    device: str = "auto",
    max_length: int = 256,
    overlap: int = 1,
    gather: bool = False,
) -> AttributionModel:
    """An attribution model from a config, a trained folder (type purr; ``large`` names the
    shipped decoder verifier, ``medium`` the MiniLM-L12 one) or an HF reference; long premises are read in windows of
    ``max_length`` tokens sharing ``overlap`` sentences."""
    if isinstance(ref, AttributionConfig):
        return build(ref)
    if ref.startswith("judge:"):  # a judge's sentence verdicts (training.eval.judge_scores)
        from training.eval.judge_scores import judge_model

        return judge_model(ref.removeprefix("judge:"))  # type: ignore[return-value]
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    folder = Path(ref).expanduser()
    trained = ref in PRESETS or (folder / "config.json").is_file() or is_decoder_folder(folder)
    kind = "purr" if trained else "hf"
    return build(
        AttributionConfig(
            type=kind,
            model=ref,
            device=device,
            max_length=max_length,
            overlap=overlap,
            gather=gather,
        )
    )


def score_rows(
    model: AttributionModel,
    rows: Sequence[NLIExample],
    batch: int = 64,
    progress: bool = True,
    desc: str = "score",
    per_sentence: bool = False,
    decompose: bool = False,
) -> np.ndarray:
    """(n, 3) scores in ``LABELS`` order. ``per_sentence`` scores each sentence of a
    multi-sentence hypothesis on its own and combines them with ``all_sentences``;
    ``decompose`` also splits each sentence into its atomic parts (``editor.text.parts``)."""
    out = np.zeros((len(rows), 3))
    for i in tqdm(range(0, len(rows), batch), desc=desc, disable=not progress, leave=False):
        chunk = rows[i : i + batch]
        parts = [
            hypothesis_sentences(r.hypothesis) if per_sentence else [r.hypothesis] for r in chunk
        ]
        if decompose:
            parts = decompose_all(parts)
        pairs = [(r.premise, h) for r, hs in zip(chunk, parts, strict=True) for h in hs]
        flat = np.array(
            [[s.supported, s.contradicted, s.not_supported] for s in model.score_batch(pairs)]
        )
        start = 0
        for j, hs in enumerate(parts):
            out[i + j] = all_sentences(flat[start : start + len(hs)])
            start += len(hs)
    return out


def hypothesis_sentences(text: str) -> list[str]:
    """The sentences of a hypothesis (the whole text when it has one, or no split).

    >>> hypothesis_sentences("Ann won. She was 3.")
    ['Ann won.', 'She was 3.']
    """
    return split(text) or [text]


def decompose_all(sentences: list[list[str]]) -> list[list[str]]:
    """Each hypothesis's sentences replaced by their atomic parts (one spaCy pass)."""
    from editor.text.nlp import get_nlp
    from editor.text.parts import sentence_parts

    flat = [s for ss in sentences for s in ss]
    parts = [[p.text for p in sentence_parts(d)] for d in get_nlp().pipe(flat)]
    out, k = [], 0
    for ss in sentences:
        out.append([p for j in range(k, k + len(ss)) for p in parts[j]])
        k += len(ss)
    return out


def all_sentences(scores: np.ndarray) -> np.ndarray:
    """The scores of a claim made of sentences with ``scores`` (n, 3) in ``LABELS`` order: it
    is supported when every sentence is (min), contradicted when any sentence is (max), and
    not supported by the rest, so the three sum to 1 when each row does.

    >>> all_sentences(np.array([[0.9, 0.05, 0.05], [0.6, 0.3, 0.1]])).round(2).tolist()
    [0.6, 0.3, 0.1]
    """
    supported = float(scores[:, 0].min())
    contradicted = min(float(scores[:, 1].max()), 1.0 - supported)
    return np.array([supported, contradicted, 1.0 - supported - contradicted])


def evaluate_model(
    model: AttributionModel,
    dev: Mapping[str, Sequence[NLIExample]],
    progress: bool = True,
    per_sentence: bool = True,
    decompose: bool = False,
) -> dict[str, float]:
    """Metrics per source (``source/name``) and averaged (``mean/name``); primary
    ``mean/balanced_accuracy``."""
    out: dict[str, float] = {}
    for name, rows in dev.items():
        if not rows:
            log.warning("source %s has no dev rows, skipped", name)
            continue
        scores = score_rows(
            model,
            rows,
            progress=progress,
            desc=f"eval {name}",
            per_sentence=per_sentence,
            decompose=decompose,
        )
        y = np.array([r.label == SUPPORTED for r in rows], dtype=int)
        for key, value in binary_report(y, scores[:, 0]).items():
            out[f"{name}/{key}"] = value
        out[f"{name}/ece"] = expected_calibration_error(y, scores[:, 0])
        gold = np.array([LABELS.index(r.label) for r in rows])
        out[f"{name}/accuracy_3way"] = float((scores.argmax(1) == gold).mean())
        # correct claims called contradicted by the gate's rule (what the gate then edits),
        # and the claims that are not supported it calls so
        refuted = (scores[:, 1] >= CONTRADICTED_MIN) & (scores[:, 1] > scores[:, 0])
        correct = gold == LABELS.index(SUPPORTED)
        out[f"{name}/false_contradiction_rate"] = (
            float(refuted[correct].mean()) if correct.any() else float("nan")
        )
        out[f"{name}/contradiction_recall"] = (
            float(refuted[~correct].mean()) if (~correct).any() else float("nan")
        )
    for key in (
        "balanced_accuracy",
        "balanced_accuracy_best",
        "roc_auc",
        "ece",
        "accuracy_3way",
        "false_contradiction_rate",
        "contradiction_recall",
    ):
        values = [v for k, v in out.items() if k.endswith("/" + key) and not math.isnan(v)]
        out[f"mean/{key}"] = float(np.mean(values)) if values else float("nan")
    return out


def measure_throughput(
    model: AttributionModel,
    pairs: Sequence[tuple[str, str]],
    max_seconds: float = 20.0,
    batch: int = 64,
) -> float:
    """Pairs per second of ``score_batch`` over ``pairs`` (stops after ``max_seconds``)."""
    if not pairs:
        return float("nan")
    model.score_batch([pairs[0]])  # load the model outside the timing
    done, t0 = 0, time.perf_counter()
    for i in range(0, len(pairs), batch):
        model.score_batch(list(pairs[i : i + batch]))
        done += len(pairs[i : i + batch])
        if time.perf_counter() - t0 > max_seconds:
            break
    return done / (time.perf_counter() - t0)


def plot_metrics(metrics: Mapping[str, float], path: str | Path, title: str = "") -> Path:
    """Bar chart of balanced accuracy (0.5 and best threshold) and ROC-AUC per source."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted({k.split("/")[0] for k in metrics if "/" in k} - {"mean"}) + ["mean"]
    keys = ("balanced_accuracy", "balanced_accuracy_best", "roc_auc")
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(1.6 * len(names) + 2, 4))
    for j, key in enumerate(keys):
        values = [metrics.get(f"{n}/{key}", float("nan")) for n in names]
        ax.bar(x + (j - 1) * 0.27, values, 0.27, label=key)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xticks(x, names)
    ax.set_ylim(0, 1)
    ax.set_ylabel("supported vs rest")
    ax.set_title(title or "attribution model, dev split")
    ax.legend(fontsize=8, loc="lower right")
    path = Path(path)
    return save_figure(fig, path)


def run_eval(
    model_ref: str | AttributionConfig,
    out: str | Path,
    *,
    data_dir: str | Path | None = None,
    sources: Sequence[str] | None = None,
    limit: int | None = None,
    max_length: int = 256,
    windowed: bool = False,
    per_sentence: bool = True,
    device: str = "auto",
    progress: bool = True,
    decompose: bool = False,
    overlap: int = 1,
    gather: bool = False,
) -> dict[str, Any]:
    """Evaluate, measure throughput, write ``metrics.json`` and ``metrics.png`` into ``out``."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1 row per source, got {limit}")
    model = build_model(model_ref, device, max_length, overlap, gather)
    dev = load_dev_sets(
        data_dir,
        sources or list(NLI_FILES),
        limit=limit,
        max_length=max_length if windowed else None,
    )
    metrics = evaluate_model(
        model, dev, progress=progress, per_sentence=per_sentence, decompose=decompose
    )
    windows = load_dev_sets(data_dir, list(dev), limit=limit, max_length=max_length)
    pairs = [(r.premise, r.hypothesis) for rows in windows.values() for r in rows]
    pairs = sorted(pairs, key=lambda p: -len(p[0]) - len(p[1]))[:256]  # the ones that fill 256
    metrics["throughput/pairs_per_s"] = measure_throughput(model, pairs)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    report = {
        "primary": "mean/balanced_accuracy",
        "model": model_ref if isinstance(model_ref, str) else model_ref.model_dump(mode="json"),
        "data_dir": str(data_dir) if data_dir else None,
        "rows": {name: len(rows) for name, rows in dev.items()},
        "premises": "windowed" if windowed else "whole (model chunking)",
        "hypotheses": "per sentence (all must be supported)" if per_sentence else "whole",
        "decompose": decompose,
        "max_length": max_length,
        "overlap": overlap,
        "gather": gather,
        "metrics": metrics,
    }
    write_text(out / "metrics.json", json.dumps(report, indent=2, default=float))
    plot_metrics(metrics, out / "metrics.png", title=str(model_ref)[-60:])
    return report


def add_cli_args(e: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    """``purr eval attribution``'s arguments (its own ``-v``; no config)."""
    add_dev_set_args(
        e,
        "folder for metrics.json and metrics.png",
        model="trained folder, an HF NLI model path / id, or judge:NAME (rules, span, union, "
        "learned: that judge's sentence verdicts)",
        sources_help="comma-separated NLI sets or aliases (shared, extra, eval-only); the mean "
        "is theirs",
        limit_help="dev rows per source",
        max_length=256,
    )
    option(e, "--overlap", int, 1, "sentences consecutive premise windows share")
    switch(e, "--windowed", "score training-style premise windows")
    switch(
        e,
        "--gather",
        "also read a long premise as one window of the sentences that cover the claim",
    )
    switch(
        e,
        "--whole-hypothesis",
        "score a multi-sentence hypothesis whole (default: per sentence, all must hold)",
    )
    switch(
        e,
        "--decompose",
        "split each hypothesis sentence into its atomic parts by its parse (all must hold)",
    )
    add_device_args(e)


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval attribution``: where the report went, its row counts and metrics."""
    from training.data.nli_sources import expand

    check_data_dir(args.data_dir)
    model = Path(args.model).expanduser()
    named = args.model.startswith(("packaged:", "judge:"))
    if not named and not model.exists() and "/" not in args.model:
        raise ValueError(f"--model {args.model} is neither a folder nor a hub id (org/name)")
    report = run_eval(
        args.model,
        args.out,
        data_dir=args.data_dir,
        sources=expand([s.strip() for s in args.sources.split(",") if s.strip()]),
        limit=args.limit,
        max_length=args.max_length,
        windowed=args.windowed,
        per_sentence=not args.whole_hypothesis,
        device=args.device,
        decompose=args.decompose,
        overlap=args.overlap,
        gather=args.gather,
    )
    return {"out": args.out, "rows": report["rows"], "metrics": report["metrics"]}


def render(report: dict[str, Any]) -> str:
    """The report as JSON (numpy numbers written as floats)."""
    return json.dumps(report, indent=2, default=float)
