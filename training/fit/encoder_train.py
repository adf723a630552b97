"""Train an encoder verifier (BERT-style cross-encoder) from an encoder bundle, on a GPU.

Reads a bundle made by ``training.fit.encoder_bundle`` and one of its bases, fine-tunes every
weight but the word embeddings in bf16 autocast on ``(1 - d) x`` class-weighted cross-entropy
to the gold labels ``+ d x`` cross-entropy to the teacher's probabilities (``--distill d``,
where the bundle has them), scores the dev rows every ``--eval-every`` steps (per source:
balanced accuracy of supported vs rest at P >= 0.5 and ROC-AUC; the best state by the mean over
the four shared sets is kept), then writes to ``--out``:

- a verifier folder purr loads (``attribution.model=FOLDER``): ``config.json``, fp16 shards of
  every weight but the frozen word embeddings, ``purr_base.json`` naming ``--base-ref`` and the
  bundle's tokenizer;
- ``probs.npz``: the best state's 3-way probabilities of the dev and eval rows;
- ``metrics.json``: the run's settings, its curve, dev and eval-only scores, speed.

A head whose shape does not fit (the ranker's one relevance logit) starts fresh. Needs numpy,
torch, transformers, scikit-learn and safetensors only: with ``decoder_train.py``,
``editor/attribution/onnx_bert.py``, ``editor/llm/partial.py`` and ``editor/attribution/decoder_model.py`` beside
it (in empty packages) it runs where purr is not installed.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
from pathlib import Path

import numpy as np

from editor.attribution.onnx_bert import bert_config, dequantize
from editor.attribution.span_model import pad
from editor.llm.partial import save_partial
from training.args import option
from training.fit.decoder_train import scores
from training.fit.steps import (
    add_number_flags,
    add_stop_flags,
    epoch_batches,
    fit_steps,
    open_bundle,
    whole_state,
)

FROZEN = ["bert.embeddings.word_embeddings.weight"]


def split(tokens, name: str):
    ids, offsets = tokens[f"{name}_ids"], tokens[f"{name}_offsets"]
    rows = [ids[offsets[i] : offsets[i + 1]].astype(np.int64) for i in range(len(offsets) - 1)]
    seg = tokens[f"{name}_seg"].astype(np.int64)
    return rows, seg, tokens[f"{name}_labels"].astype(np.int64), tokens[f"{name}_sources"]


def build(weights: dict[str, np.ndarray], labels: list[str]):
    from transformers import BertConfig, BertForSequenceClassification

    model = BertForSequenceClassification(BertConfig(**bert_config(weights, labels)))
    return model, load_matching(model, weights)


def load_matching(model, weights: dict[str, np.ndarray]) -> list[str]:
    """Load the ``weights`` whose names and shapes ``model`` has; the names left fresh."""
    import torch

    own = model.state_dict()
    state = {
        k: torch.from_numpy(np.ascontiguousarray(v, np.float32))
        for k, v in weights.items()
        if k in own and tuple(own[k].shape) == v.shape
    }
    model.load_state_dict(state, strict=False)
    return sorted(set(own) - set(state))


def predict(model, rows, seg, device: str, batch: int = 512) -> np.ndarray:
    import torch

    order = np.argsort([len(r) for r in rows])
    out = np.zeros((len(rows), 3), np.float32)
    model.eval()
    with torch.inference_mode(), torch.autocast("cuda", torch.bfloat16, enabled=device == "cuda"):
        for i in range(0, len(order), batch):
            idx = order[i : i + batch]
            ids, mask, types = (
                torch.from_numpy(a).to(device) for a in pad([rows[j] for j in idx], seg[idx])
            )
            logits = model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
            out[idx] = torch.softmax(logits.float(), -1).cpu().numpy()
    model.train()
    return out


def train(args: argparse.Namespace) -> dict:
    import torch

    rng, meta, tokens, names = open_bundle(args)
    rows, seg, y, _ = split(tokens, "train")
    soft = tokens["train_teacher"].astype(np.float32) if "train_teacher" in tokens else None
    distill = args.distill if soft is not None else 0.0
    dev_rows, dev_seg, dev_y, dev_src = split(tokens, "dev")
    if args.limit:  # a smoke run: a few rows of each
        rows, seg, y = rows[: args.limit], seg[: args.limit], y[: args.limit]
        dev_rows, dev_seg, dev_y, dev_src = (a[::40] for a in (dev_rows, dev_seg, dev_y, dev_src))
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, fresh = build(dequantize(np.load(args.bundle / f"base-{args.base}.npz")), meta["labels"])
    for n, p in model.named_parameters():
        p.requires_grad = n not in FROZEN
    model.to(device).train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    counts = np.bincount(y, minlength=3)
    weight = torch.tensor(len(y) / (3 * np.maximum(counts, 1)), dtype=torch.float32, device=device)
    opt = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)
    steps = math.ceil(args.epochs * len(rows) / args.batch_size)
    if args.max_steps:
        steps = min(steps, args.max_steps)

    def evaluate(step: int, loss: float) -> float:
        dev = scores(predict(model, dev_rows, dev_seg, device), dev_y, dev_src, names)
        curve.append(
            {
                "step": step,
                "loss": loss,
                "shared_bacc": dev["shared_mean_balanced_accuracy"],
                "shared_auc": dev["shared_mean_roc_auc"],
                "mean_bacc": dev["mean_balanced_accuracy"],
            }
        )
        print(json.dumps(curve[-1]), flush=True)
        return dev["shared_mean_balanced_accuracy"]

    curve: list[dict] = []
    lengths = [len(r) for r in rows]

    def loss_of(b: np.ndarray):
        ids, mask, types = (
            torch.from_numpy(a).to(device) for a in pad([rows[j] for j in b], seg[b])
        )
        with torch.autocast("cuda", torch.bfloat16, enabled=device == "cuda"):
            logits = model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
        logp = torch.log_softmax(logits.float(), -1)
        gold = torch.nn.functional.nll_loss(logp, torch.from_numpy(y[b]).to(device), weight=weight)
        loss = (1 - distill) * gold
        if distill:
            target = torch.from_numpy(soft[b]).to(device)
            loss = loss + distill * -(target * logp).sum(-1).mean()
        return loss

    fitted = fit_steps(
        trainable,
        opt,
        steps,
        lambda: epoch_batches(rng, lengths, args.batch_size),
        loss_of,
        evaluate,
        lambda: whole_state(model),
        eval_every=args.eval_every,
        patience=args.patience,
        max_seconds=args.max_seconds,
    )
    best, step, seen, train_s = fitted.best, fitted.step, fitted.seen, fitted.seconds
    model.load_state_dict(fitted.state)
    save_partial(model, args.out, args.base_ref, FROZEN)
    for f in (args.bundle / "tokenizer").glob("*"):  # the folder loads on its own
        shutil.copy(f, args.out / f.name)
    probs = {
        k: predict(model, *split(tokens, k)[:2], device)
        for k in ("dev", "eval")
        if f"{k}_ids" in tokens
    }
    result = {
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "fresh_weights": fresh,
        "distill": distill,
        "steps": step,
        "train_rows": len(rows),
        "best_shared_bacc": best,
        "curve": curve,
        "train_seconds": train_s,
        "examples_per_second": seen / train_s,
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
    }
    for k, p in probs.items():
        _, _, labels, sources = split(tokens, k)
        result[k] = scores(p, labels, sources, names)
    (args.out / "metrics.json").write_text(json.dumps(result, indent=1), "utf-8")
    np.savez_compressed(
        args.out / "probs.npz", **{k: v.astype(np.float16) for k, v in probs.items()}
    )
    return result


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bundle", type=Path, required=True)
    p.add_argument("--base", required=True, help="the bundle's base-NAME.npz to start from")
    p.add_argument(
        "--base-ref",
        required=True,
        help="what purr_base.json names as the base (the frozen embeddings' source)",
    )
    p.add_argument("--out", type=Path, required=True)
    option(p, "--distill", float, 0.7, "weight of the teacher's term")
    add_number_flags(p, lr=1e-4, epochs=1.0, batch_size=128, eval_every=500, patience=4, seed=1)
    p.add_argument("--max-steps", type=int, default=0)
    add_stop_flags(p)
    r = train(p.parse_args(argv))
    print(
        json.dumps(
            {k: r[k] for k in ("steps", "best_shared_bacc", "train_seconds", "examples_per_second")}
        )
    )
    for k in ("dev", "eval"):
        if k in r:
            print(k, json.dumps({m: round(v, 3) for m, v in r[k].items() if "/n" not in m}))


if __name__ == "__main__":
    main()
