"""Shared fixtures: a real index (real ONNX encoder, real FAISS, real bm25s) over tests/resources."""

from __future__ import annotations

import os

# Torch/OpenMP threads spin-wait by default, which starves the second core when a model and
# ONNX Runtime (or another process) run side by side; passive waiting keeps tests fast.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import shutil  # noqa: E402
from pathlib import Path

import pytest

RESOURCES = Path(__file__).parent / "resources"


LONGEST_FIRST = (
    "tests/test_serve/test_core_install.py",
    "tests/test_serve/test_crash_safety.py",
    "tests/test_serve/test_ray_batch.py",
    "tests/test_editor/test_judge/test_judge.py",
    "tests/test_serve/test_serve.py",
    "tests/test_training/test_fit/test_crash_training.py",
    "tests/test_editor/test_llm/test_llm.py",
    "tests/test_editor/test_first_use.py",
    "tests/test_training/test_data/test_real_errors.py",
    "tests/test_training/test_data/test_editor_data.py",
    "tests/test_serve/test_crash_bench.py",
    "tests/test_serve/test_bench_serve.py",
    "tests/test_editor/test_revision/test_revision.py",
    "tests/test_training/test_fit/test_reranker.py",
)
"""Test modules that take a minute or more, longest first. The default run starts them first
(``--no-loadscope-reorder``: xdist would otherwise order modules by how many tests they hold, and
leave a long module with few tests to the end, with one worker busy and the other idle)."""


def pytest_collection_modifyitems(config, items) -> None:
    """The modules of ``LONGEST_FIRST`` first, in its order; the rest as collected."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto`` (the default run): one worker per core, at most 4, since each worker loads
    its own models (two workers peaked at 7.8 GB together); ``-n 0`` runs them in one process."""
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2))


@pytest.fixture(scope="session")
def resources() -> Path:
    return RESOURCES


@pytest.fixture(scope="session")
def dev_data() -> Path:
    """The development data folder, ``../shared/data`` relative to the repository root, which a
    clone of the repository does not have; the test skips when it is absent.

    Every test that reads the development data takes it from here (``tests/test_dev_data.py``
    fails on a test module that reaches it another way). ``PURR_DEV_DATA``, when set, is the
    folder to use instead: ``PURR_DEV_DATA=/nonexistent python -m pytest`` runs the tests as
    on a clean clone, where every test that needs the data skips.
    """
    given = os.environ.get("PURR_DEV_DATA")
    path = Path(given) if given else Path(__file__).resolve().parents[2] / "shared" / "data"
    if not path.is_dir():
        pytest.skip(f"development data not found at {path}; it is not part of the repository")
    return path


@pytest.fixture(scope="session")
def built_index(tmp_path_factory) -> Path:
    """The folder of a real index (ONNX encoder, FAISS, bm25s) over ``tests/resources``, built
    once per session; open it read-only (``tiny_index``) or copy it (``tiny_index_copy``)."""
    from editor.config import PipelineConfig
    from retrieval.corpus import read_corpus
    from retrieval.index import Index

    out = tmp_path_factory.mktemp("index") / "tiny"
    cfg = PipelineConfig()
    Index.build(
        read_corpus([RESOURCES / "tiny_corpus.jsonl", RESOURCES / "docs"]),
        out,
        cfg.index,
        extra_config=cfg.model_dump(mode="json"),
        progress=False,
    ).close()
    return out


@pytest.fixture(scope="session")
def tiny_index(built_index):
    """A read-only opened index shared by the whole session."""
    from retrieval.index import Index

    return Index.open(built_index)


@pytest.fixture
def tiny_index_copy(built_index, tmp_path) -> Path:
    """A private copy of the index directory, for tests that modify it."""
    dst = tmp_path / "index"
    shutil.copytree(built_index, dst)
    return dst


@pytest.fixture(scope="session")
def purr_cache(tmp_path_factory) -> Path:
    """The purr cache every test (and every ``purr`` subprocess) uses: a new folder for the
    session, or ``PURR_TEST_CACHE_DIR`` to reuse conversions between runs; never the user's own
    ``PURR_CACHE_DIR`` or ``~/.cache/purr``."""
    given = os.environ.get("PURR_TEST_CACHE_DIR")
    if given:
        return Path(given)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return tmp_path_factory.mktemp("purr-cache")
    # parallel workers share one cache, so each model is converted once (the conversion holds a
    # lock; the others wait for it and read the result)
    shared = tmp_path_factory.getbasetemp().parent / "purr-cache"
    shared.mkdir(exist_ok=True)
    return shared


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(purr_cache):
    """Point purr at the session's cache, and keep the hub offline, before any other fixture
    (session fixtures that load models included) reads the settings."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PURR_CACHE_DIR", str(purr_cache))
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        yield


# -- a tiny random Llama with the SmolLM2 tokenizer, saved to disk and loaded by path ---------


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    from llm_helpers import save_tiny_decoder
    from transformers import LlamaForCausalLM

    return save_tiny_decoder(
        tmp_path_factory.mktemp("tiny-llama"),
        LlamaForCausalLM,
        token_ids=("bos_token_id", "eos_token_id", "pad_token_id"),
        chat_template=False,  # exercise the plain "User:/Assistant:" fallback
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        initializer_range=0.5,  # decisive logits: greedy decoding has no near-ties
        tie_word_embeddings=True,
    )
