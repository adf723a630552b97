"""Reworded claims (training.data.nli_paraphrase): the facts kept, the label kept, the
group kept, and only rewrites that read as English."""

from __future__ import annotations

import pytest

from editor.text.nlp import get_nlp
from training.data.nli import NLIExample
from training.data.nli_paraphrase import paraphrase, paraphrase_rows, with_paraphrases


def _row(i: int, hypothesis: str, label: str = "supported") -> NLIExample:
    return NLIExample(f"r{i}", "fever-nli", "premise text.", hypothesis, label, f"g{i}")


@pytest.mark.parametrize(
    ("claim", "kind", "rewritten"),
    [
        (
            "The riots in Greece started on December 6.",
            "fronted",
            "On December 6, the riots in Greece started.",
        ),
        (
            "The company acquired Instagram in 2012.",
            "fronted",
            "In 2012, the company acquired Instagram.",
        ),
        (
            "Bruce Dayton founded the Dayton's department store chain.",
            "passive",
            "The Dayton's department store chain was founded by Bruce Dayton.",
        ),
        (
            "Juventus F.C. is the second oldest soccer team in Italy.",
            "inverted",
            "The second oldest soccer team in Italy is Juventus F.C.",
        ),
    ],
)
def test_each_rewrite_keeps_every_fact_word(claim, kind, rewritten):
    made = paraphrase(get_nlp()(claim))
    assert made == (kind, rewritten)
    assert sorted(rewritten.lower().replace(",", "").split()) != sorted(claim.lower().split())
    facts = {w.strip(".,").lower() for w in claim.split()} - {"the", "was", "is", "by"}
    assert facts <= {w.strip(".,").lower() for w in rewritten.split()}


@pytest.mark.parametrize(
    "claim",
    [
        "Is the tower in Paris?",  # a question
        "Georgia Institute of Technology is located in Atlanta.",  # "In Atlanta, ... is located."
        "The models predicted warming since [1988].",  # brackets could be cut
        "He founded the company.",  # a pronoun subject
        "Curie won.",  # too short to reword
    ],
)
def test_no_rewrite_where_it_would_read_wrong(claim):
    assert paraphrase(get_nlp()(claim)) is None


def test_rows_keep_label_source_and_group():
    rows = [
        _row(0, "The company acquired Instagram in 2012.", "contradicted"),
        _row(1, "Curie won."),
    ]
    made = paraphrase_rows(rows, get_nlp())
    assert len(made) == 1
    parent, child, kind = made[0]
    assert parent is rows[0] and kind == "fronted"
    assert (child.label, child.source, child.group, child.premise) == (
        "contradicted",
        "fever-nli",
        "g0",
        "premise text.",
    )
    assert child.id == "r0#para"


def test_with_paraphrases_adds_a_source_of_rewrites_only_for_the_share_asked():
    train = {"fever-nli": [_row(i, "The company acquired Instagram in 2012.") for i in range(40)]}
    none = with_paraphrases(train, 0.0)
    assert none == train
    half = with_paraphrases(train, 0.5, seed=1)
    assert set(half) == {"fever-nli", "fever-nli-paraphrase"}
    assert 10 < len(half["fever-nli-paraphrase"]) < 30
    assert {r.group for r in half["fever-nli-paraphrase"]} <= {r.group for r in train["fever-nli"]}
    assert {r.source for r in half["fever-nli-paraphrase"]} == {"fever-nli-paraphrase"}
    with pytest.raises(ValueError, match="share"):
        with_paraphrases(train, 1.5)


def test_saved_splits_get_their_train_rows_reworded_and_dev_untouched():
    from training.data.nli import NLISplits
    from training.data.nli_paraphrase import with_paraphrased_train

    train = [_row(i, "The company acquired Instagram in 2012.") for i in range(10)]
    dev = [_row(99, "The riots in Greece started on December 6.")]
    out = with_paraphrased_train(NLISplits(train, dev), 1.0)
    assert out.dev == dev and out.train[:10] == train
    assert len(out.train) == 20 and all(r.id.endswith("#para") for r in out.train[10:])
