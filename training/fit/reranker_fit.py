"""The reranker's distillation loop, on any device, with nothing of purr's but its data rows.

``purr train reranker`` runs it on the CPU; ``training.fit.reranker_kit`` carries it to a GPU
machine where purr is not installed (numpy, torch, transformers, tokenizers and safetensors
only) and runs it there as ``python -m training.fit.reranker_fit --kit d --out OUT``. The
student learns the teacher's raw logits (mean squared error, each query's ``top_k`` windows
weighted ``top_weight``), or with ``loss="listwise"`` each query's ranking as well (the
KL divergence of the student's softmax over the query's windows from the teacher's, at a
``temperature``, plus ``mse_weight`` times the squared error that keeps the logits' scale for
calibration); it is scored on held-out queries by how often its best window is the teacher's
(``agreement``).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
from pathlib import Path
from typing import Any

import numpy as np

from training.args import option
from training.data.rerank_pairs import read_pairs
from training.fit.steps import warmup_linear

log = logging.getLogger(__name__)
FROZEN = "bert.embeddings.word_embeddings.weight"
SHARD_BYTES = 15 * 2**20
"""fp16 shards of the trained weights stay under the device's 16 MiB per returned file"""


def split_by_query(rows: list, dev_share: float, seed: int) -> tuple[list, list]:
    """Rows split by query text, so that no held-out query is trained on."""
    queries = sorted({r.query for r in rows})
    random.Random(seed).shuffle(queries)
    held = set(queries[: max(1, int(len(queries) * dev_share))])
    return [r for r in rows if r.query not in held], [r for r in rows if r.query in held]


def top_weights(rows: list, top_k: int, weight: float) -> np.ndarray:
    """Per-pair loss weights: ``weight`` for each query's ``top_k`` windows by the teacher's
    logit (the ones research keeps), 1 for the rest.

    >>> from types import SimpleNamespace as R
    >>> rows = [R(query="q", logit=0.0), R(query="q", logit=2.0), R(query="p", logit=1.0)]
    >>> top_weights(rows, 1, 4.0).tolist()
    [1.0, 4.0, 4.0]
    """
    out = np.ones(len(rows), np.float32)
    by: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by.setdefault(r.query, []).append(i)
    for ix in by.values():
        for i in sorted(ix, key=lambda i: -rows[i].logit)[:top_k]:
            out[i] = weight
    return out


def held_out_digest(dev_rows: list) -> str:
    """A short digest of the held-out queries: the kit's run and its export here must split
    the same pairs the same way.

    >>> from types import SimpleNamespace as R
    >>> held_out_digest([R(query="b"), R(query="a")]) == held_out_digest([R(query="a")] * 2 + [R(query="b")])
    True
    """
    import hashlib

    return hashlib.sha256("\n".join(sorted({r.query for r in dev_rows})).encode()).hexdigest()[:16]


def query_batches(rows: list, lengths: np.ndarray, size: int, rng: Any) -> list[np.ndarray]:
    """Batches of whole queries (every window of a query in one batch, for the listwise
    loss), about ``size`` pairs each, queries of similar length together.

    >>> from types import SimpleNamespace as R
    >>> rows = [R(query=q) for q in "aabbbc"]
    >>> bs = query_batches(rows, np.array([5, 5, 9, 9, 9, 1]), 3, np.random.default_rng(0))
    >>> sorted(sorted(b.tolist()) for b in bs)
    [[0, 1, 5], [2, 3, 4]]
    """
    by: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by.setdefault(r.query, []).append(i)
    groups = list(by.values())
    order = np.argsort([lengths[g].mean() for g in groups] + rng.uniform(0, 8, len(groups)))
    out: list[np.ndarray] = []
    pending: list[int] = []
    for k in order:
        pending += groups[k]
        if len(pending) >= size:
            out.append(np.array(pending))
            pending = []
    if pending:
        out.append(np.array(pending))
    return out


def distil_loss(out: Any, target: Any, w: Any, queries: list[str], a: Any) -> Any:
    """The batch's loss: weighted squared error to the teacher's logits, and under
    ``a.loss == "listwise"`` the mean over its queries of KL(teacher || student) of their
    softmax over the query's windows at ``a.temperature`` (times T², the usual scale), plus
    ``a.mse_weight`` times the squared error."""
    import torch.nn.functional as F

    mse = (w * (out - target) ** 2).sum() / w.sum()
    if getattr(a, "loss", "mse") != "listwise":
        return mse
    t = float(getattr(a, "temperature", 1.0))
    by: dict[str, list[int]] = {}
    for j, q in enumerate(queries):
        by.setdefault(q, []).append(j)
    kl = sum(
        F.kl_div(
            F.log_softmax(out[g] / t, 0),
            F.log_softmax(target[g] / t, 0),
            log_target=True,
            reduction="sum",
        )
        for g in by.values()
    )
    return kl * t * t / len(by) + float(getattr(a, "mse_weight", 0.1)) * mse


