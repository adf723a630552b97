"""Train the extractive reader (``purr train reader``) from the span judge's network.

The start is the shipped span judge (or a reader folder, to go on training it): its evidence
pointer becomes the answer head. Each question is read as ``[CLS] question [SEP] window [SEP]``
with one window of its passage that holds the answer (a random one where several do), and each
no-answer row (``training.data.reader``) with a random window, [CLS] its target. Loss: the
pointer's start and end cross-entropy. The word embeddings stay frozen (read from the packaged
base) and so do the lowest ``--freeze-layers`` layers, which is what makes a CPU run affordable.
``--bucket N`` reads N batches of rows at once and batches their windows by length (less
padding computed: 1.33x faster a step on the CPU); ``--swapped`` adds entity-swap negatives.

The run is resumable across machines from what it commits: every ``--save-every`` steps the
folder holds the weights (fp16 shards), ``state.json`` (the step, the rows read, the seed, the
schedule) and ``metrics.json`` (the learning curve on a tuning slice). ``--resume`` reads the
folder's own state and goes on with the same data order; AdamW's moments start again (they are
too large to commit), with a short warm-up.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from training.args import option, switch
from training.data.reader import QARow, dev_rows, training_rows

log = logging.getLogger(__name__)
STATE = "state.json"


def features(tokenizer: Any, rows: list[QARow], max_length: int, stride: int, rng: random.Random):
    """For each row, one window's ids, its first segment's length and the target's token
    positions (0, 0 for "no answer"); rows whose answer no window holds whole are left out."""
    from editor.reader.extractive import MAX_QUESTION_TOKENS

    tokenizer.no_padding()
    tokenizer.no_truncation()
    questions = []
    for r in rows:
        enc = tokenizer.encode(r.question, add_special_tokens=False)
        q = r.question
        if len(enc.ids) > MAX_QUESTION_TOKENS:
            q = q[: enc.offsets[MAX_QUESTION_TOKENS - 1][1]]
        questions.append(q)
    tokenizer.enable_truncation(max_length, stride=stride, strategy="only_second")
    encs = tokenizer.encode_batch([(q, r.context) for q, r in zip(questions, rows, strict=True)])
    out = []
    for r, enc in zip(rows, encs, strict=True):
        wins = [enc, *enc.overflowing]
        if not r.answerable:
            w = rng.choice(wins)
            out.append((w.ids, w.sequence_ids.index(1), 0, 0))
            continue
        text, a = rng.choice(r.answers)
        b = a + len(text)
        good = []
        for w in wins:
            ev = [
                (i, s, e)
                for i, ((s, e), q) in enumerate(zip(w.offsets, w.sequence_ids, strict=True))
                if q == 1
            ]
            if not ev or ev[0][1] > a or ev[-1][2] < b:
                continue
            first = next(i for i, s, e in ev if e > a)
            last = max(i for i, s, e in ev if s < b)
            good.append((w.ids, ev[0][0], first, last))
        if good:
            out.append(rng.choice(good))
    return out


def batch_tensors(feats: list) -> tuple[Any, ...]:
    import torch

    from editor.attribution.span_model import pad

    ids, mask, types = pad([np.array(f[0]) for f in feats], [f[1] for f in feats])
    start = np.array([f[2] for f in feats])
    end = np.array([f[3] for f in feats])
    return tuple(torch.from_numpy(a) for a in (ids, mask, types, start, end))


def tune_score(model: Any, tokenizer: Any, rows: list[QARow]) -> dict[str, float]:
    """F1 on the slice's answerable rows and accuracy on its no-answer rows."""
    from editor.reader.extractive import ExtractiveReader
    from training.eval.reader import score_readings

    model.eval()
    device = str(next(model.parameters()).device)
    reader = ExtractiveReader(network=model, tokenizer=tokenizer, quantize="none", device=device)
    readings = reader.read_batch([(r.question, r.context) for r in rows])
    model.train()
    return score_readings(rows, readings)


