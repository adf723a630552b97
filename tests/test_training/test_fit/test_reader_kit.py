"""The reader's device kit: built from a reader and the SQuAD-family files, it trains where
purr's own packages (pydantic, spaCy) are missing, reads only its own copies of purr's modules,
and returns a reader checkpoint purr loads."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from editor.attribution.span_model import build_model
from editor.llm.partial import save_partial
from training.fit.reader import load_start
from training.fit.reader_kit import DATA, build

ROOT = Path(__file__).resolve().parents[3]
TOKENIZER = ROOT / "editor/models/purr-reader/tokenizer.json"
PASSAGE = "The Rhine begins in the Swiss canton of Graubünden in the southeastern Swiss Alps."
TINY = {
    "vocab_size": 30522, "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 1,
    "intermediate_size": 64, "max_position_embeddings": 512,
}  # fmt: skip
FROZEN = ["bert.embeddings.word_embeddings.weight"]


def _squad(path: Path) -> None:
    qas = [
        {"question": "Where does the Rhine begin?", "answers": [{"text": "Graubünden",
          "answer_start": PASSAGE.index("Graubünden")}]},
        {"question": "In which mountains does it begin?", "answers": [{"text": "Swiss Alps",
          "answer_start": PASSAGE.index("Swiss Alps")}]},
    ]  # fmt: skip
    article = {"title": "Rhine", "paragraphs": [{"context": PASSAGE, "qas": qas}]}
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump({"data": [article, {**article, "title": "Rhine 2"}]}, f)


def _qed(path: Path) -> None:
    a = PASSAGE.index("Graubünden")
    row = {"question_text": "where does the rhine begin", "paragraph_text": PASSAGE,
           "title_text": "Rhine", "answer_spans": [[a, a + len("Graubünden")]]}  # fmt: skip
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for _ in range(4):
            f.write(json.dumps(row) + "\n")


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> tuple[Path, Path]:
    src = tmp_path_factory.mktemp("inputs")
    raw = src / "data" / "raw"
    for rel in DATA:
        (raw / rel).parent.mkdir(parents=True, exist_ok=True)
        (_qed if rel.startswith("qed/") else _squad)(raw / rel)
    torch.manual_seed(0)
    model = build_model(TINY)
    np.savez(src / "base.npz", **{FROZEN[0]: model.state_dict()[FROZEN[0]].numpy()})
    save_partial(model, src / "start", str(src / "base.npz"), FROZEN)
    (src / "start" / "tokenizer.json").write_bytes(TOKENIZER.read_bytes())
    out = tmp_path_factory.mktemp("kit") / "kit"
    report = build(out, src / "start", src / "data", total_steps=100)
    assert report["bytes"] < 60 << 20 and (out / "run.sh").is_file()
    return out, src


RUN = """
import json, sys
for name in ("pydantic", "spacy", "fastapi", "faiss", "onnxruntime"):
    sys.modules[name] = None  # as on a machine where purr is not installed
from training.fit.reader import main
main(sys.argv[1:])
own = [m.__file__ for n, m in list(sys.modules.items())
       if n.split(".")[0] in ("editor", "training", "retrieval", "serve") and getattr(m, "__file__", None)]
print("MODULES " + json.dumps(own))
"""


def test_the_kit_trains_without_purr_s_packages_and_returns_a_reader(kit, tmp_path):
    folder, src = kit
    carried, _ = load_start(folder / "d" / "start")  # the int8 rows read back close to fp16
    original, _ = load_start(src / "start")
    for (name, a), b in zip(
        original.state_dict().items(), carried.state_dict().values(), strict=True
    ):
        assert torch.allclose(a, b, atol=2e-2 * float(a.abs().max()) + 1e-6), name
    out = tmp_path / "reader"
    args = ["--start", "d/start", "--out", str(out), "--data", "d/data", "--max-steps", "2",
            "--batch-size", "2", "--save-every", "2", "--tune-rows", "4", "--freeze-layers", "0",
            "--bucket", "3", "--swapped", "0.3", "--base-ref", str(src / "base.npz")]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", RUN, *args], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("MODULES "))
    files = json.loads(line.removeprefix("MODULES "))
    assert files and all(Path(f).resolve().is_relative_to(folder.resolve()) for f in files)
    assert json.loads((out / "purr_base.json").read_text())["base"] == str(src / "base.npz")
    assert json.loads((out / "state.json").read_text())["step"] == 2
    trained, _ = load_start(out)  # purr reads the returned checkpoint
    assert any(
        not torch.equal(a, b)
        for a, b in zip(carried.state_dict().values(), trained.state_dict().values(), strict=True)
    )


def test_missing_data_is_named_before_anything_is_written(tmp_path):
    (tmp_path / "raw" / "squad").mkdir(parents=True)
    with pytest.raises(ValueError, match="squad-v1.1-train"):
        build(tmp_path / "kit", tmp_path, tmp_path, 100)
    assert not (tmp_path / "kit").exists()
