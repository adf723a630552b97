from pathlib import Path

import pytest

from editor.config import ConfigError, PipelineConfig, apply_overrides, dump_config, load_config
from retrieval.settings import Settings


def test_default_preset_round_trips(tmp_path):
    cfg = load_config("default")
    assert cfg == PipelineConfig()
    path = tmp_path / "c.yaml"
    path.write_text(dump_config(cfg))
    assert load_config(str(path)) == cfg


def test_overrides_are_typed():
    cfg = load_config(
        "default",
        [
            "research.k_documents=3",
            "rerank.enabled=false",
            "search.dense_weight=0.25",
            "index.dense.model=/some/path",
        ],
    )
    assert cfg.research.k_documents == 3 and cfg.rerank.enabled is False
    assert cfg.search.dense_weight == 0.25 and cfg.index.dense.model == "/some/path"


def test_invalid_values_name_the_field():
    with pytest.raises(ConfigError, match="research.k_documents"):
        load_config("default", ["research.k_documents=0"])
    with pytest.raises(ConfigError, match="search.nonsense"):
        load_config("default", ["search.nonsense=1"])
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        apply_overrides({}, ["justakey"])


def test_cross_field_validator_names_both_fields():
    with pytest.raises(ConfigError) as e:
        load_config("default", ["index.chunking.stride=5"])
    assert "chunking.stride" in str(e.value) and "chunking.window" in str(e.value)


def test_broken_yaml_file(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("search: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(str(p))


def test_environment_settings(monkeypatch, tmp_path):
    monkeypatch.setenv("PURR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PURR_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    s = Settings()
    assert s.cache_dir == tmp_path and s.index_dir == tmp_path / "indexes" / "default"
    assert s.llm_base_url == "http://127.0.0.1:9/v1"


def test_every_preset_loads_and_names_its_editor():
    from editor.config import load_config

    expected = {
        "default": ("substitute", "iterative", "nli"),
        "purr-hub": ("fid", "one-pass", "nli"),
        "rarr-openai": ("prompted", "iterative", "llm"),
        "web-searxng": ("substitute", "iterative", "nli"),
        "span": ("substitute", "iterative", "nli"),
    }
    presets = {p.stem for p in (Path(__file__).resolve().parents[3] / "configs").glob("*.yaml")}
    assert presets == set(expected)
    for name, (editor, mode, agreement) in expected.items():
        cfg = load_config(name)
        assert (cfg.editor.type, cfg.revision.mode, cfg.agreement.type) == (editor, mode, agreement)
        assert cfg.judge.type == ("span" if name == "span" else "rules")
    web = load_config("web-searxng")
    assert (web.research.source, web.web.provider, web.web.url) == (
        "both",
        "searxng",
        "http://127.0.0.1:8888",
    )


@pytest.mark.integration
def test_purr_threads_limits_onnx_runtime_and_torch(monkeypatch):
    import subprocess
    import sys

    from retrieval import onnx_runtime
    from retrieval.assets import resolve

    monkeypatch.setenv("PURR_THREADS", "1")
    model = resolve("packaged:ms-marco-minilm-l12").path / "model.onnx"
    onnx_runtime.session.cache_clear()
    try:
        sess = onnx_runtime.session(str(model))
        assert sess.get_session_options().intra_op_num_threads == 1
    finally:
        onnx_runtime.session.cache_clear()
    code = "from serve.cli.common import limit_threads as f; import torch; f(); print(torch.get_num_threads())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
    monkeypatch.setenv("PURR_THREADS", "lots")
    with pytest.raises(ValueError, match="threads"):
        Settings()


def test_a_registered_stage_name_is_a_valid_setting():
    """``type`` settings are checked against the stage's registry, so a registered editor (or
    query generator, attribution model, agreement model, LLM backend) is a valid config value."""
    from editor.revision.editors.base import Revision, available, build, register

    class Shouting:
        name = "shouting"

        def edit(self, text, evidence, context=None):
            return Revision(text.upper(), "shouted")

        def edit_batch(self, items, context=None):
            return [self.edit(t, e, context) for t, e in items]

    with pytest.raises(
        ConfigError, match=r"editor.type 'shouting' is not registered.*register\(\)"
    ):
        load_config("default", ["editor.type=shouting"])
    if "shouting" not in available():
        register("shouting", lambda cfg, **_: Shouting())
    cfg = load_config("default", ["editor.type=shouting", "editor.fallback=shouting"])
    editor = build(cfg.editor, attribution=lambda: None, llm=lambda: None)
    assert editor.edit("paris", []).text == "PARIS"
    with pytest.raises(ConfigError, match="querygen.type 'nonsense' is not registered"):
        load_config("default", ["querygen.type=nonsense"])
