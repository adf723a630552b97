"""NLI training data: loading the shared sets, group splits, premise windows, the mixture,
synthetic pairs, and the NLI metrics."""

from __future__ import annotations

import random

import pytest
from helpers import EVIDENCE, FILLER, nli_rows

from editor.text.words import NUMBER_WORD, content_words
from retrieval.types import Document
from training.data.nli import (
    NLI_FILES,
    NLIExample,
    build_mixture,
    load_nli_sets,
    read_jsonl,
    split_by_group,
    window_premise,
    write_jsonl,
)
from training.eval.attribution_metrics import balanced_accuracy, best_threshold, roc_auc


def test_loading_maps_labels_and_groups(data_dir):
    sets = load_nli_sets(data_dir, max_length=64)
    assert set(sets) == set(NLI_FILES)
    for name, rows in sets.items():
        assert len(rows) == 36
        assert {r.label for r in rows} <= {"supported", "contradicted", "not_supported"}
        assert all(r.source == name for r in rows)
    raw = {r["id"]: r["label"] for r in nli_rows("wice")}
    by_id = {r.id.split(":", 1)[1]: r.label for r in sets["wice"]}
    assert all(by_id[i] == "not_supported" for i, lab in raw.items() if lab == "partial")
    assert sets["scifact"][0].group == "scifact:doc:1000"
    assert sets["climate-fever"][0].group == "climate-fever:title:Article 0"
    assert sets["summedits"][0].group.startswith("summedits:premise:")
    limited = load_nli_sets(data_dir, ["scifact"], limit_per_source=5)
    assert list(limited) == ["scifact"] and len(limited["scifact"]) == 5
    with pytest.raises(ValueError, match="unknown NLI sources"):
        load_nli_sets(data_dir, ["nope"])
    with pytest.raises(ValueError, match="does not exist"):
        load_nli_sets(data_dir / "missing")


def test_group_split_never_leaks_a_document():
    rows = [
        NLIExample(f"r{i}", "s", f"doc {i % 40}", f"h{i}", "supported", f"s:doc:{i % 40}")
        for i in range(400)
    ]
    splits = split_by_group(rows, dev_fraction=0.3)
    train_groups = {r.group for r in splits.train}
    dev_groups = {r.group for r in splits.dev}
    assert train_groups and dev_groups and not train_groups & dev_groups
    assert len(splits.train) + len(splits.dev) == 400
    again = split_by_group(list(reversed(rows)), dev_fraction=0.3)  # row order is irrelevant
    assert {r.group for r in again.dev} == dev_groups


def test_long_premise_window_keeps_the_evidence(data_dir):
    premise = " ".join(FILLER[:25] + [EVIDENCE] + FILLER[25:])
    window = window_premise(premise, "The Eiffel Tower was finished in 1889.", max_words=40)
    assert EVIDENCE in window
    assert len(window.split()) <= 40
    assert window_premise("Short premise.", "anything", 40) == "Short premise."
    for row in load_nli_sets(data_dir, ["wice", "summedits"], max_length=64)["wice"]:
        assert EVIDENCE in row.premise and len(row.premise.split()) < 60


def test_mixture_caps_and_jsonl_round_trip(tmp_path):
    a = [NLIExample(f"a{i}", "a", "p", "h", "supported", f"g{i}") for i in range(10)]
    b = [NLIExample(f"b{i}", "b", "p", "h", "contradicted", f"g{i}") for i in range(4)]
    mixed = build_mixture({"a": a, "b": b}, caps={"a": 3}, seed=0)
    assert sorted(ex.source for ex in mixed) == ["a"] * 3 + ["b"] * 4
    assert mixed == build_mixture({"a": a, "b": b}, caps={"a": 3}, seed=0)
    assert write_jsonl(mixed, tmp_path / "m.jsonl") == 7
    assert list(read_jsonl(tmp_path / "m.jsonl")) == mixed


