"""``purr train reranker``: distil the 12-layer cross-encoder into a smaller one.

The student is the teacher cut to ``--layers`` of its own (DistilBERT's init: every other layer,
the last kept), its word embeddings frozen at the teacher's. It learns the teacher's raw logits
(mean squared error; each query's ``--top-k`` windows weighted ``--top-weight``), or with
``--loss listwise`` each query's order of its windows as well, on the pairs ``purr data
rerank-pairs`` recorded from research, and is scored on held-out texts by how often its best
window per query is the teacher's (and the teacher's best among its best two), and by the
correlation of the two scores. ``--save-trained`` keeps the trained weights and ``--init``
continues from them (a fresh optimizer and schedule; the same held-out queries, checked).
Written to ``--out``:

- ``model.onnx`` (+ ``model.onnx.data``, the word embeddings): the student as an int8 graph
  quantised as the teacher is (dynamic; weights per tensor, or per column with
  ``--per-channel``), with the teacher's ``tokenizer.json``: a folder ``rerank.model`` loads
  directly; ``fp32/``: the same network unquantised (90 MB, for measuring);
- ``metrics.json``: settings, the curve, held-out scores, teacher and student pairs/s.

The loop is ``training.fit.reranker_fit``'s, here on the CPU. On a GPU machine it runs from the
kit ``training.fit.reranker_kit`` writes; ``--trained DIR`` then exports what the kit's run
returned, with the same ``--pairs``, ``--limit``, ``--seed`` and ``--layers``.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from training.args import non_negative_float, option, positive_float, positive_int, switch
from training.fit.reranker_fit import (
    agreement,
    encode,
    fit,
    held_out_digest,
    load_trained,
    predict,
    save_trained,
    split_by_query,
)

log = logging.getLogger(__name__)
TEACHER = "packaged:ms-marco-minilm-l12"


def student_weights(teacher: dict[str, np.ndarray], layers: list[int]) -> dict[str, np.ndarray]:
    """The teacher's weights with only ``layers`` kept, renumbered from 0.

    >>> w = {"bert.encoder.layer.3.x": np.ones(1), "bert.encoder.layer.5.x": np.zeros(1), "c": 1}
    >>> sorted(student_weights(w, [5]))
    ['bert.encoder.layer.0.x', 'c']
    """
    out = {k: v for k, v in teacher.items() if not k.startswith("bert.encoder.layer.")}
    for new, old in enumerate(layers):
        prefix = f"bert.encoder.layer.{old}."
        for k, v in teacher.items():
            if k.startswith(prefix):
                out[f"bert.encoder.layer.{new}.{k[len(prefix) :]}"] = v
    return out


def export(model: Any, tokenizer_dir: Path, out: Path, per_channel: bool = False) -> None:
    """``model`` as an int8 ONNX cross-encoder folder (the teacher's quantisation recipe:
    dynamic, weights per tensor; ``per_channel``: a scale per output column), and its fp32 graph
    in ``out/fp32``."""
    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.mkdir(parents=True, exist_ok=True)
    fp32 = out / "fp32.onnx"
    model.eval()
    dummy = (torch.ones(2, 16, dtype=torch.long),) * 3
    dyn = {0: "batch", 1: "length"}
    torch.onnx.export(
        model,
        dummy,
        str(fp32),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={"input_ids": dyn, "attention_mask": dyn, "token_type_ids": dyn},
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(
        str(fp32), str(out / "int8.onnx"), weight_type=QuantType.QInt8, per_channel=per_channel
    )
    graph = onnx.load(str(out / "int8.onnx"))
    keep = out / "fp32"  # the unquantised graph, for measuring (not a file to ship: 90 MB)
    keep.mkdir(exist_ok=True)
    shutil.move(fp32, keep / "model.onnx")
    shutil.copy(tokenizer_dir / "tokenizer.json", keep / "tokenizer.json")
    for f in (out / "int8.onnx", out / "model.onnx", out / "model.onnx.data"):
        f.unlink(missing_ok=True)
    onnx.save_model(  # the embeddings apart: each file stays small
        graph,
        str(out / "model.onnx"),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="model.onnx.data",
        size_threshold=4 * 1024 * 1024,
    )
    shutil.copy(tokenizer_dir / "tokenizer.json", out / "tokenizer.json")


def pairs_per_second(folder: Path, rows: list, max_length: int, runs: int = 3) -> float:
    """Median pairs/s of the ONNX cross-encoder in ``folder`` over ``rows``."""
    from retrieval.rerank import OnnxCrossEncoder

    enc = OnnxCrossEncoder(folder, max_length, batch_size=8)
    pairs = [(r.query, r.passage) for r in rows]
    enc.pair_logits(pairs[:8])
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        enc.pair_logits(pairs)
        times.append(time.perf_counter() - t)
    return len(pairs) / float(np.median(times))


def student(layers: list[int]) -> tuple[Any, dict[str, Any]]:
    """The teacher cut to ``layers`` (a ``BertForSequenceClassification``) and its config."""
    from transformers import BertConfig, BertForSequenceClassification

    from editor.attribution.bert_weights import base_weights
    from editor.attribution.onnx_bert import bert_config
    from training.fit.encoder_train import load_matching

    weights = student_weights(base_weights(TEACHER), layers)
    config = bert_config(weights, ["relevance"])
    model = BertForSequenceClassification(BertConfig(**config))
    fresh = load_matching(model, weights)
    if fresh:
        raise ValueError(f"the teacher's weights left these fresh: {fresh[:5]}")
    return model, config


def pair_rows(args: argparse.Namespace) -> list:
    """The pairs the student learns from (``--limit`` of them, drawn with ``--seed``)."""
    from training.data.rerank_pairs import read_pairs

    rows = read_pairs(Path(args.pairs))
    if args.limit and getattr(args, "whole_queries", False):
        per = Counter(r.query for r in rows)
        queries = sorted(per)
        random.Random(args.seed).shuffle(queries)
        kept, n = set(), 0
        for q in queries:
            if n >= args.limit:
                break
            kept.add(q)
            n += per[q]
        return [r for r in rows if r.query in kept]
    if args.limit:
        rows = random.Random(args.seed).sample(rows, min(args.limit, len(rows)))
    return rows


def train(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    if args.trained and (args.init or args.save_trained):
        raise ValueError(
            "--trained exports a kit run's weights; --init and --save-trained are for training "
            "here: give one or the other"
        )
    out = Path(args.out).resolve()
    for flag, folder in (("--trained", args.trained), ("--init", args.init)):
        if folder and Path(folder).resolve() == out and not args.save_trained:
            raise ValueError(
                f"--out is the {flag} folder, whose weights this run would replace: give "
                "another --out (or --save-trained to keep the new weights there)"
            )

    from retrieval.assets import resolve
    from retrieval.onnx_runtime import tokenizer

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    layers = [int(x) for x in args.layers.split(",")]
    teacher_dir = resolve(TEACHER).path
    assert teacher_dir is not None
    model, _ = student(layers)
    train_rows, dev_rows = split_by_query(pair_rows(args), args.dev_share, args.seed)
    tok = tokenizer(teacher_dir, args.max_length)
    dev_teacher = np.array([r.logit for r in dev_rows], np.float32)
    digest = held_out_digest(dev_rows)
    kit: dict[str, Any] = {}
    if args.trained:  # the kit's run on a device (training.fit.reranker_kit)
        device = _device_run(Path(args.trained), layers, dev_rows)
        load_trained(model, Path(args.trained))
        trained = predict(model, encode(tok, dev_rows))
        curve = [*device["curve"], {"step": "device", **agreement(dev_rows, dev_teacher, trained)}]
        kit = device.get("settings", {})
    else:
        if args.init:
            _check_init(Path(args.init), layers, digest)
            load_trained(model, Path(args.init))
        curve = fit(model, tok, train_rows, dev_rows, args)
    out = Path(args.out)
    if args.save_trained:
        save_trained(model, out, {"layers": args.layers, "held_out": digest})
    else:  # no stale shards from an earlier run beside this export
        for old in [*out.glob("trained-*.safetensors"), out / "trained.json"]:
            old.unlink(missing_ok=True)
    export(model, teacher_dir, out, args.per_channel)
    student_dev = _onnx_logits(out, dev_rows, args.max_length)
    metrics = {
        "teacher": TEACHER,
        "layers": layers,
        "settings": {k: v for k, v in vars(args).items() if k not in ("handler", "common")},
        **({"kit_settings": kit} if kit else {}),
        "rows": {"train": len(train_rows), "dev": len(dev_rows)},
        "curve": curve,
        "dev_torch": curve[-1],
        "dev_int8": agreement(dev_rows, dev_teacher, student_dev),
        "pairs_per_s": {
            "teacher": pairs_per_second(teacher_dir, dev_rows[:256], args.max_length),
            "student": pairs_per_second(out, dev_rows[:256], args.max_length),
        },
    }
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1))
    return metrics


def _check_init(folder: Path, layers: list[int], digest: str) -> None:
    """Refuse ``--init`` weights saved with other layers or other held-out queries (their
    scores would then read queries the weights were trained on)."""
    meta = _record(
        folder / "trained.json",
        "--init takes a folder written with --save-trained (by this version; an older one: "
        "train it again with --save-trained)",
    )
    _same_split(folder, meta.get("layers"), meta.get("held_out"), layers, digest)


def _device_run(folder: Path, layers: list[int], dev_rows: list) -> dict[str, Any]:
    """The kit run's ``curve.json``, refused unless it kept these layers and held out these
    queries (the same ``--pairs``, ``--limit``, ``--whole-queries``, ``--seed`` and
    ``--dev-share``)."""
    run = _record(folder / "curve.json", "run the kit first (training.fit.reranker_kit)")
    digest = held_out_digest(dev_rows)
    _same_split(folder, run["settings"].get("layers"), run.get("held_out"), layers, digest)
    return run


def _record(path: Path, hint: str) -> dict[str, Any]:
    if not path.is_file():
        raise ValueError(f"no {path.name} in {path.parent}: {hint}")
    return json.loads(path.read_text())


def _same_split(
    folder: Path, saved_layers: Any, saved_digest: Any, layers: list[int], digest: str
) -> None:
    """Weights in ``folder`` fit this run only with the same layers and held-out queries."""
    kept = [int(x) for x in str(saved_layers or "").split(",") if x]
    if kept != layers:
        raise ValueError(f"{folder} kept layers {kept}, not --layers {layers}")
    if saved_digest != digest:
        raise ValueError(
            f"{folder} held out other queries: give the same --pairs, --limit, "
            "--whole-queries, --seed and --dev-share"
        )


def _onnx_logits(folder: Path, rows: list, max_length: int) -> np.ndarray:
    from retrieval.rerank import OnnxCrossEncoder

    return OnnxCrossEncoder(folder, max_length).pair_logits([(r.query, r.passage) for r in rows])


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pairs", required=True, help="pairs.jsonl from purr data rerank-pairs")
    p.add_argument("--out", required=True, help="folder for the student (rerank.model=FOLDER)")
    p.add_argument("--layers", default="0,2,4,7,9,11", help="the teacher's layers kept, in order")
    p.add_argument("--epochs", type=positive_int, default=2)
    option(
        p,
        "--batch-size",
        positive_int,
        32,
        "pairs a step (listwise: whole queries up to at least this many)",
    )
    p.add_argument("--lr", type=float, default=8e-5)
    p.add_argument("--max-length", type=positive_int, default=256)
    option(p, "--dev-share", float, 0.05, "queries held out for scoring")
    option(p, "--limit", positive_int, None, "train on this many pairs")
    switch(
        p,
        "--whole-queries",
        "--limit draws whole queries (all their windows) rather than single pairs, so the "
        "listwise loss and the held-out ranking see every window of a query",
    )
    option(p, "--top-weight", float, 1.0, "loss weight of each query's top windows")
    option(p, "--top-k", positive_int, 3, "windows --top-weight covers")
    p.add_argument(
        "--loss",
        choices=("mse", "listwise"),
        default="mse",
        help="mse: the teacher's logits; listwise: each query's ranking of its windows too",
    )
    option(p, "--temperature", positive_float, 1.0, "the listwise softmax's")
    option(p, "--mse-weight", non_negative_float, 0.1, "the squared error's share under listwise")
    p.add_argument(
        "--init",
        default=None,
        help="start from these trained-*.safetensors (a kit run's or --save-trained's output) "
        "instead of the cut teacher: training continued across runs",
    )
    switch(
        p,
        "--save-trained",
        "also write the trained weights (fp16 shards under 16 MiB) into --out, for --init",
    )
    p.add_argument("--eval-every", type=positive_int, default=200)
    p.add_argument("--threads", type=positive_int, default=2)
    switch(p, "--per-channel", "int8 weights with a scale per output column")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument(
        "--trained",
        default=None,
        help="the output folder of the device kit's run (training.fit.reranker_kit): export "
        "its weights instead of training here (the same --pairs, --limit, --seed and --layers)",
    )


def add_parser(tsub: argparse._SubParsersAction, common: Any) -> None:
    """``purr train reranker``."""
    p = tsub.add_parser("reranker", help="distil the cross-encoder reranker into fewer layers")
    add_args(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import sys

    print(json.dumps(train(args)), file=sys.stdout)
    return 0
