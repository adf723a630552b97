"""The distillation pool: perturbed pairs made from the labelled ones, in their parent's group."""

from __future__ import annotations

import random

from training.data.nli import NLIExample, NLISplits, read_splits, write_splits
from training.data.nli_pool import (
    POOL_PREFIX,
    main,
    make_pool,
    perturbed,
    sentences,
    window,
    without_best_sentence,
)

PREMISE = (
    "The bridge opened in 1932. It was designed by John Bradfield. "
    "Its arch spans 503 metres. Trains have crossed it since the first day."
)


def example(i: int, label: str = "supported", source: str = "scifact") -> NLIExample:
    return NLIExample(
        id=f"r{i}",
        source=source,
        premise=PREMISE if i % 2 == 0 else "Oslo is the capital of Norway. It lies on a fjord.",
        hypothesis="The bridge was designed by John Bradfield in 1932."
        if i % 2 == 0
        else "Oslo is a capital.",
        label=label,
        group=f"doc{i}",
    )


def test_the_sentence_sharing_most_words_is_the_one_dropped():
    assert sentences(PREMISE)[1] == "It was designed by John Bradfield."
    dropped = without_best_sentence(PREMISE, "Who designed it? John Bradfield did.")
    assert "Bradfield" not in dropped and "1932" in dropped and "503" in dropped
    assert without_best_sentence("One sentence only.", "One sentence") is None
    assert without_best_sentence(PREMISE, "zebras quietly") is None  # nothing shared


def test_a_window_keeps_half_of_a_long_premise_in_order():
    part = window(PREMISE, random.Random(0))
    assert part is not None and part in PREMISE and len(sentences(part)) == 2
    assert window("Short. Premise.", random.Random(0)) is None


def test_perturbed_rows_presume_labels_from_what_changed():
    rows = {r.source: r for r in perturbed(example(0), random.Random(1))}
    neg = rows[POOL_PREFIX + "negated"]
    assert neg.hypothesis == "The bridge was not designed by John Bradfield in 1932."
    assert neg.label == "contradicted" and neg.group == "doc0"
    num = rows[POOL_PREFIX + "number"]
    assert num.label == "contradicted" and "1932" not in num.hypothesis
    assert rows[POOL_PREFIX + "dropped"].label == "not_supported"
    assert rows[POOL_PREFIX + "window"].label == "supported"
    # an unsupported parent does not become contradicted when negated
    neg_of_ns = next(perturbed(example(0, "not_supported"), random.Random(1)))
    assert neg_of_ns.label == "not_supported"


def test_the_pool_file_keeps_labelled_rows_first_and_dev_unchanged(tmp_path):
    train = [example(i) for i in range(8)]
    dev = [example(100, "contradicted")]
    write_splits(NLISplits(train, dev), tmp_path / "s.jsonl")
    main(["--splits", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "p.jsonl.xz")])
    pool = read_splits(tmp_path / "p.jsonl.xz")
    assert pool.train[:8] == train and pool.dev == dev
    extra = pool.train[8:]
    assert extra and all(r.source.startswith(POOL_PREFIX) for r in extra)
    assert {r.group for r in extra} <= {r.group for r in train}  # no new documents
    # a second pass does not perturb the perturbed rows again
    again = make_pool(pool, neighbours=0.0, progress=False)
    assert (
        len(again.train) - len(pool.train)
        == len(make_pool(NLISplits(train, dev), neighbours=0.0, progress=False).train) - 8
    )


def test_a_neighbour_pair_takes_another_premise_of_the_same_source():
    train = [example(i) for i in range(6)]
    pool = make_pool(NLISplits(train, []), neighbours=1.0, progress=False)
    near = [r for r in pool.train if r.source == POOL_PREFIX + "neighbour"]
    assert near and all(r.label == "not_supported" for r in near)
    by_id = {r.id: r for r in train}
    assert all(r.premise != by_id[r.id.split(":")[0]].premise for r in near)
