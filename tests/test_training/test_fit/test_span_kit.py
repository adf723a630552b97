"""The span judge's device kit: built from its inputs, it trains where purr's own packages
(pydantic, spaCy) are missing, and reads only its own copies of purr's modules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from training.data.spans.rows import Span, SpanRow, open_text, write_rows
from training.fit.span_kit import build

ROOT = Path(__file__).resolve().parents[3]
TOKENIZER = ROOT / "editor/models/purr-span-judge"

EV = "The Rhine begins in the Swiss canton of Graubünden in the southeastern Swiss Alps."
ROWS = [
    SpanRow("a", "con-same", "contradicted", EV.replace("Graubünden", "Vaud"), EV, "g1",
            (Span(40, 44, "C", 40, 50),)),
    SpanRow("b", "sup-copy", "supported", EV, EV, "g1"),
    SpanRow("c", "nei-clause", "not_supported", EV[:-1] + " in 1900.", EV, "g2",
            (Span(len(EV) - 1, len(EV) + 7, "U"),)),
]  # fmt: skip


def tiny_base(path: Path) -> None:
    """Weights by HF name for a 1-layer, 32-wide BERT over the judge's vocabulary."""
    from transformers import BertConfig, BertForSequenceClassification

    cfg = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=1,
        intermediate_size=64, max_position_embeddings=512, num_labels=3,
    )  # fmt: skip
    model = BertForSequenceClassification(cfg)
    np.savez(path, **{k: v.detach().numpy() for k, v in model.state_dict().items()})


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("inputs")
    tiny_base(src / "base.npz")
    for name in ("real.jsonl.xz", "nli-train.jsonl.xz", "parsed.jsonl.xz"):
        write_rows(ROWS, src / name)
    with open_text(src / "nli-dev.jsonl.xz", "wt") as f:
        for r in ROWS:
            d = {"source": "scifact", "premise": r.evidence, "hypothesis": r.claim}
            f.write(json.dumps({**d, "label": r.label}) + "\n")
    data = {n: src / n for n in ("base.npz", "real.jsonl.xz", "nli-train.jsonl.xz")}
    data |= {
        "parsed.jsonl.xz": src / "parsed.jsonl.xz",
        "nli-dev.jsonl.xz": src / "nli-dev.jsonl.xz",
    }
    data |= {n: TOKENIZER / n for n in ("tokenizer.json", "tokenizer_config.json")}
    out = tmp_path_factory.mktemp("kit") / "kit"
    report = build(out, data)
    assert report["files"] > 20 and (out / "d/base.npz").is_file()
    return out


RUN = """
import sys
for name in ("pydantic", "spacy", "fastapi", "faiss"):
    sys.modules[name] = None  # as on a machine where purr is not installed
import training.data.spans.make
from training.fit.span_train import main
main(sys.argv[1:])
"""
CHECK = """
import json, sys
own = [m.__file__ for n, m in list(sys.modules.items())
       if n.split(".")[0] in ("editor", "training", "retrieval", "serve") and getattr(m, "__file__", None)]
print("MODULES " + json.dumps(own))
"""


def test_the_kit_trains_without_purr_s_packages_from_its_own_modules(kit, tmp_path):
    out = tmp_path / "judge"
    args = ["--train", "d/real.jsonl.xz", "--train", "d/nli-train.jsonl.xz",
            "--dev", "d/real.jsonl.xz", "--nli-dev", "d/nli-dev.jsonl.xz", "--base", "d/base.npz",
            "--tokenizer", "d/tokenizer.json", "--out", str(out), "--max-steps", "2",
            "--batch-size", "2", "--eval-every", "1"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", RUN + CHECK, *args],
        cwd=kit,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("MODULES "))
    files = json.loads(line.removeprefix("MODULES "))
    assert files and all(Path(f).resolve().is_relative_to(kit.resolve()) for f in files)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["steps"] == 2 and metrics["train_pairs"] >= 6
    assert sorted(p.name for p in out.glob("weights-*.safetensors"))
    assert json.loads((out / "config.json").read_text())["architectures"] == ["SpanJudgeModel"]


def test_a_missing_input_is_named_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match="nowhere.npz"):
        build(tmp_path / "kit", {"base.npz": tmp_path / "nowhere.npz"})
    assert not (tmp_path / "kit").exists()


def test_freeze_layers_keeps_the_lowest_layers_as_the_base_has_them(tmp_path):
    """A CPU run from a trained judge: ``--freeze-layers 1`` leaves the embeddings and layer 0
    untrained (written back exactly as ``--base`` has them) and trains layer 1 and the heads."""
    import torch
    from safetensors.numpy import load_file
    from transformers import BertConfig, BertForSequenceClassification

    from editor.attribution.span_model import build_model
    from training.fit.span_train import frozen_names, main

    cfg = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=1,
        intermediate_size=64, max_position_embeddings=512, num_labels=3,
    )  # fmt: skip
    names = [n for n, _ in build_model(cfg.to_dict()).named_parameters()]
    frozen = frozen_names(names, 1)
    assert any(".layer.0." in n for n in frozen) and not any(".layer.1." in n for n in frozen)
    assert not any(n.startswith(("token.", "pointer.")) for n in frozen)
    torch.manual_seed(0)
    base = {
        k: v.detach().numpy() for k, v in BertForSequenceClassification(cfg).state_dict().items()
    }
    np.savez(tmp_path / "base.npz", **base)
    write_rows(ROWS, tmp_path / "rows.jsonl")
    out = tmp_path / "judge"
    main(["--train", str(tmp_path / "rows.jsonl"), "--dev", str(tmp_path / "rows.jsonl"),
          "--base", str(tmp_path / "base.npz"), "--tokenizer", str(TOKENIZER / "tokenizer.json"),
          "--out", str(out), "--max-steps", "2", "--batch-size", "3", "--eval-every", "100",
          "--freeze-layers", "1"])  # fmt: skip
    saved = {}
    for f in sorted(out.glob("weights-*.safetensors")):
        saved.update(load_file(str(f)))
    for name in frozen - {"bert.embeddings.word_embeddings.weight"}:
        assert np.array_equal(saved[name], base[name].astype(saved[name].dtype)), name


def test_more_span_rows_travel_in_d_under_their_own_name(tmp_path):
    from training.fit.span_kit import main

    src = tmp_path / "in"
    src.mkdir()
    tiny_base(src / "base.npz")
    for name in ("real.jsonl.xz", "nli-train.jsonl.xz", "nli-dev.jsonl.xz", "parsed.jsonl.xz"):
        write_rows(ROWS, src / name)
    write_rows(ROWS[:1], src / "llm-train.jsonl")
    common = ["--prepared", str(src), "--parsed", str(src / "parsed.jsonl.xz"),
              "--real", str(src / "real.jsonl.xz"), "--tokenizer", str(TOKENIZER)]  # fmt: skip
    main(["--out", str(tmp_path / "kit"), *common, "--rows", str(src / "llm-train.jsonl")])
    carried = tmp_path / "kit" / "d" / "llm-train.jsonl"
    assert carried.read_bytes() == (src / "llm-train.jsonl").read_bytes()
    with pytest.raises(ValueError, match="distinct names"):
        main(["--out", str(tmp_path / "kit2"), *common, "--rows", str(src / "real.jsonl.xz")])
