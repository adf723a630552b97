"""Fine-tune the project's attribution model: a 3-way cross-encoder NLI classifier.

Input ``[CLS] premise [SEP] hypothesis [SEP]``; outputs ``supported / contradicted /
not_supported`` (``config.id2label``, so ``editor.nli_hf.HFSequenceClassificationNLI`` and
``attribution.type=purr`` read it without a label map). Base: any BERT-like folder, by default
the packaged ``all-minilm-l6-v2`` (a new classification head is initialised).

Full fine-tuning saves a standard ``save_pretrained`` folder. LoRA (peft) saves the adapter plus
the trained head and pooler (``adapter_model.safetensors``, a few MB) next to ``config.json``
and the tokenizer; ``adapter_config.json`` names the base by its reference (e.g.
``packaged:all-minilm-l6-v2``), and ``editor.nli_hf`` merges it on load. ``merge_lora`` writes
a merged standard folder instead (the word embeddings alone are 47 MB in fp32).

Data: ``training.data.nli`` (the shared NLI sets, windowed to the model's length, split by
document) plus ``training.data.nli_synthetic`` pairs from the packaged Wikipedia summaries. Dev is
scored every ``eval_every`` steps; the primary number is the mean over sources of balanced
accuracy (supported vs rest, P(supported) >= 0.5); the best state is kept (early stopping).
"""

from __future__ import annotations

import json
import logging
import math
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from editor.llm.partial import save_partial
from retrieval.files import atomic_dir, write_text
from training.data.nli import (
    LABELS,
    NLIExample,
    NLISplits,
    build_mixture,
    ids_digest,
    label_counts,
    load_nli_sets,
    read_splits,
    split_source,
    write_splits,
)
from training.fit.attribution_card import write_model_card
from training.fit.attribution_config import TrainAttributionConfig
from training.fit.classifier import (
    batches,
    dev_metrics,
    load_classifier,
    predict_supported,
    resolve_device,
)
from training.fit.resume import RESUME_DIR, load_state, save_state

log = logging.getLogger(__name__)

LORA_MAX_FILE_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True)
class TrainResult:
    """Where the model went, and its numbers (``metrics["dev"]["mean_balanced_accuracy"]``)."""

    out: Path
    best_step: int
    steps: int
    metrics: dict[str, Any]


def prepare_splits(cfg: TrainAttributionConfig) -> NLISplits:
    """Train/dev examples: shared sets split by document, synthetic Wikipedia pairs by article,
    train capped per source (seeded), dev capped per source."""
    if cfg.splits:
        read = read_splits(cfg.splits)
        if not cfg.paraphrases:
            return read
        from training.data.nli_paraphrase import with_paraphrased_train

        return with_paraphrased_train(read, cfg.paraphrases, cfg.seed, cfg.progress)
    sets = load_nli_sets(cfg.data_dir, cfg.sources, max_length=cfg.max_length)
    if cfg.wiki_articles or cfg.multi_facts:
        from retrieval.corpus import read_wiki_summaries

        wiki = list(read_wiki_summaries())  # read once for both generators
    if cfg.wiki_articles:
        from training.data.nli_synthetic import synthetic_pairs

        sets["wiki-synthetic"] = synthetic_pairs(
            wiki,
            max_articles=cfg.wiki_articles,
            seed=cfg.seed,
            role_swaps=cfg.role_swaps,
            same_article_neutrals=cfg.same_article_neutrals,
            progress=cfg.progress,
        )
    if cfg.multi_facts:
        from training.data.nli_multifact import multifact_pairs

        sets["wiki-multifact"] = multifact_pairs(
            wiki, max_articles=cfg.multi_facts, seed=cfg.seed, progress=cfg.progress
        )
    if cfg.edit_pairs:
        from training.data.nli import default_data_dir
        from training.data.nli_contrast import summedits_sentence_pairs

        sets["summedits-sentences"] = summedits_sentence_pairs(
            cfg.data_dir or default_data_dir(), max_length=cfg.max_length
        )
    if cfg.make_rows:
        from training.data.nli_pairs import SOURCE, make_pairs, read_make_rows

        sets[SOURCE] = make_pairs(read_make_rows(cfg.make_rows), max_length=cfg.max_length)
    train: dict[str, list[NLIExample]] = {}
    dev: dict[str, list[NLIExample]] = {}
    for name, rows in sets.items():
        s = split_source(name, rows, cfg.dev_fraction)
        train[name], dev[name] = s.train, s.dev
    if cfg.paraphrases:  # reworded claims, train side only (training.data.nli_paraphrase)
        from training.data.nli_paraphrase import with_paraphrases

        train = with_paraphrases(train, cfg.paraphrases, cfg.seed, cfg.progress)
    splits = NLISplits(
        build_mixture(train, cfg.limit_per_source, cfg.seed),
        build_mixture(dev, cfg.dev_limit_per_source, cfg.seed),
    )
    if cfg.save_splits:
        counts = write_splits(splits, cfg.save_splits)
        log.info("wrote %s examples to %s", counts, cfg.save_splits)
    return splits


