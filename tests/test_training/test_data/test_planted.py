"""The planted-error dev set: deterministic, balanced error types, only dev-split articles,
and `purr eval` turns it into fix and false-edit rates."""

from __future__ import annotations

import json

import pytest
from helpers import run_purr

from editor.result import EditResult
from retrieval.corpus import read_wiki_summaries
from retrieval.sentences import split
from training.data.nli import is_dev
from training.data.planted import ERROR_TYPES, make_planted
from training.eval.edits_metrics import EvalRecord, planted_scores


def test_planted_rows_are_deterministic_balanced_and_dev_only():
    docs = list(read_wiki_summaries())[:1500]
    rows = make_planted(docs, n=16, seed=3, progress=False, pool_size=150)
    again = make_planted(docs, n=16, seed=3, progress=False, pool_size=150)
    assert rows == again and len(rows) == 16
    with_error = [r for r in rows if r["planted"]]
    assert len(with_error) == 8
    assert sorted({r["error_type"] for r in with_error}) == sorted(ERROR_TYPES)
    ids = {d.title: d.id for d in docs}
    for r in rows:
        assert is_dev(f"wiki-synthetic:{ids[r['title']]}")
        assert (r["text"] != r["reference"]) == r["planted"]
        if r["planted"] and r["error_type"] != "role":
            assert r["wrong"] in r["text"] and r["right"] in r["reference"]


def test_negation_errors_are_opt_in_and_unknown_types_refused():
    docs = list(read_wiki_summaries())[:1500]
    rows = make_planted(docs, n=6, seed=3, progress=False, pool_size=150, types=("negation",))
    planted = [r for r in rows if r["planted"]]
    assert planted and all(r["error_type"] == "negation" for r in planted)
    for r in planted:
        assert r["text"] != r["reference"]
        assert (" not " in r["text"]) != (" not " in r["reference"]) or "n't" in r["reference"]
        # the wrong span names one sentence, the one that changed (what purr eval slots checks)
        changed = [s for s in split(r["text"]) if s not in r["reference"]]
        holding = [s for s in split(r["text"]) if r["wrong"] in s]
        assert holding == changed and len(changed) == 1, r
    with pytest.raises(ValueError, match="unknown"):
        make_planted(docs, n=2, progress=False, types=("sarcasm",))


@pytest.mark.integration
def test_planted_scores_and_the_cli(tmp_path):
    def row(original, revised, reference, error_type=None):
        result = EditResult(original, revised, None, (), (), (), None, "edited")
        return EvalRecord("r", result, reference, error_type is not None, error_type)

    rows = [
        row("x", "y", "y", "date"),
        row("x", "z", "y", "entity"),
        row("a", "b", "a"),
        row("a", "a", "a"),
    ]
    s = planted_scores(rows)
    assert (s["fix_rate"], s["touched_rate"], s["false_edit_rate"]) == (0.5, 1.0, 0.5)
    assert s["by_type"]["date"]["fix_rate"] == 1.0 and s["by_type"]["entity"]["fix_rate"] == 0.0
    out = tmp_path / "dev.jsonl"
    r = run_purr("data", "planted", "--out", str(out), "--n", "4", "--pool-size", "100")
    assert r.returncode == 0, r.stderr
    assert len(out.read_text().splitlines()) == 4
    assert json.loads(r.stdout)["rows"] == 4
    bad = run_purr("data", "planted", "--out", str(out), "--n", "0")
    assert bad.returncode == 2 and "--n must be >= 1" in bad.stderr


def test_the_entity_pool_is_parsed_once_and_read_back_the_same(tmp_path):
    from editor.text.nlp import get_nlp
    from training.data.planted import entity_pool

    docs = list(read_wiki_summaries())[:400]
    nlp = get_nlp()
    made = entity_pool(docs, nlp, size=40, cache_dir=tmp_path)
    assert made == entity_pool(docs, nlp, size=40)  # the same pool as without a cache
    assert len(list((tmp_path / "entity-pools").glob("*.json"))) == 1

    class NoParse:  # the same model by name and version, but any parse fails the test
        meta = nlp.meta
        pipe_names = nlp.pipe_names

        def pipe(self, *a, **k):
            raise AssertionError("parsed again")

    assert entity_pool(docs, NoParse(), size=40, cache_dir=tmp_path) == made
    other = entity_pool(docs[:200], nlp, size=40, cache_dir=tmp_path)  # other texts, other key
    assert len(list((tmp_path / "entity-pools").glob("*.json"))) == 2 and other != made
    for cached in (tmp_path / "entity-pools").glob("*.json"):
        cached.write_text("{cut")  # a broken cache file is made again, not an error
    assert entity_pool(docs, nlp, size=40, cache_dir=tmp_path) == made
