"""PURR's training data on CPU: rule corruptions and ``purr data make`` rows from a real index with
the shipped attribution model as the filter (deterministic, resumable, sharded)."""

from __future__ import annotations

import json
import random

import pytest
from helpers import NAME_POOL

from editor.text.nlp import get_nlp
from retrieval.corpus import read_corpus
from training.data.corrupt import CORRUPTION_TYPES, RuleCorruptor, negate
from training.data.editor_data import EditorDataMaker, make_file
from training.data.seeds import corpus_seeds, read_seeds


def test_rule_corruptions_change_one_fact():
    nlp = get_nlp()
    corruptor = RuleCorruptor(nlp, NAME_POOL, two_errors=0.0)
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
    from training.data.editor_data import previous_run

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

    from training.data.corrupt import LLMCorruptor
    from training.data.seeds import row_seeds

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
    from training.data.corrupt import edit_types

    nlp = get_nlp()
    clean = "Wellington defeated Napoleon at Waterloo in 1815 with 68,000 men."
    assert edit_types(clean, clean.replace("1815", "1820"), nlp) == ("date",)
    assert edit_types(clean, clean.replace("68,000", "12,000"), nlp) == ("number",)
    swapped = "Napoleon defeated Wellington at Waterloo in 1815 with 68,000 men."
    assert edit_types(clean, swapped, nlp) == ("role",)
    assert edit_types(clean, clean.replace("Waterloo", "Leipzig"), nlp) == ("entity",)
    assert edit_types(clean, clean.replace(" with 68,000 men", ""), nlp) == ("number",)
    assert edit_types(clean, clean.replace("defeated", "fought"), nlp) == ("other",)


@pytest.mark.integration
def test_shards_split_the_seeds_disjointly(resources):
    from helpers import run_purr

    from training.data.seeds import parse_shard, shard

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


def test_held_out_articles_are_the_corpus_dev_split_never_web_pages():
    from retrieval.web.extract import page_id
    from serve.cli.data import held_out_docs
    from training.data.nli import is_dev

    options = {"include_dev": False, "index": None}
    # a loopback page whose id falls in the planted dev split's hash range
    page = next(
        d
        for d in (page_id(f"http://127.0.0.1:{p}/pages/eiffel") for p in range(40000, 41000))
        if is_dev(f"wiki-synthetic:{d}")
    )
    corpus = [d for d in (f"doc{i}" for i in range(200)) if is_dev(f"wiki-synthetic:{d}")]
    for source in ("index", "both"):
        held = held_out_docs(options, source)
        assert held is not None and not held(page) and corpus and held(corpus[0])
    assert held_out_docs(options, "web") is None
    assert held_out_docs({**options, "index": "my-index"}, "index") is None