def teacher_targets(path: str | None, train: list[NLIExample]) -> dict[int, np.ndarray] | None:
    """Each train row's teacher probabilities (keyed by the row object), or None."""
    if not path:
        return None
    saved = np.load(Path(path).expanduser())
    probs = saved["train"].astype(np.float32)
    if "train_ids_sha256" in saved.files:  # the labels name the rows they belong to
        if str(saved["train_ids_sha256"]) != ids_digest(train):
            raise ValueError(
                f"teacher {path} labelled other train rows than these splits hold (ids differ); "
                "use the --splits file the teacher's bundle was made from"
            )
    if len(probs) != len(train):
        raise ValueError(
            f"teacher {path} scored {len(probs)} train rows but the splits hold {len(train)}; "
            "use the --splits file the teacher's bundle was made from"
        )
    probs = np.clip(probs, 1e-6, 1.0)
    probs /= probs.sum(1, keepdims=True)
    return {id(r): p for r, p in zip(train, probs, strict=True)}


def train_attribution(
    cfg: TrainAttributionConfig, splits: NLISplits | None = None, stop_signal: Any = None
) -> TrainResult:
    """Train, keep the best dev state, save model + tokenizer + config + metrics to ``cfg.out``.

    Every evaluation that improves swaps the best model into ``cfg.out``, and every evaluation
    swaps in ``resume/`` (the state ``cfg.resume`` goes on from), so a run killed at any moment
    leaves the best model so far and loses at most ``eval_every`` steps. ``stop_signal`` (a
    ``GracefulStop``) ends the run after the step in hand; it is then evaluated and saved."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    splits = splits or prepare_splits(cfg)
    if not splits.train:
        raise ValueError("no training examples; check --data-dir, sources and limits")
    device = resolve_device(cfg.device)
    tokenizer, model = load_classifier(cfg.base, cfg)
    model.to(device)
    train = splits.train
    counts = label_counts(train)
    labels = torch.tensor([LABELS.index(r.label) for r in train])
    class_w = torch.tensor([len(train) / (3 * max(1, counts[c])) for c in LABELS])
    steps_per_epoch = math.ceil(len(train) / cfg.batch_size)
    total = cfg.max_steps or max(1, math.ceil(cfg.epochs * steps_per_epoch))
    params = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.AdamW(params, lr=cfg.resolved_lr, weight_decay=cfg.weight_decay)
    sched = get_linear_schedule_with_warmup(optim, int(cfg.warmup_ratio * total), total)
    loss_fn = torch.nn.CrossEntropyLoss(
        weight=class_w.to(device) if cfg.balance == "loss" else None
    )
    soft = teacher_targets(cfg.teacher, train)
    use_bf16 = cfg.bf16 and device.startswith("cuda") and torch.cuda.is_bf16_supported()
    gen = torch.Generator().manual_seed(cfg.seed)

    def epoch_order() -> list[int]:
        if cfg.balance == "sampler":
            w = class_w[labels]
            return torch.multinomial(w, len(train), replacement=True, generator=gen).tolist()
        return torch.randperm(len(train), generator=gen).tolist()

    history: list[dict[str, Any]] = []
    best: dict[str, Any] = {"score": -1.0, "step": 0, "state": None, "dev": {}}
    bad_evals, step, running, t0 = 0, 0, 0.0, time.perf_counter()
    train_time = 0.0
    out = Path(cfg.out)
    config = cfg.model_dump(mode="json")
    order: list[int] | None = None  # the epoch in hand and how far into it
    done_in_epoch = 0
    if cfg.resume:
        loop, tensors = load_state(out, model, optim, sched, config)
        gen.set_state(tensors.pop("order_generator"))
        best_state = {k.removeprefix("best."): v for k, v in tensors.items()}
        history, bad_evals, step, running = (
            loop["history"],
            loop["bad"],
            loop["step"],
            loop["running"],
        )
        train_time, order, done_in_epoch = loop["train_time"], loop["order"], loop["done_in_epoch"]
        best.update(loop["best"], state=best_state or None)
        log.info("resuming at step %d of %d", step, total)

    def keep_state(folder: Path) -> None:
        tensors = {"order_generator": gen.get_state()}
        if best["state"] is not None:
            tensors |= {f"best.{k}": v for k, v in best["state"].items()}
        loop = {
            "history": history,
            "bad": bad_evals,
            "step": step,
            "running": running,
            "train_time": train_time,
            "order": order,
            "done_in_epoch": done_in_epoch,
            "best": {k: best[k] for k in ("score", "step", "dev")},
        }
        save_state(folder, model, optim, sched, loop, config, tensors)

    shown: dict[str, str] = {}  # the latest dev score, shown beside the loss

    def evaluate() -> bool:
        """Score dev, keep the best state; True when patience has run out."""
        nonlocal bad_evals
        if not splits.dev:
            return False
        p = predict_supported(
            model, tokenizer, splits.dev, cfg.max_length, cfg.batch_size * 2, device
        )
        m = dev_metrics(splits.dev, p)
        history.append({"step": step, "train_loss": running, "dev": m})
        score = m["shared_mean_balanced_accuracy"]  # the shared sets, not our synthetic ones
        log.info("step %d: dev mean balanced accuracy (shared sets) %.4f", step, score)
        improved = score > best["score"]
        if improved:
            state = {
                n: t.detach().cpu().clone() for n, t in model.named_parameters() if t.requires_grad
            }
            best.update(score=score, step=step, state=state, dev=m)
            bad_evals = 0
        else:
            bad_evals += 1
        # the best so far (when it improved) and the resume state, swapped in together
        save_model(model, tokenizer, cfg, keep_state, write_model=improved)
        model.train()
        return bad_evals >= cfg.patience

    bar = tqdm(total=total, initial=step, desc="train attribution", disable=not cfg.progress)
    model.train()
    stop = False
    while step < total and not stop:
        if order is None:
            order, done_in_epoch = epoch_order(), 0
        rows = [train[i] for i in order][done_in_epoch * cfg.batch_size :]
        for chunk, enc in batches(tokenizer, rows, cfg.max_length, cfg.batch_size):
            t_step = time.perf_counter()
            y = torch.tensor([LABELS.index(r.label) for r in chunk], device=device)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_bf16):
                logits = model(**enc.to(device)).logits  # (batch, 3)
            loss = loss_fn(logits.float(), y)
            if soft is not None:  # distillation: the teacher's probabilities as soft labels
                target = torch.from_numpy(np.stack([soft[id(r)] for r in chunk])).to(device)
                log_p = torch.log_softmax(logits.float(), -1)
                kl = torch.nn.functional.kl_div(log_p, target, reduction="batchmean")
                loss = (1 - cfg.distill) * loss + cfg.distill * kl
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
            optim.step()
            sched.step()
            optim.zero_grad(set_to_none=True)
            train_time += time.perf_counter() - t_step
            step += 1
            done_in_epoch += 1
            running = loss.item() if step == 1 else 0.98 * running + 0.02 * loss.item()
            bar.update(1)
            bar.set_postfix(loss=f"{running:.3f}", **shown)
            if step % cfg.eval_every == 0 and evaluate():
                stop = True
            if stop_signal is not None and stop_signal.requested:
                log.warning("stopped at step %d by %s", step, stop_signal.name)
                stop = True
            if step >= total or stop:
                break
        else:
            order = None  # the epoch is done: the next one gets a new order
    bar.close()
    if splits.dev and (not history or history[-1]["step"] != step):
        evaluate()
    if best["state"] is not None:
        model.load_state_dict(best["state"], strict=False)
    metrics = {
        "primary": "dev/shared_mean_balanced_accuracy",
        "best_step": best["step"] if best["state"] is not None else step,
        "steps": step,
        "dev": best["dev"],
        "history": history,
        "train_rows": {"total": len(train), "by_label": counts, "by_source": _by_source(train)},
        "dev_rows": {
            "total": len(splits.dev),
            "by_label": label_counts(splits.dev),
            "by_source": _by_source(splits.dev),
        },
        "steps_per_s": step / train_time if train_time else float("nan"),
        "examples_per_s": step * cfg.batch_size / train_time if train_time else float("nan"),
        "wall_s": time.perf_counter() - t0,
        "device": device,
        "bf16": use_bf16,
        "trainable_params": sum(p.numel() for p in params),
        "total_params": sum(p.numel() for p in model.parameters()),
        "interrupted": bool(stop_signal is not None and stop_signal.requested),
    }
    out = save_model(model, tokenizer, cfg)
    resolved = cfg.model_dump(mode="json") | {
        "lr": cfg.resolved_lr,
        "device": device,
        "total_steps": total,
        "labels": list(LABELS),
    }
    write_text(out / "training_config.json", json.dumps(resolved, indent=2))
    write_text(out / "metrics.json", json.dumps(metrics, indent=2, default=float))
    write_model_card(out)
    if not metrics["interrupted"]:  # a finished run has nothing to resume
        shutil.rmtree(out / RESUME_DIR, ignore_errors=True)
    return TrainResult(out, metrics["best_step"], step, metrics)


def _write_model(model: Any, tokenizer: Any, cfg: TrainAttributionConfig, tmp: Path) -> None:
    if cfg.lora and not cfg.merge_lora:
        model.save_pretrained(tmp)  # adapter_config.json + adapter_model.safetensors
        model.get_base_model().config.save_pretrained(tmp)
        adapter_cfg = json.loads((tmp / "adapter_config.json").read_text())
        adapter_cfg["base_model_name_or_path"] = cfg.base  # a reference, resolved on load
        (tmp / "adapter_config.json").write_text(json.dumps(adapter_cfg, indent=2))
    elif cfg.freeze_embeddings:  # only what changed, in half precision, over the base
        frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
        save_partial(model, tmp, cfg.base, frozen)
    elif cfg.lora:  # merged: a copy, so that training can go on with the adapter
        import copy

        copy.deepcopy(model).merge_and_unload().save_pretrained(tmp)
    else:
        model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)


def _by_source(rows: list[NLIExample]) -> dict[str, int]:
    c: dict[str, int] = {}
    for r in rows:
        c[r.source] = c.get(r.source, 0) + 1
    return dict(sorted(c.items()))


def save_model(
    model: Any,
    tokenizer: Any,
    cfg: TrainAttributionConfig,
    resume: Callable[[Path], None] | None = None,
    write_model: bool = True,
) -> Path:
    """Save a folder that ``HFSequenceClassificationNLI`` loads (see the module doc), written
    beside ``cfg.out`` and swapped in whole: a run killed while saving leaves the previous one.
    ``resume(folder)`` writes the resume state into ``resume/`` in the same swap;
    ``write_model=False`` keeps the saved model and renews only that."""
    out = Path(cfg.out)
    with atomic_dir(out, copy_existing=True, skip=(RESUME_DIR,) if resume else ()) as tmp:
        if write_model:
            _write_model(model, tokenizer, cfg, tmp)
        if resume is not None:
            resume(tmp / RESUME_DIR)
    if cfg.lora:
        big = [
            p.name for p in out.iterdir() if p.is_file() and p.stat().st_size > LORA_MAX_FILE_BYTES
        ]
        if big:
            log.warning("LoRA output files over 20 MB: %s (merge_lora=%s)", big, cfg.merge_lora)
    return out
