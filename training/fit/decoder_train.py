"""Train the decoder verifier (``editor.attribution.decoder_model``) from a bundle, on a GPU.

Reads a bundle made by ``training.fit.decoder_bundle`` (its ``weights.bin`` may come in parts,
``weights.bin.part*``, joined in name order), fine-tunes LoRA adapters on every linear layer and
a linear head in bf16 autocast with class-weighted cross-entropy, scores the dev rows every
``--eval-every`` steps (per source: balanced accuracy of supported vs rest at P >= 0.5 and
ROC-AUC; the best state by the mean over the four shared sets is kept), then writes to ``--out``:

- ``decoder.json``: the base, the token budget and the LoRA settings (the folder is then an
  artefact ``attribution.model`` can name);
- ``adapter.safetensors``: the LoRA weights and the head, fp16 (peft's names under
  ``backbone.``, the head as ``head.weight``/``head.bias``);
- ``probs.npz``: the best state's 3-way probabilities of every train, dev and eval row (the
  teacher's soft labels for distillation);
- ``metrics.json``: the run's settings, its curve, dev and eval-only scores, speed.

``--init-adapter`` goes on from a trained folder (its dev score at step 0 is the one to beat);
``--train-exclude PREFIX`` labels the rows of sources named so (a distillation pool) without
training on them. Needs numpy, torch, transformers, peft, scikit-learn and gguf only: copied
beside ``editor/attribution/decoder_model.py`` (in empty ``editor/`` packages) it runs where
purr is not installed.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from editor.attribution.decoder_model import (
    LORA_TARGETS,
    TEMPLATE,
    adapter_state,
    build_model,
    hf_name,
    is_norm,
    merge_lora,
    pad_batch,
    read_adapter,
)
from training.args import option
from training.fit.steps import (
    add_number_flags,
    add_stop_flags,
    epoch_batches,
    fit_steps,
    open_bundle,
)

SHARED = ("scifact", "climate-fever", "wice", "summedits")


def read_weights(bundle: Path) -> dict[str, np.ndarray]:
    from gguf.constants import GGMLQuantizationType
    from gguf.quants import dequantize

    parts = sorted(bundle.glob("weights.bin.part*")) or [bundle / "weights.bin"]
    blob = b"".join(p.read_bytes() for p in parts)
    out = {}
    for t in json.loads((bundle / "tensors.json").read_text("utf-8")):
        raw = np.frombuffer(blob, np.uint8, t["nbytes"], t["offset"])
        qtype = GGMLQuantizationType(t["type"])
        shape = t["shape"]
        if qtype == GGMLQuantizationType.F32:
            values = raw.view(np.float32)
        else:
            values = dequantize(raw.reshape(int(np.prod(shape[1:])), -1), qtype)
        values = values.reshape(list(reversed(shape))).astype(np.float32)
        out[hf_name(t["name"])] = values - 1.0 if is_norm(t["name"]) else values
    return out


def split(tokens, name: str) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    ids, offsets = tokens[f"{name}_ids"], tokens[f"{name}_offsets"]
    rows = [ids[offsets[i] : offsets[i + 1]].astype(np.int64) for i in range(len(offsets) - 1)]
    return rows, tokens[f"{name}_labels"].astype(np.int64), tokens[f"{name}_sources"]


def scores(probs: np.ndarray, labels: np.ndarray, sources: np.ndarray, names: list[str]) -> dict:
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    out: dict[str, float] = {}
    for s in sorted(set(sources.tolist())):
        m = sources == s
        y = (labels[m] == 0).astype(int)
        p = probs[m, 0]
        out[f"{names[s]}/n"] = int(m.sum())
        out[f"{names[s]}/balanced_accuracy"] = float(balanced_accuracy_score(y, p >= 0.5))
        out[f"{names[s]}/roc_auc"] = (
            float(roc_auc_score(y, p)) if 0 < y.sum() < len(y) else math.nan
        )
    for metric in ("balanced_accuracy", "roc_auc"):
        vals = [v for k, v in out.items() if k.endswith(metric) and not math.isnan(v)]
        shared = [out[f"{s}/{metric}"] for s in SHARED if f"{s}/{metric}" in out]
        out[f"mean_{metric}"] = float(np.mean(vals)) if vals else math.nan
        out[f"shared_mean_{metric}"] = float(np.mean(shared)) if shared else math.nan
    return out


def predict(model, rows: list[np.ndarray], device: str, batch_tokens: int = 32768) -> np.ndarray:
    import torch

    order = np.argsort([len(r) for r in rows])
    out = np.zeros((len(rows), 3), np.float32)
    model.eval()
    i = 0
    with torch.inference_mode(), torch.autocast("cuda", torch.bfloat16, enabled=device == "cuda"):
        while i < len(order):
            width = len(rows[order[min(i + 255, len(order) - 1)]])
            n = max(1, min(256, batch_tokens // max(width, 1)))
            idx = order[i : i + n]
            ids, mask = pad_batch([rows[j] for j in idx])
            logits = model(torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device))
            out[idx] = torch.softmax(logits.float(), -1).cpu().numpy()
            i += n
    model.train()
    return out


def trained_state(model) -> dict:
    """A CPU copy of what training changes: the LoRA weights and the head."""
    return {
        k: v.detach().clone().cpu()
        for k, v in model.state_dict().items()
        if "lora_" in k or k.startswith("head.")
    }


def load_adapter(model, folder: Path) -> None:
    """Load ``folder/adapter.safetensors`` (as written by ``adapter_state``) into ``model``."""
    state = read_adapter(Path(folder) / "adapter.safetensors")
    result = model.load_state_dict(state, strict=False)
    if result.unexpected_keys:
        raise ValueError(f"adapter keys not in the model: {result.unexpected_keys[:5]}")


def train(args: argparse.Namespace) -> dict:
    import torch
    from peft import LoraConfig, inject_adapter_in_model
    from safetensors.torch import save_file

    rng, meta, tokens, names = open_bundle(args)
    train_rows, train_y, train_src = split(tokens, "train")
    train_all = train_rows  # every train row gets the teacher's probabilities at the end
    if args.train_exclude:  # rows of these sources are labelled, not trained on
        skip = [i for i, n in enumerate(names) if n.startswith(args.train_exclude)]
        keep = ~np.isin(train_src, skip)
        train_rows = [r for r, k in zip(train_rows, keep, strict=True) if k]
        train_y = train_y[keep]
    dev_rows, dev_y, dev_src = split(tokens, "dev")
    if args.limit:  # a smoke run: a few rows of each
        train_rows, train_y = train_rows[: args.limit], train_y[: args.limit]
        dev_rows, dev_y, dev_src = dev_rows[::40], dev_y[::40], dev_src[::40]
    device = "cuda" if torch.cuda.is_available() else "cpu"

    model = build_model(meta["config"], meta["kept_rows"])
    missing = model.backbone.load_state_dict(
        {k: torch.from_numpy(v) for k, v in read_weights(args.bundle).items()}, strict=False
    )
    assert not missing.unexpected_keys and not missing.missing_keys, missing
    lora = LoraConfig(
        r=args.rank, lora_alpha=2 * args.rank, lora_dropout=0.05, target_modules=list(LORA_TARGETS)
    )
    inject_adapter_in_model(lora, model.backbone)
    if args.init_adapter:  # go on from a trained adapter (its LoRA weights and head)
        load_adapter(model, args.init_adapter)
    for n, p in model.named_parameters():
        p.requires_grad = "lora_" in n or n.startswith("head.")
    model.to(device)
    trainable = [p for p in model.parameters() if p.requires_grad]
    counts = np.bincount(train_y, minlength=3)
    weight = torch.tensor(
        len(train_y) / (3 * np.maximum(counts, 1)), dtype=torch.float32, device=device
    )
    opt = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)
    steps = args.epochs * math.ceil(len(train_rows) / args.batch_size)
    if args.max_steps:
        steps = min(steps, args.max_steps)
    curve: list[dict] = []

    def evaluate(step: int, loss: float) -> float:
        dev = scores(predict(model, dev_rows, device), dev_y, dev_src, names)
        curve.append(
            {
                "step": step,
                **({} if step == 0 else {"loss": loss}),
                "shared_bacc": dev["shared_mean_balanced_accuracy"],
                "shared_auc": dev["shared_mean_roc_auc"],
                "mean_bacc": dev["mean_balanced_accuracy"],
            }
        )
        print(json.dumps(curve[-1]), flush=True)
        return dev["shared_mean_balanced_accuracy"]

    def loss_of(b: np.ndarray):
        ids, mask = pad_batch([train_rows[j] for j in b])
        with torch.autocast("cuda", torch.bfloat16, enabled=device == "cuda"):
            logits = model(torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device))
        y = torch.from_numpy(train_y[b]).to(device)
        return torch.nn.functional.cross_entropy(logits.float(), y, weight=weight)

    fitted = fit_steps(
        trainable,
        opt,
        steps,
        lambda: epoch_batches(rng, [len(r) for r in train_rows], args.batch_size),
        loss_of,
        evaluate,
        lambda: trained_state(model),
        eval_every=args.eval_every,
        patience=args.patience,
        max_seconds=args.max_seconds,
        first=bool(args.init_adapter),  # a trained adapter's starting state is the one to beat
    )
    best, step, seen, train_s = fitted.best, fitted.step, fitted.seen, fitted.seconds
    model.load_state_dict(fitted.state, strict=False)
    args.out.mkdir(parents=True, exist_ok=True)
    save_file(adapter_state(model), str(args.out / "adapter.safetensors"))
    lora_meta = {"r": args.rank, "alpha": 2 * args.rank, "targets": list(LORA_TARGETS)}
    manifest = {
        "base": meta.get("base", "packaged:gemma-3-270m"),
        "max_length": meta["max_length"],
        "labels": meta["labels"],
        "lora": lora_meta,
        "template": list(TEMPLATE),
    }
    (args.out / "decoder.json").write_text(json.dumps(manifest, indent=2), "utf-8")
    merge_lora(model)  # the same outputs, faster to label with
    # dev and eval first, so a run stopped while labelling the (large) train rows keeps them
    probs = {
        k: predict(model, split(tokens, k)[0][:: 40 if args.limit else 1], device)
        for k in ("dev", "eval")
        if f"{k}_ids" in tokens
    }
    result = {
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "lora": {
            "r": args.rank,
            "alpha": 2 * args.rank,
            "dropout": 0.05,
            "targets": list(LORA_TARGETS),
        },
        "steps": step,
        "train_rows": len(train_rows),
        "best_shared_bacc": best,
        "curve": curve,
        "train_seconds": train_s,
        "examples_per_second": seen / train_s,
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "dev": scores(probs["dev"], *split(tokens, "dev")[1:], names) if not args.limit else {},
    }
    if "eval" in probs:
        _, ev_y, ev_src = split(tokens, "eval")
        step_ = 40 if args.limit else 1
        result["eval"] = scores(probs["eval"], ev_y[::step_], ev_src[::step_], names)
    (args.out / "metrics.json").write_text(json.dumps(result, indent=1), "utf-8")
    print(json.dumps({"saved": str(args.out), "labelling_train_rows": len(train_all)}), flush=True)
    began = time.perf_counter()
    probs["train"] = predict(model, train_all[:: 40 if args.limit else 1], device)
    result["label_seconds"] = time.perf_counter() - began
    (args.out / "metrics.json").write_text(json.dumps(result, indent=1), "utf-8")
    arrays = {k: v.astype(np.float16) for k, v in probs.items()}
    if "train_ids_sha256" in meta and not args.limit:  # the rows these labels belong to
        arrays["train_ids_sha256"] = np.array(meta["train_ids_sha256"])
    np.savez_compressed(args.out / "probs.npz", **arrays)
    return result


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bundle", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    add_number_flags(p, rank=32, lr=3e-4, epochs=2, batch_size=64)
    add_number_flags(p, eval_every=300, patience=4, seed=1)
    p.add_argument(
        "--train-exclude", default="", help="sources starting so are labelled, not trained on"
    )
    option(p, "--max-steps", int, 0, "cap on steps (the schedule's length)")
    option(p, "--init-adapter", Path, None, "a trained folder to go on from")
    add_stop_flags(p)
    r = train(p.parse_args(argv))
    print(
        json.dumps(
            {k: r[k] for k in ("steps", "best_shared_bacc", "train_seconds", "examples_per_second")}
        )
    )
    print(json.dumps({k: round(v, 3) for k, v in r["dev"].items() if "mean" in k}))
    if "eval" in r:
        print(
            json.dumps({k: round(v, 3) for k, v in r["eval"].items() if "/" in k and "/n" not in k})
        )


if __name__ == "__main__":
    main()
