"""Sentence-level contrast pairs from minimal edits, per-sentence hypothesis scoring, and the
shipped summaries adapter (continuing an adapter is tested in test_train_attribution.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from training.data.nli import NLIExample, group_key
from training.data.nli_contrast import (
    changed_sentences,
    consistent_sentence_pairs,
    edit_label,
    edit_sentence_pairs,
    summedits_sentence_pairs,
)
from training.eval.attribution import all_sentences, hypothesis_sentences, score_rows

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


class _SentenceWindowModel:
    """Supported when one premise sentence holds every word of the hypothesis (a model whose
    window sees one sentence at a time)."""

    def score_batch(self, pairs):
        from editor.types import EntailmentScores

        out = []
        for premise, hyp in pairs:
            words = {w.strip(".").lower() for w in hyp.split()}
            ok = any(words <= set(s.lower().replace(".", "").split()) for s in premise.split(". "))
            p = 0.9 if ok else 0.1
            out.append(
                EntailmentScores(supported=p, contradicted=0.0, not_supported=1 - p, chunks=1)
            )
        return out


def test_per_sentence_scoring_reads_a_summary_as_auto_ais_does():
    model = _SentenceWindowModel()
    premise = "cats purr. dogs bark."
    good = NLIExample("g", "s", premise, "Cats purr. Dogs bark.", "supported", "g")
    bad = NLIExample("b", "s", premise, "Cats purr. Dogs meow.", "not_supported", "g")
    whole = score_rows(model, [good, bad], progress=False)
    each = score_rows(model, [good, bad], progress=False, per_sentence=True)
    # whole: no single window holds both sentences, so even the true summary looks unsupported
    assert whole[:, 0].tolist() == pytest.approx([0.1, 0.1])
    # per sentence: the true summary is supported, the one bad sentence sinks the other
    assert each[:, 0].tolist() == pytest.approx([0.9, 0.1])


def test_the_summaries_adapter_is_shipped_and_selectable_by_name():
    from editor.attribution.base import build
    from editor.config import AttributionConfig

    folder = (
        Path(__file__).resolve().parents[3] / "editor" / "models" / "purr-attribution-summaries"
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
    # both are real, trained models: each reads the wrong height as contradicted
    assert a.contradicted > max(a.supported, a.not_supported)
    assert b.contradicted > max(b.supported, b.not_supported)
    assert a.supported != b.supported  # and they are different ones
