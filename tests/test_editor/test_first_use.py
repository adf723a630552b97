"""First use on a fresh machine: the shipped passage vectors, the one-time work done before any
stage timeout starts, the cached LoRA merges and the fast causal tokenizer."""

import logging
import random

import numpy as np
import pytest

from editor.config import load_config
from editor.factory import Components, first_use_work
from editor.pipeline import Pipeline
from editor.stages import load_alongside
from retrieval.chunking import chunk
from retrieval.config import DenseConfig
from retrieval.corpus import DEFAULT_CORPUS, read_corpus
from retrieval.encoders import build_encoder
from retrieval.index import passage_text
from retrieval.prebuilt import CachedEncoder, VectorCache, text_key
from retrieval.settings import Settings


@pytest.fixture(scope="module")
def bge():
    return build_encoder(DenseConfig())


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_cached_encoder_takes_stored_vectors_and_embeds_the_rest(bge):
    texts = [
        "The Eiffel Tower is in Paris.",
        "Marie Curie won two Nobel Prizes.",
        "The Nile flows into the Mediterranean Sea.",
        "Mount Everest is the highest mountain above sea level.",
    ]
    fresh = bge.encode_passages(texts)  # (4, 384)
    stored = texts[:2]
    keys = np.array([text_key(t) for t in stored], dtype=np.uint64)
    cache = VectorCache(keys, fresh[:2].astype(np.float16), {"model": "packaged:bge-small-en"})
    enc = CachedEncoder(bge, cache)
    seen = []
    out = enc.encode_passages(texts, progress=seen.append)
    assert (enc.hits, enc.misses) == (2, 2)
    assert sum(seen) == 4  # progress counts stored and embedded passages alike
    cos = _cosine(out, fresh)
    assert cos[:2].min() > 0.9999  # stored: the same vectors, in float16
    # embedded: the int8 model quantises activations per batch, so a batch of 2 differs a little
    assert cos[2:].min() > 0.99
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    # queries never come from the cache
    assert np.allclose(enc.encode_query("Paris"), bge.encode_query("Paris"))


def test_vector_cache_refuses_another_encoder():
    cache = VectorCache.packaged(DenseConfig())
    assert cache is not None and len(cache) > 14_000
    assert VectorCache.packaged(DenseConfig(max_length=128)) is None
    assert VectorCache.packaged(DenseConfig(model="sentence-transformers/all-MiniLM-L6-v2")) is None


def test_shipped_vectors_cover_the_default_corpus_and_match_the_encoder(bge):
    cfg = load_config("default").index
    texts = [
        passage_text(s, cfg)
        for doc in read_corpus([DEFAULT_CORPUS])
        for s in chunk(doc, cfg.chunking)
    ]
    cache = VectorCache.packaged(cfg.dense)
    assert cache is not None
    rows, hit = cache.lookup(texts)
    assert hit.all(), f"{(~hit).sum()} of {len(texts)} default passages have no shipped vector"
    sample = random.Random(0).sample(range(len(texts)), 12)
    fresh = bge.encode_passages([texts[i] for i in sample])
    shipped = cache.vectors[rows[sample]].astype(np.float32)
    assert _cosine(fresh, shipped).min() > 0.99


def test_first_use_builds_the_default_index_before_the_research_timeout(
    tmp_path, monkeypatch, caplog
):
    """The default index is built in ``prepare``, not inside research's timeout: with a
    1-second research timeout, the first edit still researches instead of degrading."""
    monkeypatch.setenv("PURR_CACHE_DIR", str(tmp_path))
    cfg = load_config(
        "default", ["limits.research_timeout_s=1", "editor.type=identity", "editor.fallback=null"]
    )
    components = Components(cfg, Settings(), progress=False)
    pipeline = Pipeline(components)
    (work,) = first_use_work(components)
    assert "default index" in work.what and "prebuilt" in work.estimate
    with caplog.at_level(logging.WARNING):
        result = pipeline.edit("The Eiffel Tower is a lattice tower in Paris.")
    assert result.status == "unchanged", result.warnings
    assert any(e.title == "Eiffel Tower" for e in result.evidence)
    assert (tmp_path / "indexes" / "default" / "config.json").is_file()
    assert any("preparing: building the default index" in r.message for r in caplog.records)
    assert first_use_work(components) == []  # nothing left to do on the next run


def test_first_use_names_the_gguf_conversion(tmp_path, monkeypatch):
    monkeypatch.setenv("PURR_CACHE_DIR", str(tmp_path))
    cfg = load_config("default")
    work = first_use_work(Components(cfg, Settings(), index_path=tmp_path / "idx"))
    assert [w.what.split(" ")[:2] for w in work] == [["converting", "packaged:gemma-3-270m"]]
    no_llm = load_config("default", ["editor.type=substitute", "editor.fallback=null"])
    assert first_use_work(Components(no_llm), research=False) == []


def test_an_edit_leaves_the_gguf_conversion_to_the_causal_lms_first_load(
    tmp_path, monkeypatch, built_index
):
    """A single edit converts nothing it does not use (the causal fallback is rarely reached);
    a service's ``load_models`` still converts before its first request."""
    monkeypatch.setenv("PURR_CACHE_DIR", str(tmp_path))
    components = Components(load_config("default"), Settings(), index_path=built_index)
    pipeline = Pipeline(components)
    result = pipeline.edit("The Eiffel Tower was designed by Thomas Edison.")
    assert result.status == "edited", result.warnings
    (left,) = first_use_work(components)
    assert left.what.startswith("converting packaged:gemma-3-270m")
    assert first_use_work(components, conversions=False) == []
    pipeline.prepare(research=False, conversions=True)
    assert first_use_work(components) == []


