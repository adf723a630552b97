"""``purr train editor`` for both architectures on tiny models built from a config, whose saved
adapters the editors then load; the ablation probe; the shipped causal editor."""

from __future__ import annotations

import json
import random

import pytest
from helpers import few_steps, save_tiny_t5

from editor.config import load_config
from editor.revision.editors.causal import CausalEditor
from editor.revision.editors.fid import FiDEditor, fid_loss, fid_passages
from editor.types import Evidence
from training.data.corrupt import CORRUPTION_TYPES
from training.fit.editor import EditorTrainConfig, train_editor
from training.fit.editor_card import write_editor_card


def _rows_words(path) -> list[str]:
    import re

    words = {"<pad>", "</s>", "<unk>", "claim", "evidence", ":", "."}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        for t in [r["clean"], r["corrupted"], *r["evidence_pos"], *r["evidence_neg"]]:
            words.update(re.findall(r"\w+|[^\w\s]", t.lower()))
    rest = sorted(words - {"<pad>", "</s>", "<unk>"})
    return ["<pad>", "</s>", "<unk>", *rest]


def _assert_edits(editor) -> None:
    """The editor loads and writes a revision of a sentence its evidence contradicts."""
    ev = Evidence("e", "Paris is in France.", "", "t", None, "", 1.0)
    assert isinstance(editor.edit("Paris is in Spain.", [ev]).text, str)


def test_train_fid_editor_saves_a_loadable_adapter(rows_file, tmp_path):
    out_rows = rows_file[0]
    base = save_tiny_t5(tmp_path / "t5", _rows_words(out_rows), d_model=32, init=1.0)
    cfg = EditorTrainConfig(
        data=str(out_rows),
        arch="fid",
        base=str(base),
        out=str(tmp_path / "fid"),
        **few_steps(max_steps=8, eval_every=4, lr=3e-3),
    )
    report = train_editor(cfg, progress=False)
    assert report["curve"][0]["step"] == 0 and report["curve"][-1]["step"] == 8
    assert report["best_dev_loss"] < report["curve"][0]["dev_loss"]  # it learned something
    saved = tmp_path / "fid"
    assert (saved / "adapter_config.json").is_file() and (saved / "train_config.json").is_file()
    editor = FiDEditor(str(base), adapter=str(saved), max_new_tokens=8)
    _assert_edits(editor)
    # continuing the saved adapter starts where it stopped, not from scratch
    more = cfg.model_copy(update={"init_adapter": str(saved), "out": str(tmp_path / "more")})
    again = train_editor(EditorTrainConfig(**more.model_dump()), progress=False)
    assert again["curve"][0]["dev_loss"] < report["curve"][0]["dev_loss"]
    assert (tmp_path / "more" / "adapter_model.safetensors").is_file()
    for bad, match in [
        ({"lora_r": 4}, "has rank r=16 but lora_r=4; pass --lora-r 16"),
        ({"lora": False}, "drop --no-lora or --init-adapter"),
        ({"init_adapter": str(tmp_path)}, "no adapter_config.json"),
    ]:
        with pytest.raises(ValueError, match=match):
            EditorTrainConfig(**{**more.model_dump(), **bad})


def test_fid_editor_from_scratch_is_a_loadable_t5(rows_file, tmp_path):
    cfg = EditorTrainConfig(
        data=str(rows_file[0]),
        arch="fid",
        base="scratch:t5-tiny",
        lora=False,
        out=str(tmp_path / "scratch"),
        **few_steps(max_steps=6, eval_every=3, lr=3e-3),
    )
    report = train_editor(cfg, progress=False)
    assert report["best_dev_loss"] < report["curve"][0]["dev_loss"]
    saved = tmp_path / "scratch"
    assert (saved / "config.json").is_file() and (saved / "tokenizer.json").is_file()
    assert all(f.stat().st_size < 20_000_000 for f in saved.iterdir())
    editor = FiDEditor(str(saved), max_new_tokens=8)  # a plain T5 folder, like any checkpoint
    tokenizer, _ = editor.load()
    text = "Marie Curie was born in Warsaw in 1867."
    assert tokenizer.decode(tokenizer(text).input_ids, skip_special_tokens=True) == text
    _assert_edits(editor)
    for bad, match in [
        ({"arch": "causal", "lora": False}, "only arch=fid"),
        ({"arch": "fid", "lora": True}, "pass --no-lora"),
    ]:
        with pytest.raises(ValueError, match=match):
            EditorTrainConfig(data="d", base="scratch:t5-tiny", out="o", **bad)


def test_train_causal_editor_saves_a_loadable_adapter(rows_file, tiny_model_dir, tmp_path):
    cfg = EditorTrainConfig(
        data=str(rows_file[0]),
        arch="causal",
        base=str(tiny_model_dir),
        out=str(tmp_path / "causal"),
        **few_steps(max_steps=12, eval_every=3, lr=1e-2),  # 6 steps can end on a dev-loss bump
        max_length=192,
    )
    report = train_editor(cfg, progress=False)
    assert report["best_dev_loss"] < report["curve"][0]["dev_loss"]
    saved = tmp_path / "causal"
    assert json.loads((saved / "train_config.json").read_text())["arch"] == "causal"
    assert not (saved / "tokenizer.json").exists()  # LoRA: the base's tokenizer is used
    card = write_editor_card(saved, evaluations={"planted": {"rows": 3, "f1_ap": 0.9}})
    assert "purr train editor --data" in card.read_text() and "| planted | 3 |" in card.read_text()
    editor = CausalEditor(str(tiny_model_dir), adapter=str(saved), max_new_tokens=6)
    _assert_edits(editor)


