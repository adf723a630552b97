"""Attribution models (tiny random HF models built offline), chunking, the registry, auto-AIS."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import save_tiny_bert_nli as _save_bert
from helpers import save_tiny_t5

from editor.attribution import (
    ChunkedNLI,
    EntailmentScores,
    HFSequenceClassificationNLI,
    T5TrueNLI,
    default_purr_path,
    infer_label_map,
    premise_windows,
)
from editor.attribution.base import AttributionModel, available, build, register
from editor.attribution.scoring import auto_ais
from editor.config import (
    AttributionConfig,
    ConfigError,
    PipelineConfig,
    dump_config,
    load_config,
)
from editor.types import Evidence
from retrieval.assets import AssetNotFoundError

MNLI = {0: "entailment", 1: "neutral", 2: "contradiction"}


# -- tiny models, built once per session ------------------------------------------------------


@pytest.fixture(scope="session")
def bert_dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("nli")
    dirs = {
        "mnli": _save_bert(root / "mnli", MNLI),
        "binary": _save_bert(root / "binary", {0: "entailment", 1: "not_entailment"}, seed=1),
        "single": _save_bert(root / "single", {0: "LABEL_0"}, seed=2),
    }
    # Same weights as "mnli", but the labels carry no names.
    generic = root / "generic"
    shutil.copytree(dirs["mnli"], generic)
    config = json.loads((generic / "config.json").read_text())
    config["id2label"] = {str(i): f"LABEL_{i}" for i in range(3)}
    config["label2id"] = {f"LABEL_{i}": i for i in range(3)}
    (generic / "config.json").write_text(json.dumps(config))
    dirs["generic"] = generic
    return dirs


T5_WORDS = """<pad> </s> <unk> 1 0 premise hypothesis : . , the eiffel tower was completed in 1889
paris is france marie curie a physicist won two nobel prizes she born warsaw""".split()


@pytest.fixture(scope="session")
def t5_dir(tmp_path_factory) -> Path:
    """A tiny random T5 with a word-level tokenizer trained in-process (no downloads)."""
    return save_tiny_t5(tmp_path_factory.mktemp("t5-true"), T5_WORDS)


@pytest.fixture(scope="session")
def mnli_model(bert_dirs) -> HFSequenceClassificationNLI:
    return HFSequenceClassificationNLI(str(bert_dirs["mnli"]), max_length=64, batch_size=8)


def _long_premise(n: int = 30, needle_at: int | None = None, needle: str = "") -> str:
    sentences = [f"Filler sentence number {i} says little." for i in range(n)]
    if needle_at is not None:
        sentences[needle_at] = needle
    return " ".join(sentences)


def _as_tuple(s: EntailmentScores) -> tuple[float, float, float]:
    return (s.supported, s.contradicted, s.not_supported)


def _sums_to_one(s: EntailmentScores) -> bool:
    return abs(s.supported + s.contradicted + s.not_supported - 1.0) < 1e-6


# -- label maps -------------------------------------------------------------------------------


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


# -- chunking logic, with a deterministic stub model --------------------------------------------


class TruncatingStub(ChunkedNLI):
    """One token per word; like a real model it only sees the first ``max_length`` tokens.

    SUPPORT in view -> supported, CONTRA in view -> contradicted; records every batch.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.batches: list[list[tuple[str, str]]] = []

    def _token_lengths(self, texts):
        return [len(t.split()) for t in texts]

    def _overhead(self):
        return 0

    def _pair_probabilities(self, pairs):
        import numpy as np

        self.batches.append(list(pairs))
        rows = []
        for premise, hypothesis in pairs:
            visible = premise.split()[: self.max_length - len(hypothesis.split())]
            support, contra = "SUPPORT" in visible, "CONTRA" in visible
            number = re.search(r"Record (\d+)", premise)
            if number:  # evidence "Record i ..." supports with P = i / 1000
                p = int(number.group(1)) / 1000
                rows.append((p, 0.0, 1.0 - p))
            elif support and contra:
                rows.append((0.45, 0.45, 0.1))
            elif support:
                rows.append((0.9, 0.0, 0.1))
            elif contra:
                rows.append((0.05, 0.8, 0.15))
            else:
                rows.append((0.1, 0.1, 0.8))
        return np.array(rows)


