"""Shared test helpers: the real `purr` command as a subprocess, and tiny randomly initialised
models built from configs for the model-loading paths."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from editor.attribution.nli import ChunkedNLI
from retrieval.assets import packaged_path

# the result contract of DESIGN.md: Pipeline.edit, purr edit --json and POST /v1/edit
CONTRACT_KEYS = frozenset(
    "original revised context queries evidence steps report status warnings timings_ms "
    "citations hops findings".split()
)

TINY_BERT = {
    "vocab_size": 120,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 128,
    "max_position_embeddings": 64,
}
"""The size of a tiny random BERT built from a config (ids 0-119, sequences up to 64)."""


def save_tiny_bert_nli(path: Path, id2label: dict[int, str] | None, seed: int = 0) -> Path:
    """A 2-layer BERT sequence classifier with the given labels (a bare encoder when
    ``id2label`` is None), saved with the packaged MiniLM WordPiece tokenizer."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizerFast

    tokenizer = BertTokenizerFast.from_pretrained(str(packaged_path("ms-marco-minilm-l12")))
    size = dict(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    torch.manual_seed(seed)
    if id2label is None:
        BertModel(BertConfig(**size)).save_pretrained(path)
    else:
        config = BertConfig(
            **size,
            initializer_range=0.3,  # random logits far enough apart to tell labels apart
            num_labels=len(id2label),
            id2label=id2label,
            label2id={v: k for k, v in id2label.items()},
        )
        BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def save_tiny_t5(
    path: Path, words: list[str], seed: int = 0, d_model: int = 32, init: float = 3.0
) -> Path:
    """A tiny random T5 (2 layers, d_model 32) with a lower-casing word-level tokenizer over
    ``words`` (which must start with ``<pad> </s> <unk>``), saved to ``path``."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    assert words[:3] == ["<pad>", "</s>", "<unk>"], "words must start with <pad> </s> <unk>"
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.normalizer = normalizers.Lowercase()
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.post_processor = processors.TemplateProcessing(  # like T5: append </s>
        single="$A </s>", pair="$A $B </s>", special_tokens=[("</s>", 1)]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    config = T5Config(
        vocab_size=len(words),
        d_model=d_model,
        d_ff=2 * d_model,
        d_kv=d_model // 2,
        num_layers=2,
        num_heads=2,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
        initializer_factor=init,
    )
    torch.manual_seed(seed)
    T5ForConditionalGeneration(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def few_steps(max_steps: int, eval_every: int, lr: float) -> dict:
    """The settings of a few-step training run in a test: batches of 4, no warm-up, 30% of the
    rows held out for the dev loss."""
    return dict(
        lr=lr,
        batch_size=4,
        max_steps=max_steps,
        warmup_steps=0,
        eval_every=eval_every,
        dev_share=0.3,
    )


def citation_checker():
    """A ``CitationChecker`` over the default attribution model, loaded."""
    from editor.attribution.base import build
    from editor.citations.check import CitationChecker
    from editor.config import AttributionConfig

    model = build(AttributionConfig())
    model.load()
    return CitationChecker.with_verifier(model)


def run_on_rte(run, out: Path, data_dir: Path, **kwargs) -> dict:
    """An evaluation's ``run(model, out, ...)`` with the shipped verifier over 80 RTE rows of
    the development data, without a progress bar; its report."""
    from editor.attribution.factories import default_purr_path

    return run(
        str(default_purr_path()),
        out,
        data_dir=data_dir,
        sources=["rte"],
        limit=80,
        progress=False,
        **kwargs,
    )


def run_purr(
    *args: str, env: dict[str, str] | None = None, timeout: int = 600
) -> subprocess.CompletedProcess:
    """``purr ARGS...`` as a user runs it (offline), capturing its output."""
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "serve.cli", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )


def run_docs_example(page: str, cwd: Path, timeout: int = 600) -> str:
    """Run the first ``python`` block of a docs page in a new process, as a reader who pastes
    it would (offline, from ``cwd``); its stdout, or an AssertionError with its stderr."""
    text = (Path(__file__).parents[1] / page).read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S)
    assert code, f"{page} has no python block"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(Path(__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", code.group(1)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


ACME_FOUNDED = "Acme Robotics was founded in 2011 by Maria Lopez in Austin, Texas."
ACME_PORTER = "The Porter X2, Acme's flagship robot, can lift 150 kilograms."
"""The company knowledge base the framework integration tests retrieve from."""

MNLI = {0: "entailment", 1: "neutral", 2: "contradiction"}
"""The label names of an MNLI-style three-way model."""


def long_premise(n: int = 30, needle_at: int | None = None, needle: str = "") -> str:
    """``n`` filler sentences, the one at ``needle_at`` replaced by ``needle``."""
    sentences = [f"Filler sentence number {i} says little." for i in range(n)]
    if needle_at is not None:
        sentences[needle_at] = needle
    return " ".join(sentences)


class TruncatingStub(ChunkedNLI):
    """One token per word; like a real model it only sees the first ``max_length`` tokens.

    SUPPORT in view -> supported, CONTRA in view -> contradicted; records every batch.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.batches: list[list[tuple[str, str]]] = []

    def _token_lengths(self, texts):
        return [len(t.split()) for t in texts]

    def _overhead(self):
        return 0

    def _pair_probabilities(self, pairs):
        import numpy as np

        self.batches.append(list(pairs))
        rows = []
        for premise, hypothesis in pairs:
            visible = premise.split()[: self.max_length - len(hypothesis.split())]
            support, contra = "SUPPORT" in visible, "CONTRA" in visible
            number = re.search(r"Record (\d+)", premise)
            if number:  # evidence "Record i ..." supports with P = i / 1000
                p = int(number.group(1)) / 1000
                rows.append((p, 0.0, 1.0 - p))
            elif support and contra:
                rows.append((0.45, 0.45, 0.1))
            elif support:
                rows.append((0.9, 0.0, 0.1))
            elif contra:
                rows.append((0.05, 0.8, 0.15))
            else:
                rows.append((0.1, 0.1, 0.8))
        return np.array(rows)


FILLER = [f"Filler sentence number {i} talks about weather patterns in general." for i in range(40)]
EVIDENCE = "The Eiffel Tower was completed in 1889 for the World Fair."


def nli_rows(source: str, n_docs: int = 12) -> list[dict]:
    """Rows of one NLI source in the shared data's format (labels cycling, documents varying)."""
    rows = []
    labels = ["supported", "contradicted", "not_supported", "partial"]
    for d in range(n_docs):
        for k in range(3):
            label = labels[(d + k) % 4]
            if source == "scifact" and label in ("not_supported", "partial"):
                label = "supported"
            row = {
                "id": f"{source}-{d}-{k}",
                "source": source,
                "premise": f"Document {d} states fact {k}. It was observed in {1900 + d}.",
                "hypothesis": f"Fact {k} holds for document {d}.",
                "label": label,
            }
            if source == "scifact":
                row["doc_id"] = str(1000 + d)
            elif source == "climate-fever":
                row["title"] = f"Article {d}"
            else:  # wice / summedits: whole documents, no id of the document
                row["premise"] = " ".join(FILLER[: 10 + d] + [EVIDENCE] + FILLER[10 + d :])
                row["hypothesis"] = f"The Eiffel Tower was finished in 1889 (claim {d}-{k})."
            rows.append(row)
    return rows


NAME_POOL = {"PERSON": ["Thomas Edison", "Isaac Newton"], "GPE": ["London", "Berlin"]}
"""Replacement names for rule corruptions in tests."""


@contextmanager
def small_filesystem(path: Path, size_kib: int) -> Iterator[Path]:
    """A real tmpfs of ``size_kib`` mounted at ``path`` for the block (a disk that really fills:
    ENOSPC, not a file-size limit); the test skips where mounting is not allowed."""
    import pytest

    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(
            f"cannot mount a small tmpfs here ({(r.stderr or 'mount failed').strip()}); the "
            "full-disk tests need root or CAP_SYS_ADMIN"
        )
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(folder: Path, leave_bytes: int) -> Path:
    """Fill ``folder``'s filesystem with one file until ``leave_bytes`` stay free."""
    import shutil

    filler = folder / "filler"
    free = shutil.disk_usage(folder).free
    with open(filler, "wb") as f:
        f.write(b"\0" * max(free - leave_bytes, 0))
    return filler


def wait_ready(url: str, timeout: float = 120):
    """``/readyz`` of a purr server once it has loaded its models (or says why it cannot)."""
    import time

    import httpx

    deadline = time.monotonic() + timeout
    while True:
        try:  # a server busy loading may answer slowly; that is not an answer yet
            r = httpx.get(f"{url}/readyz", timeout=30)
        except httpx.TimeoutException:
            if time.monotonic() > deadline:
                raise
            continue
        if r.status_code == 200 or "loading" not in r.text or time.monotonic() > deadline:
            return r
        time.sleep(0.2)