def encode(tok: Any, rows: list) -> list:
    return tok.encode_batch([(r.query, r.passage) for r in rows])


def _batch(encs: list, idx: np.ndarray, device: str = "cpu"):
    import torch

    width = max(len(encs[i].ids) for i in idx)
    ids = np.zeros((len(idx), width), np.int64)
    types, mask = np.zeros_like(ids), np.zeros_like(ids)
    for j, i in enumerate(idx):
        n = len(encs[i].ids)
        ids[j, :n], types[j, :n], mask[j, :n] = encs[i].ids, encs[i].type_ids, 1
    return tuple(torch.from_numpy(a).to(device) for a in (ids, mask, types))


def predict(model: Any, encs: list, batch: int = 64, device: str = "cpu") -> np.ndarray:
    """The model's logit for every encoded pair."""
    import torch

    order = np.argsort([len(e.ids) for e in encs])
    out = np.zeros(len(encs), np.float32)
    model.eval()
    with torch.inference_mode():
        for i in range(0, len(order), batch):
            idx = order[i : i + batch]
            ids, mask, types = _batch(encs, idx, device)
            logits = model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
            out[idx] = logits[:, 0].float().cpu().numpy()
    model.train()
    return out


def agreement(rows: list, teacher: np.ndarray, student: np.ndarray) -> dict[str, float]:
    """How the student ranks each query's windows against the teacher: the share of queries
    whose best window is the teacher's (``top1``, primary), the share of queries with three
    windows or more whose teacher's best is among the student's best two by logit (``in_top2``,
    about what a cascade with ``rerank.prefilter_keep=2`` keeps; it keeps by the fused score),
    Pearson's r of the logits.

    >>> from types import SimpleNamespace as R
    >>> rows = [R(query="q")] * 3 + [R(query="p")] * 3 + [R(query="r")] * 2
    >>> teacher = np.array([1.0, 0.0, 0.5, 0.0, 2.0, 1.0, 1.0, 0.0])
    >>> got = agreement(rows, teacher, np.array([2.0, 1.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0]))
    >>> got["top1"], got["in_top2"], got["queries"], got["queries_3plus"]
    (0.3333333333333333, 0.5, 3.0, 2.0)
    """
    by: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by.setdefault(r.query, []).append(i)
    ixs = [np.array(ix) for ix in by.values()]
    top = [int(np.argmax(teacher[ix]) == np.argmax(student[ix])) for ix in ixs]
    # over queries with 3 windows or more: with fewer, the best is in the best two by count
    two = [int(np.argmax(teacher[ix]) in np.argsort(-student[ix])[:2]) for ix in ixs if len(ix) > 2]
    r = float(np.corrcoef(teacher, student)[0, 1]) if len(rows) > 1 else float("nan")
    return {
        "top1": float(np.mean(top)),
        "in_top2": float(np.mean(two)) if two else float("nan"),
        "pearson": r,
        "queries": float(len(by)),
        "queries_3plus": float(len(two)),
    }


def fit(model: Any, tok: Any, train_rows: list, dev_rows: list, a: argparse.Namespace) -> list:
    """Train ``model`` (its word embeddings frozen) on ``train_rows`` with ``a``'s epochs,
    batch size, lr, top_k, top_weight, eval_every, seed and device; the held-out curve."""
    import torch
    from tqdm.auto import tqdm

    device = getattr(a, "device", "cpu")
    model.to(device)
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    train_enc, dev_enc = encode(tok, train_rows), encode(tok, dev_rows)
    target = torch.tensor([r.logit for r in train_rows], dtype=torch.float32, device=device)
    weight = torch.from_numpy(top_weights(train_rows, a.top_k, a.top_weight)).to(device)
    dev_teacher = np.array([r.logit for r in dev_rows], np.float32)
    rng, step = np.random.default_rng(a.seed), 0
    lengths = np.array([len(e.ids) for e in train_enc])
    plan = []  # each epoch's batches, in the order they run
    for _ in range(a.epochs):
        if getattr(a, "loss", "mse") == "listwise":
            batches = query_batches(train_rows, lengths, a.batch_size, rng)
        else:  # batches of similar length, in random order: little padding
            order = np.argsort(lengths + rng.uniform(0, 8, len(lengths)))
            batches = [order[i : i + a.batch_size] for i in range(0, len(order), a.batch_size)]
        plan += [batches[b] for b in rng.permutation(len(batches))]
    steps = len(plan)
    opt = torch.optim.AdamW((p for p in model.parameters() if p.requires_grad), lr=a.lr)
    sched = warmup_linear(opt, steps)

    def scored(step: int) -> dict:
        row = {
            "step": step,
            **agreement(dev_rows, dev_teacher, predict(model, dev_enc, 64, device)),
        }
        log.info("step %d: %s", step, row)
        return row

    curve = [scored(0)]
    bar = tqdm(total=steps, desc="distil reranker", disable=not getattr(a, "progress", True))
    for idx in plan:
        ids, mask, types = _batch(train_enc, idx, device)
        with torch.autocast("cuda", torch.bfloat16, enabled=device.startswith("cuda")):
            out = model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
        queries = [train_rows[i].query for i in idx]
        loss = distil_loss(out[:, 0].float(), target[idx], weight[idx], queries, a)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step(), sched.step(), opt.zero_grad()
        step += 1
        bar.update(1)
        bar.set_postfix(loss=f"{loss.item():.3f}")
        if step % a.eval_every == 0 or step == steps:
            curve.append(scored(step))
    bar.close()
    model.to("cpu")
    return curve