def test_short_premise_is_one_window():
    stub = TruncatingStub(max_length=40)
    s = stub.score("The tower SUPPORT was completed in 1889.", "The tower was completed in 1889.")
    assert s == EntailmentScores(0.9, 0.0, 0.1, chunks=1)


def test_long_premise_takes_the_max_over_windows():
    stub = TruncatingStub(max_length=40, overlap=1)
    premise = _long_premise(30, needle_at=25, needle="Late evidence SUPPORT for it.")
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


# -- Hugging Face sequence classification ------------------------------------------------------


def test_hf_scores_match_a_manual_forward(mnli_model, bert_dirs):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    assert isinstance(mnli_model, AttributionModel) and mnli_model.three_way
    pairs = [
        ("The Eiffel Tower was completed in 1889.", "The tower was finished in 1889."),
        ("Marie Curie was born in Warsaw.", "Marie Curie was born in Paris."),
        ("Paris is the capital of France.", "Paris is in France."),
    ]
    scores = mnli_model.score_batch(pairs)
    assert len(scores) == 3 and all(_sums_to_one(s) and s.chunks == 1 for s in scores)
    # batching (and so padding) changes a score only by float noise
    assert _as_tuple(scores[1]) == pytest.approx(_as_tuple(mnli_model.score(*pairs[1])), abs=1e-5)

    tok = AutoTokenizer.from_pretrained(bert_dirs["mnli"])
    model = AutoModelForSequenceClassification.from_pretrained(bert_dirs["mnli"]).eval()
    with torch.inference_mode():
        probs = torch.softmax(model(**tok(*pairs[0], return_tensors="pt")).logits, -1)[0]
    assert scores[0].supported == pytest.approx(float(probs[0]), abs=1e-5)  # entailment
    assert scores[0].not_supported == pytest.approx(float(probs[1]), abs=1e-5)  # neutral
    assert scores[0].contradicted == pytest.approx(float(probs[2]), abs=1e-5)  # contradiction


def test_hf_generic_labels_need_a_label_map(bert_dirs, mnli_model):
    generic = HFSequenceClassificationNLI(str(bert_dirs["generic"]), max_length=64)
    with pytest.raises(ValueError, match="pass label_map"):
        generic.score("Paris is in France.", "Paris is in Europe.")
    mapped = HFSequenceClassificationNLI(
        str(bert_dirs["generic"]),
        label_map={"LABEL_0": "supported", "LABEL_1": "not_supported", "LABEL_2": "contradicted"},
        max_length=64,
    )
    pair = ("Paris is in France.", "Paris is in Europe.")
    assert mapped.score(*pair) == mnli_model.score(*pair)  # same weights, same meaning
    assert mapped.label_map == {0: "supported", 1: "not_supported", 2: "contradicted"}


def test_hf_two_way_and_single_logit_models(bert_dirs):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    pair = ("The Eiffel Tower is in Paris.", "The tower is in France.")
    binary = HFSequenceClassificationNLI(str(bert_dirs["binary"]), max_length=64)
    s = binary.score(*pair)
    assert not binary.three_way and s.contradicted == 0.0 and _sums_to_one(s)

    single = HFSequenceClassificationNLI(str(bert_dirs["single"]), max_length=64)
    s = single.score(*pair)
    tok = AutoTokenizer.from_pretrained(bert_dirs["single"])
    model = AutoModelForSequenceClassification.from_pretrained(bert_dirs["single"]).eval()
    with torch.inference_mode():
        p = torch.sigmoid(model(**tok(*pair, return_tensors="pt")).logits[0, 0])
    assert s.supported == pytest.approx(float(p), abs=1e-5)
    assert s.contradicted == 0.0 and _sums_to_one(s)


