"""NLI label maps and premise windows (``editor.attribution.nli``), with a deterministic stub."""

from __future__ import annotations

import pytest
from helpers import MNLI, TruncatingStub, long_premise

from editor.attribution import (
    EntailmentScores,
    infer_label_map,
    premise_windows,
)


@pytest.mark.parametrize(
    ("id2label", "expected"),
    [
        (MNLI, {0: "supported", 1: "not_supported", 2: "contradicted"}),
        (
            {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"},
            {0: "contradicted", 1: "not_supported", 2: "supported"},
        ),
        ({0: "entailment", 1: "not_entailment"}, {0: "supported", 1: "not_supported"}),
        (
            {0: "SUPPORTS", 1: "REFUTES", 2: "NOT ENOUGH INFO"},
            {0: "supported", 1: "contradicted", 2: "not_supported"},
        ),
        (
            {0: "Supported", 1: "Partial", 2: "Not-Supported"},
            {0: "supported", 1: "not_supported", 2: "not_supported"},
        ),
    ],
)
def test_label_map_is_inferred_from_names(id2label, expected):
    assert infer_label_map(id2label) == expected


def test_label_map_override_by_name_or_index():
    generic = {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    by_name = {"LABEL_0": "supported", "LABEL_1": "neutral", "LABEL_2": "contradicted"}
    by_index = {0: "supported", "1": "not_supported", 2: "contradiction"}
    expected = {0: "supported", 1: "not_supported", 2: "contradicted"}
    assert infer_label_map(generic, by_name) == infer_label_map(generic, by_index) == expected
    # an override wins over a recognised name
    assert infer_label_map(MNLI, {"neutral": "contradicted"})[1] == "contradicted"


def test_label_map_errors_say_what_to_pass():
    with pytest.raises(ValueError, match="pass label_map") as e:
        infer_label_map({0: "LABEL_0", 1: "LABEL_1"})
    assert "LABEL_0" in str(e.value)
    with pytest.raises(ValueError, match="match no output"):
        infer_label_map(MNLI, {"LABEL_7": "supported"})
    with pytest.raises(ValueError, match="is not one of"):
        infer_label_map(MNLI, {"entailment": "maybe"})
    with pytest.raises(ValueError, match="means 'supported'"):
        infer_label_map({0: "neutral", 1: "contradiction"})
    with pytest.raises(ValueError, match="every output"):
        infer_label_map({0: "entailment", 1: "supported"})


def test_short_premise_is_one_window():
    stub = TruncatingStub(max_length=40)
    s = stub.score("The tower SUPPORT was completed in 1889.", "The tower was completed in 1889.")
    assert s == EntailmentScores(0.9, 0.0, 0.1, chunks=1)


def test_long_premise_takes_the_max_over_windows():
    stub = TruncatingStub(max_length=40, overlap=1)
    premise = long_premise(30, needle_at=25, needle="Late evidence SUPPORT for it.")
    premise = premise.replace("number 5 says", "number 5 CONTRA says")
    hypothesis = "The claim."
    # Read whole, the model would see only the first 38 words: no SUPPORT there.
    assert "SUPPORT" not in premise.split()[:38]
    s = stub.score(premise, hypothesis)
    assert s.chunks > 1
    assert s.supported == 0.9  # from the window holding sentence 25
    assert s.contradicted == 0.8  # from another window, holding sentence 5
    assert s.not_supported == 0.1  # the minimum over windows
    # Every window fits the budget and consecutive windows share one sentence.
    [windows] = stub._windows([(premise, hypothesis)])
    assert len(windows) == s.chunks and all(len(w.split()) <= 38 for w in windows)
    sentences = [w.split(". ") for w in windows]
    for before, after in zip(sentences, sentences[1:], strict=False):
        assert before[-1].rstrip(".") == after[0].rstrip(".")
    assert all(sentence in " ".join(windows) for sentence in premise.split(". "))


def test_overlong_sentence_is_cut_by_words():
    stub = TruncatingStub(max_length=40)
    premise = " ".join(["word"] * 200 + ["SUPPORT"])  # one "sentence" with no punctuation
    s = stub.score(premise, "The claim.")
    assert s.supported == 0.9 and s.chunks >= 5


def test_premise_windows_cover_every_unit():
    lengths = [5, 1, 9, 3, 3, 12, 2, 2, 2, 7]
    for budget in (4, 8, 13, 100):
        for overlap in (0, 1, 2):
            windows = premise_windows(lengths, budget, overlap)
            assert sorted({i for a, b in windows for i in range(a, b)}) == list(range(10))
            assert all(b - a == 1 or sum(lengths[a:b]) <= budget for a, b in windows)
    assert premise_windows([], 10) == []
    with pytest.raises(ValueError, match="budget"):
        premise_windows([1], 0)


def test_batches_and_duplicate_pairs():
    stub = TruncatingStub(max_length=40, batch_size=4)
    pairs = [(f"Premise {i} SUPPORT.", "Claim.") for i in range(10)] + [
        ("Premise 0 SUPPORT.", "Claim.")
    ]
    scores = stub.score_batch(pairs)
    assert len(scores) == 11 and scores[0] == scores[10]
    assert [len(b) for b in stub.batches] == [4, 4, 2]  # the duplicate is scored once
    assert stub.score_batch([]) == []
    with pytest.raises(ValueError, match="pair 0"):
        stub.score_batch([("only a premise",)])  # type: ignore[list-item]


def test_constructor_validates():
    with pytest.raises(ValueError, match="max_length"):
        TruncatingStub(max_length=8)
    with pytest.raises(ValueError, match="batch_size"):
        TruncatingStub(batch_size=0)
    with pytest.raises(ValueError, match="probability"):
        EntailmentScores(1.2, 0.0, 0.0)


def test_requests_on_many_threads_share_one_tokenizer_safely(mnli_model):
    """Padded batches and unpadded length counts at once: the tokenizer's shared padding
    state must not change under a call on another thread."""
    from concurrent.futures import ThreadPoolExecutor

    long_premise = " ".join(f"Sentence {i} says the river rose in {1800 + i}." for i in range(30))

    def work(i: int) -> int:
        for _ in range(10):
            scores = mnli_model.score_batch(
                [("It rose.", "The river rose."), (long_premise, f"It rose in {1800 + i}.")]
            )
            assert len(scores) == 2
            mnli_model._token_lengths(["a", "a much longer text than the other one"])
        return i

    with ThreadPoolExecutor(8) as pool:
        assert sorted(pool.map(work, range(8))) == list(range(8))


def test_gather_adds_one_window_of_the_scattered_sentences_a_claim_needs():
    filler = [f"Filler sentence number {i} is here." for i in range(30)]
    filler[3] = "Curie was born in Warsaw."
    filler[25] = "She moved to Paris in 1891."
    premise, claim = " ".join(filler), "Curie, born in Warsaw, moved to Paris in 1891."
    plain = TruncatingStub(max_length=40)
    [windows] = plain._windows([(premise, claim)])
    both = [w for w in windows if "Warsaw" in w and "Paris" in w]
    assert not both  # no window of consecutive sentences holds both facts
    gathering = TruncatingStub(max_length=40, gather=True)
    [gathered] = gathering._windows([(premise, claim)])
    assert gathered[:-1] == windows  # the windows as before, and one more
    assert gathered[-1] == "Curie was born in Warsaw. She moved to Paris in 1891."
    short = "Curie was born in Warsaw."  # a premise that fits is read whole, nothing added
    assert gathering._windows([(short, claim)]) == [[short]]


def test_gather_is_set_from_the_config_on_the_model_that_reads_windows():
    from editor.attribution import build
    from editor.config import AttributionConfig

    model = build(AttributionConfig(gather=True))
    assert getattr(model, "nli", model).gather is True
    assert getattr(build(AttributionConfig()), "nli", model).gather is False


def test_an_edit_scores_each_pair_once_on_all_its_stage_threads():
    from editor.scope import one_edit
    from editor.stages import StageRunner

    stub = TruncatingStub(max_length=40, batch_size=8)
    pairs = [("Premise SUPPORT.", "Claim one."), ("Premise CONTRA.", "Claim two.")]
    runner = StageRunner()

    @one_edit
    def edit() -> list:
        first = stub.score_batch(pairs)
        again = runner.run(lambda: stub.score_batch(pairs[::-1]), 10, "report")  # another thread
        inner = one_edit(lambda: stub.score_batch(pairs))()  # keeps the outer scope
        assert again[::-1] == first == inner
        return first

    edit()
    assert [len(b) for b in stub.batches] == [2]  # scored once in the whole call
    edit()
    assert [len(b) for b in stub.batches] == [2, 2]  # a new call, a new scope
    stub.score_batch(pairs)
    assert [len(b) for b in stub.batches] == [2, 2, 2]  # outside any scope: scored again
