"""Attribution-model training: NLI data loading and splits, synthetic pairs, metrics, a tiny
training run (full and LoRA) whose output the attribution loader reads, evaluation, the CLI."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np
import pytest
from helpers import save_tiny_bert_nli

from editor.text.words import NUMBER_WORD, content_words
from retrieval.types import Document
from training.nli_data import (
    NLI_FILES,
    NLIExample,
    build_mixture,
    load_nli_sets,
    read_jsonl,
    split_by_group,
    window_premise,
    write_jsonl,
)
from training.nli_metrics import balanced_accuracy, best_threshold, roc_auc

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

FILLER = [f"Filler sentence number {i} talks about weather patterns in general." for i in range(40)]
EVIDENCE = "The Eiffel Tower was completed in 1889 for the World Fair."


def _rows(source: str, n_docs: int = 12) -> list[dict]:
    rows = []
    labels = ["supported", "contradicted", "not_supported", "partial"]
    for d in range(n_docs):
        for k in range(3):
            label = labels[(d + k) % 4]
            if source == "scifact" and label in ("not_supported", "partial"):
                label = "supported"
            row = {
                "id": f"{source}-{d}-{k}",
                "source": source,
                "premise": f"Document {d} states fact {k}. It was observed in {1900 + d}.",
                "hypothesis": f"Fact {k} holds for document {d}.",
                "label": label,
            }
            if source == "scifact":
                row["doc_id"] = str(1000 + d)
            elif source == "climate-fever":
                row["title"] = f"Article {d}"
            else:  # wice / summedits: whole documents, no id of the document
                row["premise"] = " ".join(FILLER[: 10 + d] + [EVIDENCE] + FILLER[10 + d :])
                row["hypothesis"] = f"The Eiffel Tower was finished in 1889 (claim {d}-{k})."
            rows.append(row)
    return rows


@pytest.fixture
def data_dir(tmp_path) -> Path:
    root = tmp_path / "data"
    for source, rel in NLI_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in _rows(source)))
    return root


@pytest.fixture(scope="session")
def tiny_base(tmp_path_factory) -> Path:
    """A tiny random BERT encoder (no head) with a real WordPiece tokenizer, like the base."""
    return save_tiny_bert_nli(tmp_path_factory.mktemp("tiny-base"), None)


# -- data -------------------------------------------------------------------------------------


def test_loading_maps_labels_and_groups(data_dir):
    sets = load_nli_sets(data_dir, max_length=64)
    assert set(sets) == set(NLI_FILES)
    for name, rows in sets.items():
        assert len(rows) == 36
        assert {r.label for r in rows} <= {"supported", "contradicted", "not_supported"}
        assert all(r.source == name for r in rows)
    raw = {r["id"]: r["label"] for r in _rows("wice")}
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
    from training.nli_synthetic import synthetic_pairs

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
    from training.nli_synthetic import synthetic_pairs

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
    from training.nli_synthetic import perturb_number

    rng = random.Random(3)
    for text in ["completed in 1889", "330 metres", "2.5 km", "12,000 people"]:
        new = perturb_number(text, rng)
        assert new is not None and new != text
        assert content_words(new, NUMBER_WORD) != content_words(text, NUMBER_WORD)


# -- metrics ----------------------------------------------------------------------------------


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


# -- training, loading, evaluation ------------------------------------------------------------


def _tiny_cfg(tiny_base, out, **kw):
    from training.train_attribution import TrainAttributionConfig

    return TrainAttributionConfig(
        out=str(out),
        base=str(tiny_base),
        max_length=64,
        batch_size=4,
        max_steps=4,
        eval_every=2,
        wiki_articles=0,
        progress=False,
        device="cpu",
        **kw,
    )


def _splits(data_dir):
    from training.nli_data import NLISplits

    sets = load_nli_sets(data_dir, max_length=64)
    rows = [r for rows in sets.values() for r in rows]
    return NLISplits(rows[::2], rows[1::2][:24])


def _check_loads(out: Path) -> list[float]:
    from editor.attribution import HFSequenceClassificationNLI

    model = HFSequenceClassificationNLI(str(out), max_length=64)
    scores = model.score_batch([(EVIDENCE, "The tower was completed in 1889."), ("A.", "B.")])
    assert model.label_map == {0: "supported", 1: "contradicted", 2: "not_supported"}
    for s in scores:
        assert s.supported + s.contradicted + s.not_supported == pytest.approx(1.0, abs=1e-5)
    return [s.supported for s in scores]


def test_tiny_full_training_writes_a_loadable_model(tiny_base, data_dir, tmp_path):
    from training.train_attribution import train_attribution

    result = train_attribution(_tiny_cfg(tiny_base, tmp_path / "full"), _splits(data_dir))
    out = result.out
    assert result.steps == 4 and result.best_step in (2, 4)
    for name in (
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "training_config.json",
        "metrics.json",
    ):
        assert (out / name).is_file(), name
    metrics = json.loads((out / "metrics.json").read_text())
    assert [h["step"] for h in metrics["history"]] == [2, 4]
    assert 0.0 <= metrics["dev"]["mean_balanced_accuracy"] <= 1.0
    assert json.loads((out / "training_config.json").read_text())["lr"] == 3e-5
    _check_loads(out)


def test_tiny_lora_training_saves_small_adapter_folder(tiny_base, data_dir, tmp_path):
    from editor.attribution.base import build
    from editor.config import AttributionConfig
    from training.train_attribution import train_attribution

    out = train_attribution(
        _tiny_cfg(tiny_base, tmp_path / "lora", lora=True, lora_r=4), _splits(data_dir)
    ).out
    assert (out / "adapter_config.json").is_file() and not (out / "model.safetensors").exists()
    assert all(p.stat().st_size < 20 * 1024 * 1024 for p in out.iterdir())
    first = _check_loads(out)
    assert _check_loads(out) == first  # the head comes from the adapter, not a fresh init
    model = build(AttributionConfig(type="purr", model=str(out), max_length=64))
    assert model.score("A.", "B.").supported == pytest.approx(first[1], abs=1e-6)


def test_eval_writes_metrics_and_chart(tiny_base, data_dir, tmp_path):
    from training.eval_attribution import run_eval
    from training.train_attribution import train_attribution

    out = train_attribution(_tiny_cfg(tiny_base, tmp_path / "m"), _splits(data_dir)).out
    report = run_eval(
        str(out),
        tmp_path / "eval",
        data_dir=data_dir,
        limit=6,
        max_length=64,
        device="cpu",
        progress=False,
    )
    metrics = report["metrics"]
    assert 0.0 <= metrics["mean/balanced_accuracy"] <= 1.0
    assert metrics["throughput/pairs_per_s"] > 0
    assert (tmp_path / "eval" / "metrics.json").is_file()
    assert (tmp_path / "eval" / "metrics.png").stat().st_size > 1000


def test_cli_parser_and_errors(tmp_path):
    from serve.cli.common import add_common
    from serve.cli.train import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command", required=True), add_common)
    args = parser.parse_args(
        [
            "train",
            "attribution",
            "--out",
            str(tmp_path),
            "--lora",
            "--max-steps",
            "3",
            "--data-dir",
            str(tmp_path / "none"),
        ]
    )
    assert args.lora and args.max_steps == 3 and args.base == "packaged:all-minilm-l6-v2"
    with pytest.raises(ValueError, match="--data-dir"):
        args.handler(args)
    from serve.cli import build_parser

    args = build_parser().parse_args(
        ["eval", "attribution", "--model", "nothing-here", "--out", "x"]
    )
    with pytest.raises(ValueError, match="--model"):
        args.handler(args)
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "attribution", "--out", "x", "--max-steps", "0"])


def _continue_splits():
    from training.nli_data import NLISplits

    labels = ("supported", "contradicted", "not_supported")
    rows = [
        NLIExample(f"r{i}", "scifact", EVIDENCE, f"Claim {i}.", labels[i % 3], f"g{i}")
        for i in range(12)
    ]
    return NLISplits(rows[:8], rows[8:])


def test_init_adapter_continues_from_the_saved_weights(tiny_base, tmp_path):
    from editor.attribution.hf import HFSequenceClassificationNLI
    from training.train_attribution import train_attribution

    def scores(out):
        model = HFSequenceClassificationNLI(str(out), max_length=64)
        return model._batched([(EVIDENCE, "It dates from 1889.")])

    lora = dict(lora=True, lora_r=4)
    first = train_attribution(_tiny_cfg(tiny_base, tmp_path / "a", **lora), _continue_splits()).out
    # lr tiny: the continued model must start where the saved one ended, not from scratch
    cont = _tiny_cfg(tiny_base, tmp_path / "b", init_adapter=str(first), lr=1e-9, **lora)
    second = train_attribution(cont, _continue_splits()).out
    assert np.abs(scores(second) - scores(first)).max() < 1e-3
    fresh = _tiny_cfg(tiny_base, tmp_path / "c", lr=1e-9, seed=5, **lora)
    other = train_attribution(fresh, _continue_splits()).out
    assert np.abs(scores(other) - scores(first)).max() > 1e-3  # a fresh head differs
    assert f"--init-adapter {first}" in (second / "README.md").read_text()


def test_init_adapter_and_edit_pairs_errors_name_the_fix(tiny_base, tmp_path):
    from training.train_attribution import train_attribution

    lora = dict(lora=True, lora_r=4)
    first = train_attribution(_tiny_cfg(tiny_base, tmp_path / "a", **lora), _continue_splits()).out
    out = tmp_path / "b"
    with pytest.raises(ValueError, match="--lora-r 4"):
        _tiny_cfg(tiny_base, out, init_adapter=str(first), lora=True, lora_r=8)
    with pytest.raises(ValueError, match="pass --lora"):
        _tiny_cfg(tiny_base, out, init_adapter=str(first))
    with pytest.raises(ValueError, match="no adapter_config.json"):
        _tiny_cfg(tiny_base, out, init_adapter=str(tmp_path), **lora)
    with pytest.raises(ValueError, match="add summedits"):
        _tiny_cfg(tiny_base, out, edit_pairs=True, sources=["scifact"])


# -- real shared data -------------------------------------------------------------------------


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="shared data folder not present")
def test_real_shared_nli_files_load():
    sets = load_nli_sets(SHARED_DATA, limit_per_source=20, max_length=256)
    for name, rows in sets.items():
        assert len(rows) == 20, name
        assert all(r.premise and r.hypothesis and r.group.startswith(name) for r in rows)
        assert all(len(r.premise.split()) <= 200 for r in rows)
    assert np.mean([r.label == "supported" for r in sets["scifact"]]) > 0