def test_hf_long_premise_is_chunked_and_max_pooled(mnli_model):
    premise = _long_premise(30, needle_at=17, needle="The Eiffel Tower was completed in 1889.")
    hypothesis = "The Eiffel Tower was completed in 1889."
    s = mnli_model.score(premise, hypothesis)
    [windows] = mnli_model._windows([(premise, hypothesis)])
    assert s.chunks == len(windows) > 1
    singles = mnli_model.score_batch([(w, hypothesis) for w in windows])
    assert all(w.chunks == 1 for w in singles)  # each window fits the model
    assert s.supported == pytest.approx(max(w.supported for w in singles), abs=1e-6)
    assert s.contradicted == pytest.approx(max(w.contradicted for w in singles), abs=1e-6)
    assert s.not_supported == pytest.approx(min(w.not_supported for w in singles), abs=1e-6)


def test_hf_missing_model_fails_clearly():
    model = HFSequenceClassificationNLI("no-such-org/no-such-nli-model")
    with pytest.raises(AssetNotFoundError, match="cannot load NLI model"):
        model.score("a", "b")


# -- T5 TRUE ----------------------------------------------------------------------------------


def test_t5_true_reads_the_first_decoder_step(t5_dir):
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    nli = T5TrueNLI(str(t5_dir), max_length=64, batch_size=2)
    pairs = [
        ("The Eiffel Tower was completed in 1889.", "The tower was completed in 1889."),
        ("Marie Curie was born in Warsaw.", "She was born in Paris."),
        ("Paris is in France.", "Paris is in France."),
    ]
    scores = nli.score_batch(pairs)
    assert not nli.three_way
    assert all(s.contradicted == 0.0 and _sums_to_one(s) and s.chunks == 1 for s in scores)

    tok = AutoTokenizer.from_pretrained(t5_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(t5_dir).eval()
    one, zero = tok.convert_tokens_to_ids(["1", "0"])
    for (premise, hypothesis), s in zip(pairs, scores, strict=True):
        ids = tok(f"premise: {premise} hypothesis: {hypothesis}", return_tensors="pt").input_ids
        assert ids[0, -1] == tok.eos_token_id
        with torch.inference_mode():
            logits = model(
                input_ids=ids, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)
            ).logits
        p = torch.softmax(logits[0, 0, [one, zero]], -1)[0]
        assert s.supported == pytest.approx(float(p), abs=1e-5)
    assert len({round(s.supported, 6) for s in scores}) > 1  # the inputs matter


def test_t5_true_long_premise_fits_the_window(t5_dir):
    nli = T5TrueNLI(str(t5_dir), max_length=32, batch_size=4)
    nli.load()
    lengths: list[int] = []
    nli._model.register_forward_pre_hook(
        lambda _m, _a, kw: lengths.append(kw["input_ids"].shape[1]), with_kwargs=True
    )
    premise = _long_premise(20, needle_at=15, needle="The Eiffel Tower was completed in 1889.")
    s = nli.score(premise, "The Eiffel Tower was completed in 1889.")
    assert s.chunks > 1 and lengths and max(lengths) <= 32
    assert _sums_to_one(s)  # two-way: still a distribution after max-pooling


def test_t5_true_labels_must_differ(t5_dir):
    with pytest.raises(ValueError, match="cannot tell"):
        T5TrueNLI(str(t5_dir), positive="1", negative="1").score("a", "b")


# -- configuration and registry ---------------------------------------------------------------


def test_registry_builds_each_type(bert_dirs, t5_dir):
    assert {"hf", "t5-true", "purr"} <= set(available())
    hf = build(AttributionConfig(type="hf", model=str(bert_dirs["mnli"]), max_length=64))
    assert isinstance(hf, HFSequenceClassificationNLI) and hf.max_length == 64
    t5 = build(AttributionConfig(type="t5-true", model=str(t5_dir), batch_size=2))
    assert isinstance(t5, T5TrueNLI) and t5.batch_size == 2
    purr = build(AttributionConfig(type="purr", model=str(bert_dirs["mnli"])))
    assert isinstance(purr, HFSequenceClassificationNLI)
    assert _sums_to_one(purr.score("Paris is in France.", "Paris is in Europe."))
    with pytest.raises(ValueError, match="already registered"):
        register("hf", lambda cfg, settings: hf)


