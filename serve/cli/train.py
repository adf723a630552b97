"""CLI hooks for training and evaluating the attribution model (wired into ``serve.cli``).

    purr train attribution --out runs/nli [--data-dir ../shared/data] [--base packaged:...]
        [--lora] [--max-steps N] [--epochs E] [--batch-size B] [--lr LR] [--max-length L]
        [--limit-per-source N] [--wiki-articles N] [--seed S]
    purr eval attribution --model runs/nli --out runs/nli-eval [--data-dir ..] [--limit N]

Handlers take the parsed ``argparse.Namespace``, print a JSON summary and return 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from retrieval.files import GracefulStop
from serve.cli.judge import add_reader_head_parser, add_train_parser
from training.args import check_data_dir, option, positive_int, switch
from training.fit import calibration, reader, reranker
from training.fit.editor import CLI_FIELDS


def register(sub: argparse._SubParsersAction, common) -> None:
    """``purr train attribution|editor|querygen|fusion|calibration``."""
    train = sub.add_parser("train", help="train the project's models")
    tsub = train.add_subparsers(dest="train_command", required=True)
    p = tsub.add_parser("attribution", help="fine-tune the attribution (NLI) model")
    p.add_argument("--out", required=True, help="output folder for the model and its metrics")
    p.add_argument(
        "--data-dir", default=None, help="the shared/data folder (default ../shared/data)"
    )
    p.add_argument("--base", default="packaged:all-minilm-l6-v2", help="base encoder reference")
    p.add_argument(
        "--sources",
        default="shared",
        help="comma-separated NLI sets or aliases (shared, extra); see training.data.nli_sources",
    )
    p.add_argument(
        "--save-splits", default=None, help="write the prepared examples here (.jsonl/.gz/.xz)"
    )
    switch(p, "--prepare-only", "stop after --save-splits (train elsewhere)")
    p.add_argument("--splits", default=None, help="train on examples saved by --save-splits")
    _lora_flags(p, default=False, what="a LoRA adapter + head (small files)")
    switch(
        p,
        "--freeze-embeddings",
        "full fine-tuning with frozen word embeddings; saves only the changed weights (fp16)",
    )
    option(p, "--lora-r", positive_int, 16, "LoRA rank")
    p.add_argument(
        "--lora-targets",
        default="all-linear",
        help="'all-linear' or comma-separated module names (e.g. query,value)",
    )
    switch(p, "--merge-lora", "save the LoRA model merged")
    p.add_argument("--max-steps", type=positive_int, default=None)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--batch-size", type=positive_int, default=16)
    option(p, "--lr", float, None, "default 3e-5 (full) / 5e-4 (LoRA)")
    p.add_argument("--max-length", type=positive_int, default=256)
    p.add_argument("--limit-per-source", type=positive_int, default=None)
    p.add_argument("--dev-limit-per-source", type=positive_int, default=600)
    option(p, "--wiki-articles", int, 3000, "synthetic pairs; 0 = none")
    option(p, "--multi-facts", int, 0, "articles for multi-fact pairs; 0 = none")
    option(
        p,
        "--paraphrases",
        float,
        0.0,
        "share of train rows also given reworded (fronted, passive, inverted; 0-1)",
    )
    option(p, "--role-swaps", float, 0.0, "share of synthetic role-swap pairs (0-1)")
    option(
        p,
        "--same-article-neutrals",
        float,
        0.0,
        "share of synthetic articles that add a same-article, not-stating pair (0-1)",
    )
    switch(p, "--edit-pairs", "add sentence-level contrast pairs from SummEdits' minimal edits")
    p.add_argument(
        "--make-rows",
        action="append",
        default=[],
        help="`purr data make` rows to add as hard pairs (repeatable)",
    )
    p.add_argument(
        "--init-adapter", default=None, help="continue training this saved LoRA adapter folder"
    )
    p.add_argument("--init-from", default=None, help="start from this trained attribution folder")
    p.add_argument("--teacher", default=None, help="distil from these probs.npz soft labels")
    option(p, "--distill", float, 0.5, "weight of the soft labels (0-1)")
    p.add_argument("--balance", choices=["sampler", "loss", "none"], default="sampler")
    p.add_argument("--eval-every", type=positive_int, default=200)
    p.add_argument("--patience", type=positive_int, default=5)
    _device_flag(p)
    p.add_argument("--seed", type=int, default=0)
    _resume_flag(p)
    p.set_defaults(handler=run_train_attribution)
    _add_editor_parser(tsub)
    _add_querygen_parser(tsub)
    _add_fusion_parser(tsub)
    calibration.add_parser(tsub, common)
    reader.add_parser(tsub, common)
    reranker.add_parser(tsub, common)
    add_train_parser(tsub, common)
    add_reader_head_parser(tsub, common)


def _add_fusion_parser(tsub: argparse._SubParsersAction) -> None:
    p = tsub.add_parser(
        "fusion",
        help="fit the verifier's calibrated fusion (NLI + slot checks + coverage) for a model",
    )
    p.add_argument("--model", required=True, help="the trained attribution model folder")
    p.add_argument(
        "--splits", required=True, help="examples saved by purr train attribution --save-splits"
    )
    p.add_argument("--out", default=None, help="where fusion.json goes (default: --model)")
    p.add_argument("--train-per-source", type=positive_int, default=200)
    p.add_argument("--dev-per-source", type=positive_int, default=200)
    p.add_argument("--max-length", type=positive_int, default=128)
    p.add_argument(
        "--fit-on",
        choices=["train", "dev"],
        default="train",
        help="rows the weights are fitted on: the train split, or a quarter of dev (unseen by "
        "the NLI model); the temperature is always fitted on dev, and another half reports",
    )
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(handler=run_train_fusion)


def run_train_fusion(args: argparse.Namespace) -> int:
    from editor.attribution.hf import HFSequenceClassificationNLI
    from editor.attribution.verifier import FusedVerifier
    from training.fit.fusion import fit_fusion

    model = Path(args.model).expanduser()
    if not (model / "config.json").is_file():
        raise ValueError(f"--model {model}: no config.json; pass a trained attribution folder")
    nli = HFSequenceClassificationNLI(str(model), max_length=args.max_length)
    metrics = fit_fusion(
        FusedVerifier(nli, None),
        args.splits,
        args.out or model,
        train_per_source=args.train_per_source,
        dev_per_source=args.dev_per_source,
        fit_on=args.fit_on,
        seed=args.seed,
    )
    rep = {k: metrics["report"][k] for k in ("all", "shared") if k in metrics["report"]}
    json.dump(
        {"out": str(args.out or model), "temperature": metrics["temperature"], "report": rep},
        sys.stdout,
        indent=2,
        default=float,
    )
    sys.stdout.write("\n")
    return 0


def _lora_flags(p: argparse.ArgumentParser, default: bool, what: str) -> None:
    """The same LoRA switch in every trainer: ``--lora``/``--no-lora`` (``--full``, the old
    spelling of ``--no-lora``, still works for one release)."""
    p.add_argument(
        "--lora", action=argparse.BooleanOptionalAction, default=default, help=f"train {what}"
    )
    p.add_argument("--full", action=_DeprecatedFull, nargs=0, help=argparse.SUPPRESS)


class _DeprecatedFull(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(
            "purr: --full is deprecated and goes in the next release; use --no-lora",
            file=sys.stderr,
        )
        namespace.lora = False


def _device_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default="auto", help="auto (cuda when available), cpu or cuda")


def run_train_attribution(args: argparse.Namespace) -> int:
    from training.fit.attribution import TrainAttributionConfig, train_attribution

    check_data_dir(args.data_dir)
    if args.lr is not None and args.lr <= 0:
        raise ValueError(f"--lr must be > 0, got {args.lr}")
    if args.epochs <= 0:
        raise ValueError(f"--epochs must be > 0, got {args.epochs}")
    if args.wiki_articles < 0 or args.multi_facts < 0:
        raise ValueError(
            f"--wiki-articles and --multi-facts must be >= 0, got {args.wiki_articles} and "
            f"{args.multi_facts}"
        )
    if args.prepare_only and not args.save_splits:
        raise ValueError("--prepare-only writes the examples and stops: add --save-splits FILE")
    cfg = TrainAttributionConfig(
        sources=[s.strip() for s in args.sources.split(",") if s.strip()],
        splits=args.splits,
        save_splits=args.save_splits,
        freeze_embeddings=args.freeze_embeddings,
        make_rows=args.make_rows,
        out=args.out,
        base=args.base,
        data_dir=args.data_dir,
        lora=args.lora,
        lora_r=args.lora_r,
        lora_alpha=2 * args.lora_r,
        lora_targets=(
            args.lora_targets
            if args.lora_targets == "all-linear"
            else [t.strip() for t in args.lora_targets.split(",") if t.strip()]
        ),
        merge_lora=args.merge_lora,
        max_steps=args.max_steps,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        max_length=args.max_length,
        limit_per_source=args.limit_per_source,
        dev_limit_per_source=args.dev_limit_per_source,
        wiki_articles=args.wiki_articles,
        multi_facts=args.multi_facts,
        paraphrases=args.paraphrases,
        role_swaps=args.role_swaps,
        same_article_neutrals=args.same_article_neutrals,
        edit_pairs=args.edit_pairs,
        init_adapter=args.init_adapter,
        init_from=args.init_from,
        teacher=args.teacher,
        distill=args.distill,
        balance=args.balance,
        eval_every=args.eval_every,
        patience=args.patience,
        device=args.device,
        seed=args.seed,
        resume=args.resume,
    )
    if args.prepare_only:
        from training.fit.attribution import prepare_splits

        splits = prepare_splits(cfg)
        json.dump({"train": len(splits.train), "dev": len(splits.dev)}, sys.stdout)
        sys.stdout.write("\n")
        return 0
    with GracefulStop() as stop:
        result = train_attribution(cfg, stop_signal=stop)
    summary = {
        "out": str(result.out),
        "steps": result.steps,
        "best_step": result.best_step,
        "dev": result.metrics["dev"],
        "steps_per_s": result.metrics["steps_per_s"],
    }
    json.dump(summary, sys.stdout, indent=2, default=float)
    sys.stdout.write("\n")
    return _stopped(stop, cfg.out)


def _train_config(cls, args: argparse.Namespace, **fixed):
    """A trainer's pydantic config from the parsed flags it has a field for: ``--device auto``
    becomes CUDA when available, else CPU; ``fixed`` values win; errors read as ValueError."""
    import torch
    from pydantic import ValidationError

    device = "cuda" if args.device == "auto" and torch.cuda.is_available() else args.device
    fixed = {"device": "cpu" if device == "auto" else device, "lora": args.lora, **fixed}
    values = {k: v for k, v in vars(args).items() if k in cls.model_fields and k not in fixed}
    try:
        return cls(**values, **fixed)
    except ValidationError as e:
        raise ValueError(str(e)) from None


def _resume_flag(p: argparse.ArgumentParser) -> None:
    switch(
        p,
        "--resume",
        "go on from the last evaluation of a killed or stopped run in --out (same "
        "settings; --max-steps and --patience may change)",
    )


def _add_editor_parser(tsub: argparse._SubParsersAction) -> None:
    from training.fit.editor import EditorTrainConfig

    fields = EditorTrainConfig.model_fields
    p = tsub.add_parser(
        "editor", help="train a denoising editor (FiD or causal) on purr data make rows"
    )
    p.add_argument("--data", required=True, help="JSONL rows of `purr data make`")
    p.add_argument("--arch", choices=["fid", "causal"], required=True)
    p.add_argument(
        "--base",
        default=None,
        help="base model: hub id, local path or packaged:NAME (causal default "
        "packaged:gemma-3-270m); fid: a T5 checkpoint or scratch:t5-mini|t5-small (built and "
        "trained from scratch, with --no-lora)",
    )
    p.add_argument("--out", required=True, help="folder for the adapter (or model) and its config")
    _lora_flags(p, default=True, what="a LoRA adapter (default; --no-lora fine-tunes every weight)")
    p.add_argument(
        "--init-adapter",
        default=None,
        help="continue training this LoRA adapter folder (e.g. editor/models/purr-editor-causal "
        "on your domain's rows) instead of a fresh one",
    )
    _resume_flag(p)
    for name in CLI_FIELDS:
        default = fields[name].default
        p.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default)
    _device_flag(p)
    p.set_defaults(handler=run_train_editor)


def run_train_editor(args: argparse.Namespace) -> int:
    import json

    from training.fit.editor import EditorTrainConfig, train_editor

    base = args.base or ("packaged:gemma-3-270m" if args.arch == "causal" else None)
    if base is None:
        raise ValueError(
            "--arch fid needs --base: a T5 checkpoint (hub id in the local cache or a folder), "
            "or scratch:t5-mini --no-lora to build one (no pretrained T5 ships offline)"
        )
    cfg = _train_config(EditorTrainConfig, args, base=base)
    with GracefulStop() as stop:
        report = train_editor(cfg, stop=stop)
    print(json.dumps(report, indent=2))
    return _stopped(stop, cfg.out)


def _add_querygen_parser(tsub: argparse._SubParsersAction) -> None:
    from training.fit.querygen import QueryGenTrainConfig

    fields = QueryGenTrainConfig.model_fields
    p = tsub.add_parser(
        "querygen", help="distil the prompted query generator (purr data querygen rows)"
    )
    p.add_argument("--data", required=True, help="JSONL rows of `purr data querygen`")
    p.add_argument("--base", default=fields["base"].default, help="causal base model")
    p.add_argument("--out", required=True, help="folder for the adapter and its config")
    _lora_flags(p, default=True, what="a LoRA adapter (default; --no-lora fine-tunes every weight)")
    p.add_argument("--init-adapter", default=None, help="continue training this LoRA adapter")
    _resume_flag(p)
    for name in [f for f in CLI_FIELDS if f in fields]:
        default = fields[name].default
        p.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default)
    _device_flag(p)
    p.set_defaults(handler=run_train_querygen)


def run_train_querygen(args: argparse.Namespace) -> int:
    import json

    from training.fit.querygen import QueryGenTrainConfig, train_querygen

    cfg = _train_config(QueryGenTrainConfig, args)
    with GracefulStop() as stop:
        report = train_querygen(cfg, stop=stop)
    print(json.dumps(report, indent=2))
    return _stopped(stop, cfg.out)


def _stopped(stop: GracefulStop, out: str) -> int:
    """0, or (after SIGTERM / Ctrl-C) how to go on from the best checkpoint, and 128 + signal."""
    if not stop.requested:
        return 0
    print(
        f"purr: interrupted by {stop.name}; {out} holds the best checkpoint so far. Go on "
        "from the last evaluation with the same command plus --resume",
        file=sys.stderr,
    )
    return stop.exit_code