DOCS = [
    Document(
        "wiki:Eiffel Tower",
        "Eiffel Tower",
        "The Eiffel Tower is a wrought-iron lattice tower in Paris. It was designed by the "
        "company of Gustave Eiffel and completed in 1889 for the World Fair. It is 330 metres "
        "tall and was the tallest structure in the world for 41 years.",
    ),
    Document(
        "wiki:Statue of Liberty",
        "Statue of Liberty",
        "The Statue of Liberty is a colossal statue on Liberty Island in New York. It was "
        "designed by Frederic Bartholdi and dedicated on October 28, 1886 as a gift from France.",
    ),
    Document(
        "wiki:Big Ben",
        "Big Ben",
        "Big Ben is the nickname for the Great Bell of the clock at the Palace of Westminster in "
        "London. The tower was completed in 1859 and designed by Augustus Pugin in a Gothic style.",
    ),
    Document(
        "wiki:Colosseum",
        "Colosseum",
        "The Colosseum is an elliptical amphitheatre in the centre of Rome in Italy. Construction "
        "began under the emperor Vespasian in 72 AD and was completed in 80 AD under Titus.",
    ),
]


def test_synthetic_pairs_from_documents():
    from training.data.nli_synthetic import synthetic_pairs

    pairs = synthetic_pairs(DOCS, max_articles=None, seed=0, progress=False)
    by_group: dict[str, dict[str, NLIExample]] = {}
    for ex in pairs:
        by_group.setdefault(ex.group, {})[ex.label] = ex
    assert set(by_group) == {f"wiki-synthetic:{d.id}" for d in DOCS}
    n_contradicted = 0
    for group, ex in by_group.items():
        sup = ex["supported"]
        assert sup.hypothesis in sup.premise  # the window contains the sentence
        if "contradicted" in ex:
            con = ex["contradicted"]
            n_contradicted += 1
            assert con.premise == sup.premise and con.hypothesis != sup.hypothesis
            assert con.hypothesis not in con.premise
            changed = set(con.hypothesis.split()) ^ set(sup.hypothesis.split())
            assert changed  # an entity or number differs
        if "not_supported" in ex:
            neu = ex["not_supported"]
            assert neu.hypothesis == sup.hypothesis and neu.premise != sup.premise
            own = next(d for d in DOCS if group.endswith(d.id))
            assert neu.premise not in own.text  # a window of another article
    assert n_contradicted >= 3


def test_role_swap_pairs_are_opt_in():
    from training.data.nli_synthetic import synthetic_pairs

    docs = [
        *DOCS,
        Document(
            "wiki:Moscow",
            "Moscow",
            "Moscow is the capital and largest city of Russia, on the Moskva River. "
            "Moscow is the capital and largest city of Russia, on the Moskva River.",
        ),
    ]
    plain = synthetic_pairs(docs, max_articles=None, seed=0, progress=False)
    assert plain == synthetic_pairs(docs, max_articles=None, seed=0, progress=False, role_swaps=0)
    with_roles = synthetic_pairs(docs, max_articles=None, seed=0, progress=False, role_swaps=1.0)
    roles = [ex for ex in with_roles if ex.id.endswith(":role")]
    assert roles and not any(ex.id.endswith(":role") for ex in plain)
    for ex in roles:
        sup = next(e for e in with_roles if e.group == ex.group and e.label == "supported")
        assert ex.label == "contradicted" and ex.premise == sup.premise
        assert sorted(ex.hypothesis.split()) != sup.hypothesis.split()
        assert len(ex.hypothesis) == len(sup.hypothesis)  # the same words, traded places


def test_number_perturbation_changes_the_number():
    from training.data.nli_synthetic import perturb_number

    rng = random.Random(3)
    for text in ["completed in 1889", "330 metres", "2.5 km", "12,000 people"]:
        new = perturb_number(text, rng)
        assert new is not None and new != text
        assert content_words(new, NUMBER_WORD) != content_words(text, NUMBER_WORD)


def test_metrics_exact_values():
    y = [1, 1, 0, 0, 0, 0]
    s = [0.9, 0.4, 0.6, 0.1, 0.2, 0.3]
    assert balanced_accuracy(y, s) == pytest.approx(0.625)
    assert balanced_accuracy(y, s, threshold=0.35) == pytest.approx(0.875)
    assert best_threshold(y, s) == (0.4, pytest.approx(0.875))
    assert roc_auc(y, s) == pytest.approx(7 / 8)  # 7 of 8 (pos, neg) pairs ordered right
    assert roc_auc([0, 1, 0, 1], [0.5, 0.5, 0.2, 0.9]) == pytest.approx(0.875)  # tie = 1/2
    assert roc_auc([1, 1], [0.2, 0.3]) != roc_auc([1, 1], [0.2, 0.3])  # NaN: one class
    with pytest.raises(ValueError):
        balanced_accuracy([0, 2], [0.1, 0.2])