def plot_curve(curve: list[dict], path: Path) -> None:
    """The learning curve (tuning F1 and train loss by step) as a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [p["step"] for p in curve]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(steps, [p["f1"] for p in curve], marker="o", label="tuning F1")
    ax.set_xlabel("step (batch 16)")
    ax.set_ylabel("F1")
    loss = ax.twinx()
    loss.plot(steps, [p["loss"] for p in curve], color="tab:red", alpha=0.6, label="train loss")
    loss.set_ylabel("loss")
    handles = ax.get_legend_handles_labels()[0] + loss.get_legend_handles_labels()[0]
    ax.legend(handles, [h.get_label() for h in handles], loc="center right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def load_start(path: Path) -> tuple[Any, Any]:
    """The torch span network in ``path`` (a span judge or reader folder) and its tokenizer,
    read with ``bert_weights`` (numpy and safetensors: it also runs in the device kit)."""
    import torch
    from tokenizers import Tokenizer

    from editor.attribution.bert_weights import folder_weights
    from editor.attribution.span_model import build_model

    config, weights = folder_weights(path)
    model = build_model({k: v for k, v in config.items() if k != "architectures"})
    missing, unexpected = model.load_state_dict(
        {k: torch.from_numpy(v) for k, v in weights.items()}, strict=False
    )
    if [k for k in missing if "position_ids" not in k] or unexpected:
        raise ValueError(f"{path} does not fit the span network: {missing[:4]} {unexpected[:4]}")
    return model.eval(), Tokenizer.from_file(str(Path(path) / "tokenizer.json"))


def train(args: argparse.Namespace) -> dict:
    import torch

    from editor.llm.partial import MANIFEST, save_partial

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads or torch.get_num_threads())
    out: Path = args.out
    start_from = out if args.resume else Path(args.start)
    state = (
        json.loads((out / STATE).read_text())
        if args.resume
        else {"step": 0, "rows_read": 0, "seed": args.seed, "curve": [], "settings": {}}
    )
    model, tokenizer = load_start(start_from)
    model.to(args.device)
    manifest = json.loads((start_from / MANIFEST).read_text())
    frozen = {"bert.embeddings.word_embeddings.weight"}
    for name, p in model.named_parameters():
        layer = name.split(".")[3] if name.startswith("bert.encoder.layer.") else None
        p.requires_grad = not (
            name.startswith("bert.embeddings")
            or (layer is not None and int(layer) < args.freeze_layers)
            or name.startswith(("classifier.", "token.", "bert.pooler."))
        )
    params = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    total = args.total_steps
    warm = args.warmup

    def lr_at(step: int, since: int) -> float:
        ramp = min(1.0, (step - since + 1) / warm)
        return args.lr * ramp * max(0.1, 1 - step / total)

    rows = training_rows(args.data, negatives=args.negatives, seed=state["seed"], swap=args.swapped)
    tune = list(dev_rows(args.data, n=args.tune_rows))
    log.info("%d training rows, %d tuning rows; from step %d", len(rows), len(tune), state["step"])
    rng = random.Random(state["seed"] + state["step"])
    model.train()
    since, step, pos = state["step"], state["step"], state["rows_read"]
    losses: list[float] = []
    t0 = time.time()
    from tqdm.auto import tqdm

    bar = tqdm(total=args.max_steps, desc="reader", unit="step")

    def save() -> None:
        tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        model.config.architectures = ["SpanJudgeModel"]
        model.config.purr_reader = True
        base = args.base_ref or manifest["base"]
        save_partial(model, tmp, base, sorted(frozen))  # fp16 shards, on any device
        shutil.copy(start_from / "tokenizer.json", tmp / "tokenizer.json")
        for name in ("README.md", "metrics.json"):
            if (out / name).is_file():
                shutil.copy(out / name, tmp / name)
        state.update(
            step=step,
            rows_read=pos,
            settings={
                k: str(v) if isinstance(v, Path) else v
                for k, v in vars(args).items()
                if isinstance(v, (str, int, float, bool, Path, type(None)))  # not the handler
            },
        )
        (tmp / STATE).write_text(json.dumps(state, indent=1) + "\n")
        if state["curve"]:
            try:
                plot_curve(state["curve"], tmp / "curve.png")
            except ImportError:  # no matplotlib (the device kit): the curve is in state.json
                pass
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)

    queue: list[list] = []  # batches of windows read from the last pool of rows
    while step - since < args.max_steps and step < total:
        if not queue:
            chunk = [rows[(pos + i) % len(rows)] for i in range(args.batch_size * args.bucket)]
            pos += len(chunk)
            feats = features(tokenizer, chunk, args.max_length, args.stride, rng)
            if args.bucket > 1:  # windows of like length together: less padding computed
                feats.sort(key=lambda f: len(f[0]))
            queue = [feats[i : i + args.batch_size] for i in range(0, len(feats), args.batch_size)]
            if args.bucket > 1:
                rng.shuffle(queue)
        feats = queue.pop(0) if queue else []
        if not feats:
            continue
        ids, mask, types, start, end = (t.to(args.device) for t in batch_tensors(feats))
        with torch.autocast(args.device.split(":")[0], torch.bfloat16, enabled=args.bf16):
            _, _, s_logits, e_logits = model(ids, mask, types)
        s_logits, e_logits = s_logits.float(), e_logits.float()
        ce = torch.nn.functional.cross_entropy
        loss = (ce(s_logits, start) + ce(e_logits, end)) / 2
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        for g in optim.param_groups:
            g["lr"] = lr_at(step, since)
        optim.step()
        optim.zero_grad()
        step += 1
        losses.append(float(loss))
        bar.update(1)
        bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}")
        if step % args.save_every == 0 or step - since >= args.max_steps or step >= total:
            score = tune_score(model, tokenizer, tune)
            point = {
                "step": step,
                "rows": pos,
                "examples": step * args.batch_size,
                "loss": float(np.mean(losses[-args.save_every :])),
                "seconds": round(time.time() - t0, 1),
                **score,
            }
            state["curve"].append(point)
            log.info("step %d: %s", step, point)
            save()
    bar.close()
    return state["curve"][-1] if state["curve"] else {}


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=Path("editor/models/purr-reader"))
    p.add_argument(
        "--start",
        default="editor/models/purr-span-judge",
        help="the span network to start from (ignored with --resume)",
    )
    switch(p, "--resume", "go on from --out's own state")
    option(p, "--data", Path, None, "the shared data folder")
    option(p, "--max-steps", int, 1000, "steps in this run")
    option(p, "--total-steps", int, 12000, "the schedule's length")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=6e-5)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--max-length", type=int, default=176)
    p.add_argument("--stride", type=int, default=48)
    p.add_argument("--freeze-layers", type=int, default=4)
    p.add_argument("--negatives", type=float, default=0.5)
    option(
        p,
        "--swapped",
        float,
        0.0,
        "share of the no-answer rows made by swapping a name or number of the question "
        "for another of its passage (hard negatives)",
    )
    option(
        p,
        "--bucket",
        int,
        1,
        "read this many batches of rows at once and batch their windows by length "
        "(1: no bucketing, the recorded order)",
    )
    p.add_argument("--save-every", type=int, default=250)
    p.add_argument("--tune-rows", type=int, default=200)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--device", default="cpu", help="torch device: cpu, cuda")
    switch(p, "--bf16", "bf16 autocast (a GPU)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--base-ref",
        default=None,
        help="what the saved purr_base.json names as the base (default: the start's; the "
        "device kit's run names the packaged one it came from)",
    )


def add_parser(tsub: argparse._SubParsersAction, common: Any) -> None:
    """``purr train reader``."""
    p = tsub.add_parser(
        "reader",
        help="train the extractive reader (from the span judge, or go on with --resume)",
        description=__doc__.split("\n\n")[1],
    )
    add_args(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import sys

    print(json.dumps(train(args)), file=sys.stdout)
    return 0


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_args(p)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    print(json.dumps(train(args)))


if __name__ == "__main__":
    main()