def test_train_editor_explains_bad_data(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"clean": "a"}\n')
    cfg = EditorTrainConfig(data=str(bad), arch="fid", base="x", out=str(tmp_path / "o"))
    with pytest.raises(ValueError, match="purr data make"):
        train_editor(cfg, progress=False)


@pytest.mark.integration
def test_ablation_probe_of_a_trained_editor(rows_file, tmp_path):
    from helpers import run_purr

    out_rows = rows_file[0]
    base = save_tiny_t5(tmp_path / "t5", _rows_words(out_rows), d_model=32, init=1.0)
    result = run_purr(
        "eval",
        str(out_rows),
        "--probe",
        "ablation",
        "--editor",
        "fid",
        "--out",
        str(tmp_path / "probe"),
        "--set",
        f"editor.model={base}",
    )
    assert result.returncode == 0, result.stderr
    metrics = json.loads((tmp_path / "probe" / "metrics.json").read_text())
    assert metrics["rows"] > 0 and 0.0 <= metrics["share_above_log100"] <= 1.0
    assert (tmp_path / "probe" / "ablation_probe.png").stat().st_size > 1000
    editor = FiDEditor(str(base))
    [score] = editor.score_targets([("paris is in spain", ["paris is in france"], "paris is")])
    tokenizer, model = editor.load()
    loss = fid_loss(model, tokenizer, [fid_passages("paris is in spain", ["paris is in france"])],
                    ["paris is"])  # fmt: skip
    n_tokens = len(tokenizer("paris is").input_ids)  # with </s>
    assert score == pytest.approx(-float(loss) * n_tokens, rel=1e-4)
    refused = run_purr(
        "eval", str(out_rows), "--probe", "ablation", "--editor", "substitute",
        "--out", str(tmp_path / "n"),
    )  # fmt: skip
    assert refused.returncode == 2 and "--editor fid or causal" in refused.stderr


def test_llm_corruptor_and_summarizer_with_a_real_small_llm():
    from llm_helpers import smollm

    from training.data.corrupt import LLMCorruptor, LLMSummarizer

    llm = smollm()
    clean = "The Eiffel Tower was completed in 1889 for the World's Fair."
    got = [LLMCorruptor(llm).corrupt(clean, [], random.Random(i)) for i in range(4)]
    made = [c for c in got if c is not None]
    assert made, "SmolLM2 produced no usable corruption in 4 tries"
    for c in made:
        assert c.text != clean and "\n" not in c.text
        assert set(c.types) <= set(CORRUPTION_TYPES)
    summary = LLMSummarizer(llm).summarize(
        "when was the eiffel tower completed", ["The Eiffel Tower was completed in 1889."]
    )
    assert summary is None or (5 <= len(summary.split()) <= 60 and "\n" not in summary)


def test_causal_editor_uses_the_shipped_adapter_by_default():
    from editor.revision.editors.base import build as build_editor
    from editor.revision.editors.causal import default_causal_adapter

    cfg = load_config("default", ["editor.type=causal"])
    editor = build_editor(cfg.editor, lambda: None, lambda: None, cfg.llm)
    shipped = default_causal_adapter()
    assert editor.adapter == str(shipped) and editor.max_evidence == 2  # as trained
    assert (shipped / "README.md").is_file() and (shipped / "adapter_config.json").is_file()
    assert all(p.stat().st_size < 20e6 for p in shipped.iterdir())
    other = load_config("default", ["editor.type=causal", "editor.max_evidence=3"])
    assert build_editor(other.editor, lambda: None, lambda: None, other.llm).max_evidence == 3


def test_prompt_lookup_decoding_writes_what_plain_decoding_writes():
    from editor.revision.editors.causal import DEFAULT_BASE, CausalEditor, default_causal_adapter

    adapter = str(default_causal_adapter())
    fast = CausalEditor(DEFAULT_BASE, adapter=adapter, max_evidence=2, prompt_lookup=10)
    tokenizer, model = fast.load()
    plain = CausalEditor(model, tokenizer, max_evidence=2, prompt_lookup=0)  # same weights
    ev = [
        Evidence(
            "e", "The Eiffel Tower was completed in 1889 by Gustave Eiffel.", "", "t", None, "", 1.0
        )
    ]
    items = [("The Eiffel Tower was completed in 1901 by Gustave Eiffel.", ev),
             ("The Eiffel Tower was completed in 1889 by Thomas Edison.", ev)]  # fmt: skip
    got = fast.edit_batch(items)
    assert [r.text for r in got] == [r.text for r in plain.edit_batch(items)]
    assert "1889" in got[0].text
