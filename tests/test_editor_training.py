"""PURR's training pipeline on CPU: rule corruptions, ``purr data make`` rows from a real index
with the shipped attribution model as the filter (deterministic, resumable), and ``purr train
editor`` for both architectures on tiny models built from a config, whose saved adapters the
editors then load."""

from __future__ import annotations

import json
import random

import pytest
from helpers import save_tiny_t5

from editor.attribution.base import build as build_attribution
from editor.config import AttributionConfig, load_config
from editor.factory import Components
from editor.revision.editors.causal import CausalEditor
from editor.revision.editors.fid import FiDEditor, fid_loss, fid_passages
from editor.text.nlp import get_nlp
from editor.types import Evidence
from retrieval.corpus import read_corpus
from training.corrupt import CORRUPTION_TYPES, RuleCorruptor, negate
from training.editor_card import write_editor_card
from training.editor_data import EditorDataMaker, corpus_seeds, make_file, read_seeds
from training.train_editor import EditorTrainConfig, train_editor

POOL = {"PERSON": ["Thomas Edison", "Isaac Newton"], "GPE": ["London", "Berlin"]}


@pytest.fixture(scope="module")
def rows_file(_built_index, resources, tmp_path_factory):
    cfg = load_config("default")
    comp = Components(cfg, index_path=_built_index, progress=False)
    maker = EditorDataMaker(
        comp.researcher,
        build_attribution(AttributionConfig()),
        RuleCorruptor(get_nlp(), POOL),
        relevance=0.3,
    )
    docs = list(read_corpus([resources / "tiny_corpus.jsonl"]))
    out = tmp_path_factory.mktemp("data") / "rows.jsonl"
    report = make_file(maker, corpus_seeds(docs, per_doc=3), out, n=12, progress=False)
    return out, report, maker, docs


def test_rule_corruptions_change_one_fact():
    nlp = get_nlp()
    corruptor = RuleCorruptor(nlp, POOL, two_errors=0.0)
    clean = "Marie Curie was born in Warsaw in 1867."
    kinds = set()
    for i in range(30):
        c = corruptor.corrupt(clean, ["Isaac Newton lived in London."], random.Random(i))
        assert c is not None and c.text != clean and len(c.types) == 1
        kinds.update(c.types)
    assert kinds <= set(CORRUPTION_TYPES) and {"date", "entity"} <= kinds
    assert negate("The tower is 330 metres tall.") == "The tower is not 330 metres tall."


def test_data_make_rows_are_filtered_deterministic_and_resumable(rows_file):
    out, report, maker, docs = rows_file
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert report["rows"] == len(rows) > 0
    for r in rows:
        assert r["clean"] != r["corrupted"]
        assert 1 <= len(r["evidence_pos"]) <= 4 and len(r["evidence_neg"]) <= 4
        assert r["corruption_types"] and set(r["corruption_types"]) <= set(CORRUPTION_TYPES)
        assert any(r["clean"] in e for e in r["evidence_pos"])  # the source sentence is E+
    assert sum(report["outcomes"].values()) == report["seeds_tried"]
    # resuming adds nothing and redoes nothing
    again = make_file(maker, corpus_seeds(docs, per_doc=3), out, n=12, progress=False)
    assert again["new_rows"] == 0 and again["seeds_tried"] == 0
    assert out.read_text().splitlines() == [json.dumps(r, ensure_ascii=False) for r in rows]


def test_variants_share_one_research_call_and_resume_by_seed(rows_file, tmp_path):
    maker, docs = rows_file[2], rows_file[3]
    out = tmp_path / "variants.jsonl"
    report = make_file(maker, corpus_seeds(docs, per_doc=2), out, n=9, variants=3, progress=False)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert report["rows"] == len(rows) > 0 and report["seeds_tried"] < len(rows)
    by_seed: dict[str, list[dict]] = {}
    for r in rows:
        by_seed.setdefault(r["seed_id"], []).append(r)
    assert len({r["id"] for r in rows}) == len(rows)
    assert any(len(group) > 1 for group in by_seed.values())
    for seed_id, group in by_seed.items():
        assert len(group) <= 3 and len({r["clean"] for r in group}) == 1
        assert len({r["corrupted"] for r in group}) == len(group)  # variants differ
        assert {r["id"] for r in group} <= {seed_id, f"{seed_id}~v1", f"{seed_id}~v2"}
    again = make_file(maker, corpus_seeds(docs, per_doc=2), out, n=9, variants=3, progress=False)
    assert again["seeds_tried"] == 0 and again["new_rows"] == 0
    with pytest.raises(ValueError, match="variants must be >= 1"):
        make_file(maker, [], out, n=1, variants=0, progress=False)


