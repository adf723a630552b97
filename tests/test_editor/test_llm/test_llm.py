"""LLM backends: interface helpers, registry, GGUF conversion cache, the transformers backend
(a tiny random Llama built offline and the packaged SmolLM2) and the vllm import error."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from llm_helpers import SMOLLM, smollm

import editor.llm.model_files as model_files
from editor.config import LLMConfig
from editor.llm import LLMBackend, LLMError, apply_stop, available, build, register
from editor.llm.model_files import locate_model
from editor.llm.openai_backend import OpenAIBackend
from editor.llm.transformers_backend import TransformersBackend, format_chat_fallback
from retrieval.settings import Settings

PROMPTS = ["Hi", "The quick brown fox jumps over the lazy dog and", "A b c"]


def test_apply_stop_cuts_at_earliest_stop():
    assert apply_stop("a. b; c", [";", "."]) == "a"
    assert apply_stop("abc", ["", "x"]) == "abc"


def test_registry_refuses_duplicates_and_lists_builtins():
    assert {"transformers", "openai", "vllm"} <= set(available())
    with pytest.raises(ValueError, match="already registered"):
        register("openai", lambda cfg, settings: None)  # type: ignore[arg-type,return-value]


def test_build_transformers_is_lazy(tmp_path):
    llm = build(LLMConfig(backend="transformers", model=SMOLLM), Settings(cache_dir=tmp_path))
    assert isinstance(llm, TransformersBackend) and isinstance(llm, LLMBackend)
    assert not llm.loaded and not list(tmp_path.iterdir())  # nothing converted yet


def test_build_openai_needs_a_url(monkeypatch):
    monkeypatch.delenv("PURR_LLM_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="PURR_LLM_BASE_URL"):
        build(LLMConfig(backend="openai", model="m"), Settings())


def test_build_openai_takes_url_and_key_from_settings():
    settings = Settings(llm_base_url="http://127.0.0.1:9/", llm_api_key="sekrit")
    llm = build(LLMConfig(backend="openai", model="m", max_concurrency=3), settings)
    assert isinstance(llm, OpenAIBackend)
    assert llm.base_url == "http://127.0.0.1:9/v1" and llm.max_concurrency == 3
    assert llm._client.headers["authorization"] == "Bearer sekrit"
    cfg_url = build(LLMConfig(backend="openai", model="m", base_url="http://h:1/v1"), settings)
    assert cfg_url.base_url == "http://h:1/v1"  # the config wins over the environment


def test_build_vllm_without_vllm_says_what_to_install():
    with pytest.raises(ImportError, match=r"pip install 'purr-edit\[vllm\]'"):
        build(LLMConfig(backend="vllm", model=SMOLLM))


def test_generation_arguments_are_validated():
    llm = TransformersBackend(SMOLLM)
    with pytest.raises(ValueError, match="n must be >= 1"):
        llm.complete(["x"], n=0)
    with pytest.raises(ValueError, match="temperature"):
        llm.complete(["x"], temperature=3)
    with pytest.raises(ValueError, match="role"):
        llm.chat([[{"role": "robot", "content": "x"}]])
    assert not llm.loaded  # validation happens before any loading


def test_hub_id_not_in_cache_is_a_clear_error(tmp_path):
    llm = TransformersBackend("nobody/no-such-model-here", cache_dir=tmp_path)
    with pytest.raises(LLMError, match="local Hugging Face cache"):
        llm.load()


def test_locate_model_rejects_packaged_non_lm(tmp_path):
    with pytest.raises(ValueError, match="not a causal LM"):
        locate_model("packaged:bge-small-en", tmp_path)


def test_interrupted_conversion_leaves_nothing_behind(tmp_path, monkeypatch):
    import transformers

    def boom(*args, **kwargs):
        raise KeyboardInterrupt  # the user pressed Ctrl-C mid-conversion

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", boom)
    with pytest.raises(KeyboardInterrupt):
        locate_model(SMOLLM, tmp_path)
    models = tmp_path / "models"
    assert not (models / "smollm2-135m-instruct").exists()
    assert list(models.iterdir()) == []  # no half-written folder to be mistaken for a model


def test_stale_temporary_folders_are_removed(tmp_path):
    target = tmp_path / "models" / "m"
    stale = target.parent / ".m.tmp-abc"
    stale.mkdir(parents=True)
    (stale / "config.json").write_text("{}")
    os.utime(stale, (0, 0))
    model_files._remove_stale_tmp(target)
    assert not stale.exists()


@pytest.fixture(scope="session")
def tiny(tiny_model_dir) -> TransformersBackend:
    backend = TransformersBackend(str(tiny_model_dir), max_new_tokens=8, temperature=0.0)
    backend.load()
    return backend


def test_local_folder_loads_by_path(tiny, tiny_model_dir):
    assert tiny.location is not None
    assert tiny.location.source == "path" and not tiny.location.converted
    assert tiny.location.load_id == str(tiny_model_dir.resolve())


def test_greedy_is_deterministic_and_n_copies(tiny):
    out = tiny.complete(PROMPTS, n=2)
    assert len(out) == len(PROMPTS) and all(len(samples) == 2 for samples in out)
    assert all(a == b and a for a, b in out)
    assert tiny.complete(PROMPTS, n=2) == out


def test_left_padded_batch_equals_one_by_one(tiny):
    batched = tiny.complete(PROMPTS)
    alone = [tiny.complete([p])[0] for p in PROMPTS]
    assert batched == alone


def test_batches_larger_than_batch_size_keep_order(tiny_model_dir, tiny):
    small = TransformersBackend(str(tiny_model_dir), max_new_tokens=8, temperature=0, batch_size=2)
    assert small.complete(PROMPTS) == tiny.complete(PROMPTS)


def test_sampling_gives_distinct_samples(tiny):
    out = tiny.complete(PROMPTS[:2], temperature=1.0, n=3)
    assert [len(s) for s in out] == [3, 3]
    assert all(len(set(samples)) > 1 for samples in out)


def test_stop_strings_cut_the_output(tiny):
    [[full]] = tiny.complete(["Hi"], max_new_tokens=8)
    stop = full[6:9]
    [[cut]] = tiny.complete(["Hi"], max_new_tokens=8, stop=[stop])
    assert cut == full[: full.find(stop)] and stop not in cut


def test_chat_without_template_uses_fallback(tiny):
    assert not tiny.tokenizer.chat_template
    conversation = [{"role": "user", "content": "hello"}]
    [[reply]] = tiny.chat([conversation])
    [[completion]] = tiny.complete([format_chat_fallback(conversation)], stop=["\nUser:"])
    assert reply == completion.strip()


def test_load_is_once_under_concurrency(tiny_model_dir, monkeypatch):
    backend = TransformersBackend(str(tiny_model_dir), max_new_tokens=4, temperature=0)
    calls = []
    real = backend._load

    def counting():
        calls.append(1)
        real()

    monkeypatch.setattr(backend, "_load", counting)
    results: list[list[list[str]]] = []
    threads = [
        threading.Thread(target=lambda: results.append(backend.complete(["Hi"]))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(results) == 4
    assert all(r == results[0] for r in results)


# -- the packaged SmolLM2 (dequantised once into the cache) ------------------------------------


def test_packaged_gguf_is_converted_once_into_the_cache():
    llm = smollm()
    assert llm.location is not None and llm.location.converted
    folder = Path(llm.location.load_id)
    assert folder == Settings().cache_dir / "models" / "smollm2-135m-instruct"
    assert (folder / "config.json").exists() and (folder / "model.safetensors").exists()
    assert (folder / "purr-conversion.json").exists()
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert locate_model(SMOLLM, Settings().cache_dir).load_id == str(folder)
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp  # not converted again
    assert not list(folder.parent.glob(".smollm2-135m-instruct.tmp-*"))


def test_smollm_completes_and_stops():
    llm = smollm()
    [[answer]] = llm.complete(["The capital of France is"], max_new_tokens=6)
    assert "Paris" in answer
    [[count]] = llm.complete(["Count: 1, 2, 3, 4,"], max_new_tokens=8, stop=[","])
    assert count.strip() == "5"


def test_smollm_chat_uses_its_template():
    llm = smollm()
    assert llm.tokenizer.chat_template
    [[reply]] = llm.chat([[{"role": "user", "content": "What is the capital of France?"}]])
    assert "Paris" in reply and "<|im" not in reply


@pytest.mark.slow
def test_gemma_packaged_converts_and_generates():
    """The default LLM: assembled from its part packages and dequantised (about a minute the
    first time), then loaded from the cache."""
    llm = TransformersBackend("packaged:gemma-3-270m", max_new_tokens=8, temperature=0)
    [[answer]] = llm.complete(["The Eiffel Tower is located in the city of"])
    assert llm.location is not None and llm.location.converted
    folder = Path(llm.location.load_id)
    assert (folder / "model.safetensors").exists()
    assert not list(folder.parent.glob(".gemma-3-270m*"))  # assembled GGUF and temp dirs gone
    assert "Paris" in answer
    [[reply]] = llm.chat([[{"role": "user", "content": "Hello"}]])  # no template: fallback
    assert isinstance(reply, str) and "User:" not in reply