def test_purr_artefact_default_location_and_missing_folder(tmp_path):
    assert default_purr_path().parts[-3:] == ("editor", "models", "purr-attribution")
    assert (default_purr_path() / "adapter_config.json").is_file()  # shipped in the repo
    assert (default_purr_path() / "README.md").is_file()  # with its model card
    with pytest.raises(AssetNotFoundError, match="no config.json"):
        build(AttributionConfig(model=str(tmp_path / "missing")))


def test_attribution_config_validation_and_round_trip(tmp_path):
    assert PipelineConfig().attribution == AttributionConfig()
    assert load_config("default").attribution.type == "purr"
    with pytest.raises(ConfigError, match="attribution.model"):
        load_config("default", ["attribution.type=hf"])
    with pytest.raises(ConfigError, match="label_map"):
        load_config(
            "default",
            [
                "attribution.type=t5-true",
                "attribution.model=x/y",
                "attribution.label_map={0: supported}",
            ],
        )
    with pytest.raises(ConfigError, match="attribution.label_map"):  # canonical labels only
        load_config("default", ["attribution.label_map={0: entailment}"])
    cfg = load_config(
        "default",
        [
            "attribution.type=hf",
            "attribution.model=org/nli",
            "attribution.label_map={0: supported, LABEL_1: not_supported}",
        ],
    )
    assert cfg.attribution.label_map == {"0": "supported", "LABEL_1": "not_supported"}
    path = tmp_path / "c.yaml"
    path.write_text(dump_config(cfg))
    assert load_config(str(path)) == cfg


# -- auto-AIS ---------------------------------------------------------------------------------


class TableScorer:
    """An ``AttributionModel`` returning P(supported) from a table (default 0.0)."""

    def __init__(self, table: dict[tuple[str, str], float] | None = None):
        self.table = table or {}
        self.calls: list[list[tuple[str, str]]] = []

    def score(self, premise, hypothesis):
        return self.score_batch([(premise, hypothesis)])[0]

    def score_batch(self, pairs):
        self.calls.append(list(pairs))
        return [
            EntailmentScores(p, 0.0, 1.0 - p) for p in (self.table.get(pair, 0.0) for pair in pairs)
        ]


PASSAGE = (
    "Hello! Marie Curie was a physicist. She won two Nobel Prizes. She was born in Warsaw. "
    "Do you want to know more?"
)
EVIDENCE = [
    "Marie Curie was a Polish and naturalised-French physicist and chemist.",
    "Curie won the Nobel Prize in Physics in 1903 and in Chemistry in 1911.",
    "Curie was born in Warsaw, Poland.",
]
S1, S2, S3 = (
    "Marie Curie was a physicist.",
    "Marie Curie won two Nobel Prizes.",
    "Marie Curie was born in Warsaw.",
)
TABLE = {
    (EVIDENCE[0], S1): 0.9,
    (EVIDENCE[1], S1): 0.2,
    (EVIDENCE[1], S2): 0.7,
    (EVIDENCE[0], S3): 0.3,
    (EVIDENCE[2], S3): 0.6,
}


def test_auto_ais_exact_aggregation():
    scorer = TableScorer(TABLE)
    result = auto_ais(PASSAGE, EVIDENCE, scorer, threshold=0.65)
    rows = [
        (s.text, s.decontextualized, s.applicable, s.attribution, s.evidence_index, s.attributable)
        for s in result.sentences
    ]
    assert rows == [
        ("Hello!", "Hello!", False, None, None, None),
        (S1, S1, True, 0.9, 0, True),
        ("She won two Nobel Prizes.", S2, True, 0.7, 1, True),
        ("She was born in Warsaw.", S3, True, 0.6, 2, False),
        ("Do you want to know more?", "Do you want to know more?", False, None, None, None),
    ]
    assert result.attribution == pytest.approx((0.9 + 0.7 + 0.6) / 3)
    assert result.attributable_share == pytest.approx(2 / 3)
    assert len(result.applicable) == 3 and result.threshold == 0.65
    # one batch call; only decontextualised applicable sentences, every evidence each
    [call] = scorer.calls
    assert len(call) == 9 and {h for _, h in call} == {S1, S2, S3}
    assert {p for p, _ in call} == set(EVIDENCE)