def test_batched_seeds_make_the_same_rows(rows_file, tmp_path):
    out, _, maker, docs = rows_file
    fresh = EditorDataMaker(maker.researcher, maker.attribution, maker.corruptor, relevance=0.3)
    again = tmp_path / "batched.jsonl"
    make_file(fresh, corpus_seeds(docs, per_doc=3), again, n=12, progress=False, batch_size=5)
    assert again.read_text() == out.read_text()
    with pytest.raises(ValueError, match="batch size must be >= 1"):
        make_file(fresh, [], again, n=1, batch_size=0, progress=False)
    # seeds of an earlier run's rows (and its skipped file) are not redone
    from training.editor_data import previous_run

    done = previous_run(out, out.with_name(out.name + ".skipped.jsonl"))[1]
    every = {s.id for s in corpus_seeds(docs, 3)}
    x = tmp_path / "x.jsonl"
    ex = make_file(fresh, corpus_seeds(docs, 3), x, 99, exclude=[out], progress=False)
    assert done and ex["seeds_tried"] == len(every - done)
    assert not {json.loads(r)["seed_id"] for r in x.read_text().splitlines()} & done
    with pytest.raises(FileNotFoundError, match="--exclude"):
        make_file(fresh, [], again, n=1, exclude=[tmp_path / "none.jsonl"], progress=False)
    # snippets of held-out documents (the dev split) never enter a row
    held = EditorDataMaker(
        maker.researcher, maker.attribution, maker.corruptor, relevance=0.3, held_out=lambda d: True
    )
    none = make_file(held, corpus_seeds(docs, 3), tmp_path / "h.jsonl", 12, progress=False)
    assert none["rows"] == 0 and set(none["outcomes"]) == {"no relevant evidence"}


