"""The model card (README.md) of a trained editor, from the files ``purr train editor`` wrote
(``train_config.json``, ``metrics.json``) and, when given, dev-set evaluations."""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Any

from retrieval.files import write_text
from training.fit.editor import CLI_FIELDS


def _command(cfg: dict[str, Any]) -> str:
    flags = [
        f"--data {cfg['data']}",
        f"--arch {cfg['arch']}",
        f"--base {cfg['base']}",
        f"--out {cfg['out']}",
    ]
    if not cfg.get("lora", True):
        flags.append("--no-lora")
    if cfg.get("init_adapter"):
        flags.append(f"--init-adapter {cfg['init_adapter']}")
    for key in CLI_FIELDS:
        flags.append(f"--{key.replace('_', '-')} {cfg[key]}")
    return "purr train editor " + " ".join(flags)


def write_editor_card(
    out: Path,
    data_report: dict[str, Any] | None = None,
    evaluations: dict[str, dict[str, Any]] | None = None,
    notes: str = "",
) -> Path:
    """Write ``out/README.md``; ``evaluations`` maps a dev-set name to ``purr eval`` metrics."""
    cfg = json.loads((out / "train_config.json").read_text())
    m = json.loads((out / "metrics.json").read_text())
    files = "\n".join(
        f"- `{p.name}` ({p.stat().st_size / 1e6:.2f} MB)"
        for p in sorted(out.iterdir())
        if p.is_file() and p.name != "README.md"
    )
    curve = ", ".join(f"{c['step']}: {c['dev_loss']}" for c in m["curve"])
    evals = ""
    for name, e in (evaluations or {}).items():
        planted = e.get("planted") or {}
        evals += (
            f"| {name} | {e.get('rows')} | {e.get('attribution_before')} → "
            f"{e.get('attribution_after')} | {e.get('preservation')} | {e.get('f1_ap')} | "
            f"{planted.get('fix_rate', 'n/a')} | {planted.get('false_edit_rate', 'n/a')} | "
            f"{(e.get('latency_ms') or {}).get('p50')} |\n"
        )
    data = json.dumps(data_report, indent=2) if data_report else "(see the data command)"
    text = f"""# purr editor ({cfg["arch"]}, {"LoRA" if cfg.get("lora", True) else "full"})

A denoising editor: reads a claim and up to {cfg["n_evidence"]} evidence snippets and writes the
claim revised to agree with the evidence, changing as little as possible (PURR). Base:
`{cfg["base"]}`. Use: `purr edit "TEXT" --set editor.type={cfg["arch"]} --set editor.adapter=THIS_FOLDER`
(causal: the base is `editor.model`, default the LLM config's model).

## Data
`{cfg["data"]}`: rows of `purr data make` (clean statement, corruption, gold evidence E+, hard
negatives E-), {m["train_rows"]} train / {m["dev_rows"]} dev, split by query.

```
{data}
```

## Recipe
```
{_command(cfg)}
```
Dev loss (teacher-forced cross-entropy of the clean statement) by step: {curve}.
Best dev loss {m["best_dev_loss"]} (perplexity {m["best_dev_perplexity"]}). Trained in
{m["minutes"]} min on `{m["device"]}` ({platform.processor() or platform.machine()}, {platform.system()}).

## Dev-set scores (`purr eval`)
| set | rows | attribution | preservation | F1_AP | fix rate | false edits | p50 ms |
|---|---|---|---|---|---|---|---|
{evals or "| (not evaluated) | | | | | | | |"}

{notes}

## Files
{files}
"""
    card = out / "README.md"
    write_text(card, text)
    return card