def test_auto_ais_sentence_list_and_evidence_objects_give_the_same_result():
    objects = [
        Evidence(f"e{i}", text, "Marie Curie", "wiki", None, "q", 0.5)
        for i, text in enumerate(EVIDENCE)
    ]
    sentences = [
        "Hello!",
        "Marie Curie was a physicist.",
        "She won two Nobel Prizes.",
        "She was born in Warsaw.",
        "Do you want to know more?",
    ]
    assert auto_ais(sentences, objects, TableScorer(TABLE)) == auto_ais(
        PASSAGE, EVIDENCE, TableScorer(TABLE)
    )


def test_auto_ais_uses_the_dialogue_context():
    scorer = TableScorer()
    context = "User: Tell me about Albert Einstein.\nAssistant: Sure."
    result = auto_ais(
        "He was born in Ulm in 1879.", ["Einstein was born in Ulm."], scorer, context=context
    )
    assert result.sentences[0].decontextualized == "Albert Einstein was born in Ulm in 1879."
    assert scorer.calls[0][0][1] == "Albert Einstein was born in Ulm in 1879."


def test_auto_ais_ties_pick_the_first_evidence():
    scorer = TableScorer({("b", S1): 0.5, ("c", S1): 0.5})
    [s] = auto_ais(S1, ["a", "b", "c"], scorer).sentences
    assert s.attribution == 0.5 and s.evidence_index == 1


def test_auto_ais_without_applicable_sentences_is_none():
    scorer = TableScorer()
    result = auto_ais("Hello! How can I help you today?", EVIDENCE, scorer)
    assert result.attribution is None and result.attributable_share is None
    assert result.sentences and not any(s.applicable for s in result.sentences)
    assert scorer.calls == []  # nothing scored
    assert auto_ais("", EVIDENCE, scorer).sentences == ()
    assert auto_ais("", EVIDENCE, scorer).attribution is None


def test_auto_ais_with_no_evidence_scores_zero():
    scorer = TableScorer(TABLE)
    result = auto_ais(PASSAGE, [], scorer)
    assert scorer.calls == []
    assert result.attribution == 0.0
    applicable = result.applicable
    assert len(applicable) == 3
    assert all(s.attribution == 0.0 and s.evidence_index is None for s in applicable)
    assert not any(s.attributable for s in applicable)


def test_auto_ais_thousand_evidence_items_in_batches():
    stub = TruncatingStub(max_length=64, batch_size=16)
    evidence = [f"Record {i} says the tower opened in 1889." for i in range(1000)]
    result = auto_ais("The Eiffel Tower opened in 1889. It is in Paris.", evidence, stub)
    assert [s.evidence_index for s in result.sentences] == [999, 999]
    assert result.attribution == pytest.approx(0.999)
    assert sum(len(b) for b in stub.batches) == 2000
    assert max(len(b) for b in stub.batches) == 16


def test_auto_ais_with_a_real_model_and_thousand_evidence_items(mnli_model):
    evidence = [f"Record {i}: the Eiffel Tower was completed in {1000 + i}." for i in range(1000)]
    claim = "The Eiffel Tower was completed in 1889."
    result = auto_ais(claim, evidence, mnli_model)
    [s] = result.sentences
    direct = [x.supported for x in mnli_model.score_batch([(e, claim) for e in evidence])]
    assert s.attribution == pytest.approx(max(direct), abs=1e-6)
    assert s.evidence_index == direct.index(max(direct))
    assert result.attribution == s.attribution


def test_auto_ais_rejects_bad_threshold():
    with pytest.raises(ValueError, match="threshold"):
        auto_ais(PASSAGE, EVIDENCE, TableScorer(), threshold=1.5)
