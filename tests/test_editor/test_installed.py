"""What an install without an extra leaves out: the fallback editor on local LLM weights is
skipped, with a warning that names the command, and never a crash."""

from __future__ import annotations

import pytest

import editor.installed as installed
from editor.config import load_config
from editor.factory import rules_editors


@pytest.fixture
def no_torch(monkeypatch):
    monkeypatch.setattr(installed, "missing", lambda extra, modules=(): list(modules))


def test_without_llm_the_causal_fallback_is_skipped_with_the_install_command(no_torch):
    cfg = load_config("default")
    assert cfg.editor.fallback == "causal"
    (warning,) = installed.skipped(cfg)
    assert "causal fallback editor is skipped" in warning and "'purr-edit[llm]'" in warning
    names = [e.name for e in rules_editors(cfg, lambda: None, lambda: None)]
    assert "causal" not in names and names  # the other editors stay


def test_nothing_is_skipped_without_a_local_llm_fallback(no_torch):
    assert installed.skipped(load_config("default", ["editor.fallback=null"])) == []
    remote = ["editor.fallback=prompted", "llm.backend=openai"]
    assert installed.skipped(load_config("default", remote)) == []
    local = ["editor.fallback=prompted", "llm.backend=transformers"]
    assert installed.skipped(load_config("default", local))


def test_with_every_extra_nothing_is_skipped():
    assert installed.skipped(load_config("default")) == []  # the dev install has [llm]