# -- cached merges and the inference tokenizer ------------------------------------------------


@pytest.fixture
def tiny_adapter(tiny_model_dir, tmp_path):
    from peft import LoraConfig, TaskType, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir))
    cfg = LoraConfig(task_type=TaskType.CAUSAL_LM, r=4, init_lora_weights=False)
    model = get_peft_model(base, cfg)
    model.save_pretrained(tmp_path / "adapter")
    return tmp_path / "adapter"


def test_raw_tokenizer_gives_the_transformers_ids(tiny_model_dir):
    from transformers import AutoTokenizer

    from editor.llm.fast_tokenizer import RawTokenizer

    ref = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    ref.padding_side = "left"
    raw = RawTokenizer(tiny_model_dir)
    texts = ["Evidence:\n[1] Paris, 1889.\nClaim: Built in 1887.\nRevision:", "Ünïcode — «ok»", "a"]
    for t in texts:
        assert raw(t).input_ids == ref(t).input_ids
        assert (
            raw(t, add_special_tokens=False).input_ids == ref(t, add_special_tokens=False).input_ids
        )
    got, want = (
        raw(texts, return_tensors="pt", padding=True),
        ref(texts, return_tensors="pt", padding=True),
    )
    assert got.input_ids.tolist() == want.input_ids.tolist()
    assert got.attention_mask.tolist() == want.attention_mask.tolist()
    assert raw.batch_decode(got.input_ids, skip_special_tokens=True) == ref.batch_decode(
        want.input_ids, skip_special_tokens=True
    )
    assert (raw.eos_token_id, raw.pad_token_id) == (ref.eos_token_id, ref.pad_token_id)
    with pytest.raises(ValueError, match="padding=True"):
        raw(texts, return_tensors="pt")


def test_causal_editor_reads_the_cached_merge_with_the_same_output(
    tiny_model_dir, tiny_adapter, tmp_path, monkeypatch
):
    from editor.llm.fast_tokenizer import RawTokenizer
    from editor.llm.loading import load_causal
    from editor.research.given import given_evidence
    from editor.revision.editors.causal import CausalEditor

    monkeypatch.setenv("PURR_CACHE_DIR", str(tmp_path / "cache"))
    ev = given_evidence(["the tower was built in 1905"])
    items = [("the tower was built in 1901", ev), ("the bridge was built in 1902", ev)]
    tok, model = load_causal(str(tiny_model_dir), str(tiny_adapter), "cpu")  # merges, saves
    (merged,) = (tmp_path / "cache" / "merged").iterdir()
    assert merged.name.startswith("adapter-") and (merged / "purr-conversion.json").is_file()
    want = [r.text for r in CausalEditor(model, tok, max_new_tokens=8).edit_batch(items)]

    fast = CausalEditor(str(tiny_model_dir), adapter=str(tiny_adapter), max_new_tokens=8)
    assert isinstance(fast.load()[0], RawTokenizer)  # and the model from the saved merge
    assert [r.text for r in fast.edit_batch(items)] == want
    assert len(list((tmp_path / "cache" / "merged").iterdir())) == 1

    # a changed adapter is merged anew, never read from the old folder
    weights = tiny_adapter / "adapter_model.safetensors"
    from safetensors.torch import load_file, save_file

    tensors = {k: v * 2 for k, v in load_file(weights).items()}
    save_file(tensors, weights)
    load_causal(str(tiny_model_dir), str(tiny_adapter), "cpu")
    assert len(list((tmp_path / "cache" / "merged").iterdir())) == 2


def _write_slowly(target: str, log: str) -> bool:
    """A converter's ``write``: records that it ran, then takes a while."""
    import time
    from pathlib import Path

    from editor.llm.model_files import save_into_cache

    def write(tmp: Path) -> dict:
        with open(log, "a") as f:
            f.write("wrote\n")
        time.sleep(0.5)
        (tmp / "config.json").write_text("{}")
        (tmp / "model.safetensors").write_bytes(b"")
        return {"source": "test"}

    return save_into_cache(Path(target), write)


def test_two_processes_converting_one_model_write_it_once(tmp_path):
    from concurrent.futures import ProcessPoolExecutor

    from editor.llm.model_files import is_complete

    target, log = tmp_path / "models" / "m", tmp_path / "log"
    with ProcessPoolExecutor(2) as pool:
        wrote = list(pool.map(_write_slowly, [str(target)] * 2, [str(log)] * 2))
    assert sorted(wrote) == [False, True]  # one wrote it, the other found it written
    assert log.read_text() == "wrote\n"  # the second never started a conversion of its own
    assert is_complete(target) and not list(target.parent.glob(".m.tmp-*"))


def test_load_alongside_runs_every_load_on_its_own_thread_and_raises_an_error():
    import threading

    threads: list[str] = []
    load_alongside(
        lambda: threads.append(threading.current_thread().name),
        None,
        lambda: threads.append(threading.current_thread().name),
    )
    assert len(threads) == 2 and len(set(threads)) == 2

    def broken() -> None:
        raise OSError("model.onnx: truncated file")

    with pytest.raises(OSError, match="truncated"):
        load_alongside(lambda: None, broken)
