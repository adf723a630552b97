"""Train the span judge (three heads over one BERT cross-encoder) from span rows, on a GPU.

    python -m training.fit.span_train --train runs/spans/train.jsonl --train runs/spans/real.jsonl.xz \
        --dev runs/spans/dev.jsonl --nli-dev runs/spans/nli-dev.jsonl.xz --base runs/spanbase.npz \
        --tokenizer editor/models/purr-verifier-medium/tokenizer.json --out runs/span-judge \
        --max-seconds 420

Loss: the pair head's cross-entropy + the token tags' cross-entropy (claim tokens with known
tags) + half the pointer's start and end cross-entropy (marked pairs). Every weight but the word
embeddings trains (bf16 autocast on a GPU). Every ``--eval-every`` steps the dev rows are scored
(``training.eval.span_metrics``); the best state by the mean of the span dev's pair balanced
accuracy, token F1, pointer exact match and the NLI dev sets' balanced accuracy is kept and
written to ``--out`` as a folder purr loads (``editor.attribution.span_judge``), with
``metrics.json`` (settings, curve, final per-family scores, speed). Needs numpy, torch,
transformers, tokenizers, safetensors and scikit-learn only.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import time
from pathlib import Path

import numpy as np

from editor.attribution.onnx_bert import bert_config, dequantize
from editor.attribution.span_model import IGNORE, build_model, pad
from editor.llm.partial import save_partial
from editor.verdicts import NOT_SUPPORTED
from training.args import option, switch
from training.data.spans.arrays import label_all
from training.data.spans.rows import LABELS, read_rows
from training.eval.span_metrics import judge_scores, nli_scores
from training.fit.encoder_train import load_matching
from training.fit.steps import (
    add_number_flags,
    epoch_batches,
    fit_steps,
    whole_state,
)

FROZEN = ["bert.embeddings.word_embeddings.weight"]
HEADS = ("token.", "pointer.")


def frozen_names(names: list[str], layers: int = 0) -> set[str]:
    """The weights that do not train: the word embeddings, and with ``layers`` (a CPU run from
    a trained judge) every embedding and the lowest ``layers`` encoder layers.

    >>> sorted(frozen_names(["bert.embeddings.word_embeddings.weight",
    ...     "bert.embeddings.position_embeddings.weight", "bert.encoder.layer.0.output.dense.bias",
    ...     "bert.encoder.layer.1.output.dense.bias", "token.weight"], 1))  # doctest: +NORMALIZE_WHITESPACE
    ['bert.embeddings.position_embeddings.weight', 'bert.embeddings.word_embeddings.weight',
     'bert.encoder.layer.0.output.dense.bias']
    """
    out = set(FROZEN) & set(names)
    if layers:
        prefixes = ("bert.embeddings.", *(f"bert.encoder.layer.{k}." for k in range(layers)))
        out |= {n for n in names if n.startswith(prefixes)}
    return out


def load_rows(paths: list[Path], limit: int = 0):
    rows = [r for p in paths for r in read_rows(p)]
    if limit:
        rows = random.Random(0).sample(rows, min(limit, len(rows)))
    return rows


def nli_rows(path: Path | None, limit: int):
    """NLI dev pairs ``{premise, hypothesis, label, source}`` as span rows (no spans known)."""
    if path is None:
        return [], []
    from training.data.spans.rows import SpanRow, open_text

    rows, sources = [], []
    with open_text(path) as f:
        for k, line in enumerate(f):
            d = json.loads(line)
            label = d["label"] if d["label"] in LABELS else NOT_SUPPORTED
            rows.append(
                SpanRow(
                    f"nli:{k}", "nli:" + d["source"], label, d["hypothesis"], d["premise"], "nli"
                )
            )
            sources.append(d["source"])
    if limit and len(rows) > limit:
        keep = sorted(random.Random(0).sample(range(len(rows)), limit))
        rows, sources = [rows[i] for i in keep], [sources[i] for i in keep]
    return rows, sources


def predict(model, data: dict, device: str, batch: int = 256):
    """Pair probabilities, token tag ids and pointer (start, end) of every encoded pair."""
    import torch

    n = len(data["ids"])
    order = np.argsort([len(x) for x in data["ids"]])
    probs = np.zeros((n, 3), np.float32)
    tags: list[np.ndarray] = [None] * n  # type: ignore[list-item]
    ptr = np.zeros((n, 2), np.int64)
    model.eval()
    with torch.inference_mode(), torch.autocast("cuda", torch.bfloat16, enabled=device == "cuda"):
        for i in range(0, n, batch):
            idx = order[i : i + batch]
            ids, mask, types = (
                torch.from_numpy(a).to(device)
                for a in pad([data["ids"][j] for j in idx], [data["seg"][j] for j in idx])
            )
            pair, tok, start, end = model(ids, mask, types)
            probs[idx] = torch.softmax(pair.float(), -1).cpu().numpy()
            t = tok.argmax(-1).cpu().numpy()
            s, e = start.argmax(-1).cpu().numpy(), end.argmax(-1).cpu().numpy()
            for k, j in enumerate(idx):
                tags[j] = t[k, : len(data["ids"][j])]
                ptr[j] = (s[k], e[k])
    model.train()
    return probs, tags, ptr


def train(args: argparse.Namespace) -> dict:
    import torch

    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    started_all = time.perf_counter()
    rows = load_rows(args.train or [], 0)
    dev_rows = load_rows(args.dev or [], 0)
    if args.parsed is not None:  # make the rows here, in memory
        from training.data.spans.make import generate

        made = generate(
            args.parsed,
            args.passes,
            args.workers or 1,
            args.seed,
            False,
            args.questions,
            args.restated,
        )
        rows += made["train"]
        dev_rows += made["dev"]
    if args.limit:
        rows = random.Random(0).sample(rows, min(args.limit, len(rows)))
    if args.dev_limit and len(dev_rows) > args.dev_limit:
        dev_rows = random.Random(0).sample(dev_rows, args.dev_limit)
    nli, nli_src = nli_rows(args.nli_dev, args.dev_limit)
    tf = str(args.tokenizer)
    data = label_all(rows, tf, args.max_length, args.workers)
    dev = label_all(dev_rows, tf, args.max_length, args.workers)
    nli_data = label_all(nli, tf, args.max_length, args.workers) if nli else None
    prep_s = time.perf_counter() - started_all
    print(
        json.dumps(
            {
                "rows": len(rows),
                "pairs": len(data["ids"]),
                "dev": len(dev["ids"]),
                "prep_seconds": round(prep_s, 1),
            }
        ),
        flush=True,
    )
    device = "cuda" if torch.cuda.is_available() else "cpu"
    weights = dequantize(np.load(args.base))
    model = build_model(bert_config(weights, list(LABELS)))
    fresh = load_matching(model, weights)
    frozen = frozen_names([n for n, _ in model.named_parameters()], args.freeze_layers)
    for n, p in model.named_parameters():
        p.requires_grad = n not in frozen
    model.to(device).train()
    body = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith(HEADS)]
    heads = [p for n, p in model.named_parameters() if n.startswith(HEADS)]
    opt = torch.optim.AdamW(
        [{"params": body, "lr": args.lr}, {"params": heads, "lr": args.head_lr}],
        weight_decay=0.01,
    )
    steps = math.ceil(args.epochs * len(data["ids"]) / args.batch_size)
    if args.max_steps:
        steps = min(steps, args.max_steps)
    if args.max_seconds and args.expected_rate:  # schedule the decay to end with the time
        steps = min(steps, int(args.max_seconds * args.expected_rate / args.batch_size))
    labels = np.array(data["label"], np.int64)
    ptrs = np.array(data["ptr"], np.int64)
    lengths = [len(x) for x in data["ids"]]
    curve: list[dict] = []

    def evaluate(step: int, loss: float) -> float:
        m = judge_scores(predict(model, dev, device), dev, dev_rows)
        if nli_data is not None:
            probs = predict(model, nli_data, device)[0]
            m.update(nli_scores(probs, nli_data, nli_src))
        m["primary"] = float(
            np.nanmean(
                [
                    m.get("pair/balanced_accuracy", np.nan),
                    m.get("token/f1", np.nan),
                    m.get("pointer/exact", np.nan),
                    m.get("nli/shared_balanced_accuracy", np.nan),
                ]
            )
        )
        curve.append(
            {
                "step": step,
                "loss": loss,
                **{k: round(v, 4) for k, v in m.items() if "/" not in k or k.count("/") == 1},
            }
        )
        print(json.dumps(curve[-1]), flush=True)
        return m["primary"]

    ce = torch.nn.functional.cross_entropy

    def loss_of(b: np.ndarray):
        ids, mask, types = (
            torch.from_numpy(a).to(device)
            for a in pad([data["ids"][j] for j in b], [data["seg"][j] for j in b])
        )
        tags = np.full(ids.shape, IGNORE, np.int64)
        for k, j in enumerate(b):
            tags[k, : len(data["tags"][j])] = data["tags"][j]
        with torch.autocast("cuda", torch.bfloat16, enabled=device == "cuda"):
            pair, tok, start, end = model(ids, mask, types)
        loss = ce(pair.float(), torch.from_numpy(labels[b]).to(device))
        t = torch.from_numpy(tags).to(device)
        if (t != IGNORE).any():
            loss = loss + ce(tok.float().flatten(0, 1), t.flatten(), ignore_index=IGNORE)
        p = torch.from_numpy(ptrs[b]).to(device)
        has = p[:, 0] >= 0
        if has.any():
            loss = loss + 0.5 * (
                ce(start.float()[has], p[has, 0]) + ce(end.float()[has], p[has, 1])
            )
        return loss

    fitted = fit_steps(
        body + heads,
        opt,
        steps,
        lambda: epoch_batches(rng, lengths, args.batch_size),
        loss_of,
        evaluate,
        lambda: whole_state(model),
        eval_every=args.eval_every,
        max_seconds=args.max_seconds,
        keep_on_error=True,  # keep what was learned: the best state so far is still written
    )
    best, step, seen, train_s = fitted.best, fitted.step, fitted.seen, fitted.seconds
    model.load_state_dict(fitted.state)
    args.out.mkdir(parents=True, exist_ok=True)
    model.config.architectures = ["SpanJudgeModel"]
    model.config.purr_reads_questions = any(r.question for r in rows)
    save_partial(model, args.out, args.base_ref, FROZEN)
    tok_dir = Path(args.tokenizer).parent
    for name in ("tokenizer.json", "tokenizer_config.json"):
        if (tok_dir / name).is_file():
            shutil.copy(tok_dir / name, args.out / name)
    final = judge_scores(predict(model, dev, device), dev, dev_rows)
    if nli_data is not None:
        final.update(nli_scores(predict(model, nli_data, device)[0], nli_data, nli_src))
    result = {
        "settings": {
            k: [str(x) for x in v] if isinstance(v, list) else str(v) if isinstance(v, Path) else v
            for k, v in vars(args).items()
        },
        "fresh_weights": fresh,
        "train_rows": len(rows),
        "train_pairs": len(data["ids"]),
        "steps": step,
        "prep_seconds": prep_s,
        "train_seconds": train_s,
        "pairs_per_second": seen / train_s,
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "best_primary": best,
        "curve": curve,
        "dev": final,
    }
    (args.out / "metrics.json").write_text(json.dumps(result, indent=1), "utf-8")
    return result


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--train", type=Path, action="append", help="span rows (repeatable)")
    p.add_argument("--dev", type=Path, action="append", help="span dev rows (repeatable)")
    option(
        p,
        "--parsed",
        Path,
        None,
        "parsed documents to make rows from in memory (training.data.spans)",
    )
    option(p, "--passes", int, 1, "with --parsed")
    switch(p, "--questions", "with --parsed: the question families too")
    switch(p, "--restated", "with --parsed: the restated families and short windows too")
    option(p, "--nli-dev", Path, None, "NLI dev pairs with a source")
    p.add_argument("--base", type=Path, required=True, help="starting weights (.npz by HF name)")
    p.add_argument(
        "--base-ref",
        default="packaged:ms-marco-minilm-l12",
        help="what purr_base.json names as the frozen embeddings' source",
    )
    p.add_argument("--tokenizer", type=Path, required=True, help="a tokenizer.json")
    p.add_argument("--out", type=Path, required=True)
    add_number_flags(p, max_length=160, lr=5e-5, head_lr=5e-4, epochs=1.0, batch_size=128)
    add_number_flags(p, eval_every=1000, seed=1, max_steps=0)
    p.add_argument("--max-seconds", type=float, default=0)
    option(
        p,
        "--expected-rate",
        float,
        0,
        "pairs/s expected: with --max-seconds, the schedule ends with the time",
    )
    option(p, "--limit", int, 0, "a smoke run on this many train rows")
    add_number_flags(p, dev_limit=6000, workers=0)
    option(
        p,
        "--freeze-layers",
        int,
        0,
        "keep the embeddings and this many of the lowest layers as --base has them",
    )
    r = train(p.parse_args(argv))
    print(
        json.dumps(
            {k: r[k] for k in ("steps", "best_primary", "train_seconds", "pairs_per_second")}
        )
    )
    print(json.dumps({k: round(v, 3) for k, v in r["dev"].items()}, indent=0))


if __name__ == "__main__":
    main()
