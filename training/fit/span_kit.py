"""A folder that trains the span judge where purr is not installed (a GPU machine that has
numpy, torch, transformers, tokenizers, scikit-learn and safetensors only).

It holds the modules ``training.fit.span_train`` imports, under empty package ``__init__``
files (purr's own ``__init__`` modules import pydantic and spaCy), the place table the row
generator reads, and the data a run needs in ``d/``: the parsed documents, the human span
rows, the NLI train and dev rows, the starting weights and the tokenizer.

    python -m training.fit.span_kit --out runs/kit --prepared runs/span-device \\
        --parsed runs/spans/parsed.jsonl.xz --real runs/spans/real.jsonl.xz
    cd runs/kit && python -m training.fit.span_train --parsed d/parsed.jsonl.xz ...

``--rows FILE`` (repeatable) carries more span rows in ``d/`` under their own name, for
``--train d/NAME``: the labelled answers of real LLMs (``training.data.spans.llm_answers``).

About 45 MB with the 34 MB starting weights: it fits a 64 MiB device call beside the
repository's code once the committed weights are left behind.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

MODULES = (
    "training.args",
    "editor.verdicts",
    "editor.attribution.onnx_bert",
    "editor.attribution.span_model",
    "editor.attribution.decoder_model",
    "editor.llm.partial",
    "training.data.spans.arrays",
    "training.data.spans.rows",
    "training.data.spans.make",
    "training.data.spans.families",
    "training.data.spans.questions",
    "training.data.spans.restate",
    "training.data.spans.classes",
    "training.data.spans.context",
    "training.eval.span_metrics",
    "training.fit.decoder_train",
    "training.fit.encoder_train",
    "training.fit.span_train",
    "training.fit.steps",
)
FILES = ("editor/claims/places.json",)


def copy_modules(out: Path, modules: tuple[str, ...], files: tuple[str, ...] = ()) -> None:
    """Copy ``modules`` (and ``files``) of the repository into ``out`` under empty package
    ``__init__`` files (purr's own import pydantic and spaCy)."""
    for rel in [str(Path(*m.split("."))) + ".py" for m in modules] + list(files):
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, target)
        for parent in Path(rel).parents:
            if str(parent) != "." and not (out / parent / "__init__.py").exists():
                (out / parent / "__init__.py").write_text("")


def build(out: Path, data: dict[str, Path]) -> dict:
    """Write the kit to ``out`` (replaced); ``data`` maps a file name in ``d/`` to its source."""
    missing = [str(p) for p in data.values() if not p.is_file()]
    if missing:
        raise ValueError(f"missing kit inputs: {', '.join(missing)}; make them first (module doc)")
    shutil.rmtree(out, ignore_errors=True)
    copy_modules(out, MODULES, FILES)
    (out / "d").mkdir()
    for name, src in data.items():
        shutil.copy(src, out / "d" / name)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return {"out": str(out), "files": sum(1 for p in out.rglob("*") if p.is_file()), "bytes": size}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument(
        "--prepared", type=Path, required=True, help="training.fit.span_prepare's folder"
    )
    p.add_argument("--parsed", type=Path, required=True, help="purr data spans' parsed.jsonl.xz")
    p.add_argument("--real", type=Path, required=True, help="purr data spans' real.jsonl.xz")
    p.add_argument("--tokenizer", type=Path, default=ROOT / "editor/models/purr-verifier-medium")
    p.add_argument(
        "--rows",
        type=Path,
        action="append",
        default=[],
        help="more span rows to train on, copied to d/ under their own name (repeatable): "
        "training.data.spans.llm_answers' train.jsonl, say",
    )
    a = p.parse_args(argv)
    names = [r.name for r in a.rows]
    if len(set(names)) < len(names) or {"parsed.jsonl.xz", "real.jsonl.xz"} & set(names):
        raise ValueError(f"--rows files need distinct names the kit does not use, got {names}")
    data = {
        "parsed.jsonl.xz": a.parsed,
        "real.jsonl.xz": a.real,
        **{n: a.prepared / n for n in ("base.npz", "nli-dev.jsonl.xz", "nli-train.jsonl.xz")},
        **{n: a.tokenizer / n for n in ("tokenizer.json", "tokenizer_config.json")},
        **{r.name: r for r in a.rows},
    }
    print(json.dumps(build(a.out, data)))


if __name__ == "__main__":
    main()