def save_trained(model: Any, out: Path, meta: dict | None = None) -> list[str]:
    """The weights that trained (all but the frozen word embeddings), fp16, in safetensors
    shards under 16 MiB (shards an earlier run left in ``out`` removed first); their names.
    ``meta`` (the layers, the held-out digest) goes beside them in ``trained.json``, which
    ``--init`` checks."""
    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("trained-*.safetensors"):
        old.unlink()
    if meta is not None:
        (out / "trained.json").write_text(json.dumps(meta, indent=1))
    state = {k: v.detach().half().contiguous() for k, v in model.state_dict().items()}
    shards: list[dict] = [{}]
    size = 0
    for name, t in state.items():
        if name == FROZEN:
            continue
        if shards[-1] and size + t.numel() * 2 > SHARD_BYTES:
            shards.append({})
            size = 0
        shards[-1][name] = t
        size += t.numel() * 2
    if any(sum(t.numel() * 2 for t in sh.values()) > SHARD_BYTES for sh in shards):
        raise ValueError("a trained weight alone exceeds a returned file's 16 MiB")
    names = [f"trained-{i}.safetensors" for i in range(len(shards))]
    for name, shard in zip(names, shards, strict=True):
        save_file(shard, str(out / name))
    return names


def load_trained(model: Any, folder: Path) -> None:
    """``save_trained``'s shards in ``folder`` loaded into ``model`` (fp32)."""
    from safetensors.torch import load_file

    state = {}
    for f in sorted(Path(folder).glob("trained-*.safetensors")):
        state.update({k: v.float() for k, v in load_file(str(f)).items()})
    if not state:
        raise ValueError(f"no trained-*.safetensors in {folder}: run the kit first")
    own = set(model.state_dict())
    missing, extra = own - set(state) - {FROZEN}, set(state) - own
    if missing or extra:
        odd = sorted(missing)[:3] or sorted(extra)[:3]
        raise ValueError(f"{folder} does not match this student ({odd}): check --layers")
    model.load_state_dict(state, strict=False)


def main(argv: list[str] | None = None) -> None:
    """The kit's run: ``--kit`` holds ``config.json``, ``student.npz`` (the cut teacher,
    fp16), ``tokenizer.json``, ``pairs.jsonl.gz`` and ``settings.json`` (the split and the
    recipe); the trained weights and the curve land in ``--out``."""
    import torch
    from tokenizers import Tokenizer
    from transformers import BertConfig, BertForSequenceClassification

    p = argparse.ArgumentParser(description=main.__doc__)
    p.add_argument("--kit", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    option(p, "--epochs", int, None, "default: the kit's settings")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    settings = json.loads((a.kit / "settings.json").read_text())
    run = argparse.Namespace(**{**settings, "device": a.device, "progress": True})
    run.epochs = a.epochs or run.epochs
    torch.manual_seed(run.seed)
    model = BertForSequenceClassification(
        BertConfig(**json.loads((a.kit / "config.json").read_text()))
    )
    with np.load(a.kit / "student.npz") as w:
        model.load_state_dict({k: torch.from_numpy(w[k].astype(np.float32)) for k in w.files})
    tok = Tokenizer.from_file(str(a.kit / "tokenizer.json"))
    tok.enable_truncation(max_length=run.max_length)
    tok.no_padding()
    rows = read_pairs(a.kit / "pairs.jsonl.gz")
    train_rows, dev_rows = split_by_query(rows, run.dev_share, run.seed)
    curve = fit(model, tok, train_rows, dev_rows, run)
    meta = {"layers": run.layers, "held_out": held_out_digest(dev_rows)}
    names = save_trained(model, a.out, meta)
    report = {
        "settings": vars(run),
        "held_out": held_out_digest(dev_rows),
        "curve": curve,
        "shards": names,
        "device": a.device,
    }
    (a.out / "curve.json").write_text(json.dumps(report, indent=1))
    print(json.dumps({"out": str(a.out), "last": curve[-1]}))


if __name__ == "__main__":
    main()