def test_llm_corruptions_of_earlier_rows_reuse_their_evidence(rows_file, tmp_path):
    from llm_helpers import smollm

    from training.corrupt import LLMCorruptor
    from training.editor_data import row_seeds

    out, _, maker, _ = rows_file
    rows = {r["seed_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    seeds = row_seeds(out)
    assert {s.id for s in seeds} == set(rows) and all(s.evidence for s in seeds)

    class NoResearch:
        def research_queries(self, queries):
            raise AssertionError("rows read back must not be researched again")

    llm_maker = EditorDataMaker(
        NoResearch(), maker.attribution, LLMCorruptor(smollm(), nlp=get_nlp()), max_supported=1.01
    )
    llm_out = tmp_path / "llm.jsonl"
    report = make_file(llm_maker, seeds, llm_out, n=50, progress=False, variants=2, batch_size=8)
    made = [json.loads(x) for x in llm_out.read_text().splitlines()]
    assert report["seeds_tried"] == len(seeds) and made, report
    for r in made:
        first = rows[r["seed_id"]]
        assert r["source"] == "llm" and r["corrupted"] != r["clean"] == first["clean"]
        assert r["id"].startswith(r["seed_id"] + "~llm") and r["id"] not in rows
        assert (r["evidence_pos"], r["evidence_neg"]) == (
            first["evidence_pos"],
            first["evidence_neg"],
        )
        assert set(r["corruption_types"]) <= {*CORRUPTION_TYPES, "other"}
    (tmp_path / "bad.jsonl").write_text('{"id": "a", "query": "q", "clean": "c"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1: row lacks evidence_pos, evidence_neg"):
        row_seeds(tmp_path / "bad.jsonl")


def test_edit_types_are_read_from_the_edit():
    from training.corrupt import edit_types

    nlp = get_nlp()
    clean = "Wellington defeated Napoleon at Waterloo in 1815 with 68,000 men."
    assert edit_types(clean, clean.replace("1815", "1820"), nlp) == ("date",)
    assert edit_types(clean, clean.replace("68,000", "12,000"), nlp) == ("number",)
    swapped = "Napoleon defeated Wellington at Waterloo in 1815 with 68,000 men."
    assert edit_types(clean, swapped, nlp) == ("role",)
    assert edit_types(clean, clean.replace("Waterloo", "Leipzig"), nlp) == ("entity",)
    assert edit_types(clean, clean.replace(" with 68,000 men", ""), nlp) == ("number",)
    assert edit_types(clean, clean.replace("defeated", "fought"), nlp) == ("other",)


def test_shards_split_the_seeds_disjointly(resources):
    from helpers import run_purr

    from training.editor_data import parse_shard, shard

    docs = list(read_corpus([resources / "tiny_corpus.jsonl"]))
    every = [s.id for s in corpus_seeds(docs, per_doc=3)]
    parts = [[s.id for s in shard(corpus_seeds(docs, per_doc=3), i, 3)] for i in range(3)]
    assert sorted(sum(parts, [])) == sorted(every) and all(parts)
    assert not set(parts[0]) & set(parts[1])
    for bad in ["0/3", "4/3", "x"]:
        with pytest.raises(ValueError, match="--shard"):
            parse_shard(bad)
    r = run_purr("data", "make", "--corpus", "c.jsonl", "--out", "o.jsonl", "--shard", "9/8")
    assert r.returncode == 2 and "between 1 and 8" in r.stderr


def test_seed_files(tmp_path):
    (tmp_path / "q.txt").write_text("who built the eiffel tower\n\nwho built the eiffel tower\n")
    (tmp_path / "q.jsonl").write_text('{"question": "when was curie born", "answer": ["1867"]}\n')
    (tmp_path / "q.json").write_text('[{"qid": "1", "question": "Is Paris in France?"}]')
    assert [s.query for s in read_seeds(tmp_path / "q.txt")] == ["who built the eiffel tower"]
    assert read_seeds(tmp_path / "q.jsonl")[0].query == "when was curie born"
    assert read_seeds(tmp_path / "q.json")[0].query == "Is Paris in France?"
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ValueError, match="invalid JSON"):
        read_seeds(tmp_path / "bad.json")


def _rows_words(path) -> list[str]:
    import re

    words = {"<pad>", "</s>", "<unk>", "claim", "evidence", ":", "."}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        for t in [r["clean"], r["corrupted"], *r["evidence_pos"], *r["evidence_neg"]]:
            words.update(re.findall(r"\w+|[^\w\s]", t.lower()))
    rest = sorted(words - {"<pad>", "</s>", "<unk>"})
    return ["<pad>", "</s>", "<unk>", *rest]


def test_train_fid_editor_saves_a_loadable_adapter(rows_file, tmp_path):
    out_rows = rows_file[0]
    base = save_tiny_t5(tmp_path / "t5", _rows_words(out_rows), d_model=32, init=1.0)
    cfg = EditorTrainConfig(
        data=str(out_rows),
        arch="fid",
        base=str(base),
        out=str(tmp_path / "fid"),
        lr=3e-3,
        batch_size=4,
        max_steps=8,
        warmup_steps=0,
        eval_every=4,
        dev_share=0.3,
    )
    report = train_editor(cfg, progress=False)
    assert report["curve"][0]["step"] == 0 and report["curve"][-1]["step"] == 8
    assert report["best_dev_loss"] < report["curve"][0]["dev_loss"]  # it learned something
    saved = tmp_path / "fid"
    assert (saved / "adapter_config.json").is_file() and (saved / "train_config.json").is_file()
    editor = FiDEditor(str(base), adapter=str(saved), max_new_tokens=8)
    ev = Evidence("e", "Paris is in France.", "", "t", None, "", 1.0)
    assert isinstance(editor.edit("Paris is in Spain.", [ev]).text, str)
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
        lr=3e-3,
        batch_size=4,
        max_steps=6,
        warmup_steps=0,
        eval_every=3,
        dev_share=0.3,
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
    ev = Evidence("e", "Paris is in France.", "", "t", None, "", 1.0)
    assert isinstance(editor.edit("Paris is in Spain.", [ev]).text, str)
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
        lr=1e-2,
        batch_size=4,
        max_steps=12,  # 6 steps can end on a bump of the dev loss
        warmup_steps=0,
        eval_every=3,
        dev_share=0.3,
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
    ev = Evidence("e", "Paris is in France.", "", "t", None, "", 1.0)
    assert isinstance(editor.edit("Paris is in Spain.", [ev]).text, str)


def test_train_editor_explains_bad_data(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"clean": "a"}\n')
    cfg = EditorTrainConfig(data=str(bad), arch="fid", base="x", out=str(tmp_path / "o"))
    with pytest.raises(ValueError, match="purr data make"):
        train_editor(cfg, progress=False)


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

    from training.corrupt import LLMCorruptor, LLMSummarizer

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
