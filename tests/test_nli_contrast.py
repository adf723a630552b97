"""Sentence-level contrast pairs from minimal edits, per-sentence hypothesis scoring, and
continuing a saved attribution adapter."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import save_tiny_bert_nli

from training.eval_attribution import all_sentences, hypothesis_sentences, score_rows
from training.nli_contrast import (
    changed_sentences,
    consistent_sentence_pairs,
    edit_label,
    edit_sentence_pairs,
    summedits_sentence_pairs,
)
from training.nli_data import NLIExample, group_key

DOC = (
    "The board met on Monday. The company raised its dividend to $0.13 per share. "
    "It also announced a share repurchase program. Net debt fell below $25 billion."
)
GOLD = "The company raised its dividend to $0.13. It announced a share buyback."


def _write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def data_dir(tmp_path) -> Path:
    root = tmp_path / "data"
    edits = [
        {
            "id": "e1",
            "evidence": DOC,
            "gold": GOLD,
            "original": "The company cut its dividend to $0.13. It announced a share buyback.",
            "edit_types": ["antonym_swap"],
        },
        {
            "id": "e2",
            "evidence": DOC,
            "gold": GOLD,
            "original": GOLD.replace("buyback.", "buyback in Paris."),
            "edit_types": ["hallucinated_fact_insertion"],
        },
    ]
    _write(root / "edits" / "summedits.jsonl", edits)
    nli = [
        {"id": "n1", "premise": DOC, "hypothesis": GOLD, "label": "supported"},
        {
            "id": "n2",
            "premise": DOC,
            "hypothesis": "Debt fell. It was a loss.",
            "label": "supported",
        },
        {"id": "n3", "premise": DOC, "hypothesis": edits[0]["original"], "label": "not_supported"},
    ]
    _write(root / "nli" / "summedits.jsonl", nli)
    return root


def test_changed_sentences_pair_the_edit_with_its_source():
    assert changed_sentences("A won. B lost.", "A won. B drew.") == [("B drew.", "B lost.")]
    assert changed_sentences("Same text.", "Same text.") == []
    assert edit_label(["hallucinated_fact_insertion"]) == "not_supported"
    assert edit_label(["hallucinated_fact_insertion", "entity_modification"]) == "contradicted"
    assert edit_label(None) == "contradicted"


def test_edit_pairs_label_both_sides_and_share_the_nli_split(data_dir):
    rows = edit_sentence_pairs(data_dir / "edits" / "summedits.jsonl", max_length=64)
    by_hyp = {r.hypothesis: r.label for r in rows}
    assert by_hyp == {
        "The company raised its dividend to $0.13.": "supported",
        "The company cut its dividend to $0.13.": "contradicted",
        "It announced a share buyback.": "supported",
        "It announced a share buyback in Paris.": "not_supported",
    }
    # the same document is one split group in both views of SummEdits
    nli_group = group_key("summedits", {"premise": DOC})
    assert {r.group for r in rows} == {nli_group}
    # premises are windowed to the sentence: the dividend sentence survives
    dividend = next(r for r in rows if "cut" in r.hypothesis)
    assert "$0.13 per share" in dividend.premise


def test_consistent_summaries_give_supported_sentences_once(data_dir):
    rows = consistent_sentence_pairs(data_dir / "nli" / "summedits.jsonl", max_length=None)
    assert [r.hypothesis for r in rows] == [
        "The company raised its dividend to $0.13.",
        "It announced a share buyback.",
        "Debt fell.",
        "It was a loss.",
    ]
    assert {r.label for r in rows} == {"supported"} and rows[0].premise == DOC
    both = summedits_sentence_pairs(data_dir, max_length=64)
    assert len(both) == 6  # 4 edit pairs + the 2 sentences no edit touched
    assert len({(r.group, r.hypothesis) for r in both}) == 6


def test_broken_edit_rows_are_named(tmp_path):
    path = _write(tmp_path / "e.jsonl", [{"id": "x", "evidence": DOC, "gold": GOLD}])
    with pytest.raises(ValueError, match=r"e\.jsonl:1: bad edits row"):
        edit_sentence_pairs(path)
    with pytest.raises(ValueError, match="no such edits file"):
        edit_sentence_pairs(tmp_path / "missing.jsonl")


def test_all_sentences_needs_every_sentence_supported():
    scores = np.array([[0.9, 0.05, 0.05], [0.2, 0.7, 0.1]])
    combined = all_sentences(scores)
    assert combined[0] == pytest.approx(0.2) and combined[1] == pytest.approx(0.7)
    assert combined.sum() == pytest.approx(1.0)
    assert all_sentences(scores[:1]).tolist() == pytest.approx([0.9, 0.05, 0.05])
    assert hypothesis_sentences("One claim only") == ["One claim only"]


class _WordModel:
    """Scores a sentence supported when every one of its words is in the premise."""

    def score_batch(self, pairs):
        from editor.types import EntailmentScores

        out = []
        for premise, hyp in pairs:
            ok = all(w.strip(".").lower() in premise.lower() for w in hyp.split())
            out.append(
                EntailmentScores(
                    supported=0.9 if ok else 0.1,
                    contradicted=0.0,
                    not_supported=0.1 if ok else 0.9,
                    chunks=1,
                )
            )
        return out


def test_per_sentence_scoring_catches_the_one_bad_sentence():
    row = NLIExample("r", "s", "cats purr. dogs bark.", "Cats purr. Dogs meow.", "x", "g")
    whole = score_rows(_WordModel(), [row], progress=False)
    each = score_rows(_WordModel(), [row], progress=False, per_sentence=True)
    assert whole[0, 0] == pytest.approx(0.1) and each[0, 0] == pytest.approx(0.1)
    good = NLIExample("g", "s", "cats purr. dogs bark.", "Cats purr. Dogs bark.", "x", "g")
    assert score_rows(_WordModel(), [good], progress=False, per_sentence=True)[0, 0] == 0.9


# -- continuing an adapter --------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory) -> Path:
    return save_tiny_bert_nli(tmp_path_factory.mktemp("tiny-base"), None)


def _cfg(tiny_base, out, **kw):
    from training.train_attribution import TrainAttributionConfig

    base = dict(
        out=str(out),
        base=str(tiny_base),
        max_length=64,
        batch_size=4,
        max_steps=2,
        eval_every=2,
        wiki_articles=0,
        progress=False,
        device="cpu",
        lora=True,
        lora_r=4,
    )
    return TrainAttributionConfig(**(base | kw))


def _splits():
    from training.nli_data import NLISplits

    rows = [
        NLIExample(
            f"r{i}",
            "scifact",
            "The tower was built in 1889.",
            f"Claim {i}.",
            ("supported", "contradicted", "not_supported")[i % 3],
            f"g{i}",
        )
        for i in range(12)
    ]
    return NLISplits(rows[:8], rows[8:])


def test_init_adapter_continues_from_the_saved_weights(tiny_base, tmp_path):
    from editor.nli_hf import HFSequenceClassificationNLI
    from training.train_attribution import train_attribution

    first = train_attribution(_cfg(tiny_base, tmp_path / "a"), _splits()).out
    pair = [("The tower was built in 1889.", "It dates from 1889.")]
    before = HFSequenceClassificationNLI(str(first), max_length=64)._batched(pair)
    # lr tiny: the continued model must start where the saved one ended, not from scratch
    second = train_attribution(
        _cfg(tiny_base, tmp_path / "b", init_adapter=str(first), lr=1e-9), _splits()
    ).out
    after = HFSequenceClassificationNLI(str(second), max_length=64)._batched(pair)
    assert np.abs(after - before).max() < 1e-3
    fresh = train_attribution(_cfg(tiny_base, tmp_path / "c", lr=1e-9, seed=5), _splits()).out
    other = HFSequenceClassificationNLI(str(fresh), max_length=64)._batched(pair)
    assert np.abs(other - before).max() > 1e-3  # a fresh head differs: the check can fail
    card = (second / "README.md").read_text()
    assert f"--init-adapter {first}" in card


def test_init_adapter_and_edit_pairs_errors_name_the_fix(tiny_base, tmp_path):
    from training.train_attribution import train_attribution

    first = train_attribution(_cfg(tiny_base, tmp_path / "a"), _splits()).out
    with pytest.raises(ValueError, match="--lora-r 4"):
        _cfg(tiny_base, tmp_path / "b", init_adapter=str(first), lora_r=8)
    with pytest.raises(ValueError, match="pass --lora"):
        _cfg(tiny_base, tmp_path / "b", init_adapter=str(first), lora=False)
    with pytest.raises(ValueError, match="no adapter_config.json"):
        _cfg(tiny_base, tmp_path / "b", init_adapter=str(tmp_path))
    with pytest.raises(ValueError, match="add summedits"):
        _cfg(tiny_base, tmp_path / "b", edit_pairs=True, sources=["scifact"])


def test_the_summaries_adapter_is_shipped_and_selectable_by_name():
    from editor.attribution import build
    from editor.config import AttributionConfig

    folder = (
        Path(__file__).resolve().parents[1] / "editor" / "models" / "purr-attribution-summaries"
    )
    assert all(p.stat().st_size < 20 * 1024 * 1024 for p in folder.iterdir())
    assert "SummEdits" in (folder / "README.md").read_text()
    by_name = build(AttributionConfig(model="purr-attribution-summaries"))
    default = build(AttributionConfig())
    premise = "The tower is 330 metres tall and was built from 1887 to 1889."
    a, b = (
        by_name.score(premise, "The tower is 500 metres tall."),
        default.score(premise, "The tower is 500 metres tall."),
    )
    assert a.contradicted > 0.5 and b.contradicted > 0.5  # both are real, trained models
    assert a.supported != b.supported  # and they are different ones
