"""The attribution models over tiny random HF models built offline (hf, t5-true), their registry
and configuration."""

from __future__ import annotations

import pytest
from helpers import long_premise

from editor.attribution import (
    EntailmentScores,
    HFSequenceClassificationNLI,
    T5TrueNLI,
    default_purr_path,
)
from editor.attribution.base import AttributionModel, available, build, register
from editor.attribution.nli_onnx import OnnxSequenceClassificationNLI
from editor.config import (
    AttributionConfig,
    ConfigError,
    PipelineConfig,
    dump_config,
    load_config,
)
from retrieval.assets import AssetNotFoundError


def _as_tuple(s: EntailmentScores) -> tuple[float, float, float]:
    return (s.supported, s.contradicted, s.not_supported)


def _sums_to_one(s: EntailmentScores) -> bool:
    return abs(s.supported + s.contradicted + s.not_supported - 1.0) < 1e-6


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
    premise = long_premise(30, needle_at=17, needle="The Eiffel Tower was completed in 1889.")
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
    premise = long_premise(20, needle_at=15, needle="The Eiffel Tower was completed in 1889.")
    s = nli.score(premise, "The Eiffel Tower was completed in 1889.")
    assert s.chunks > 1 and lengths and max(lengths) <= 32
    assert _sums_to_one(s)  # two-way: still a distribution after max-pooling


def test_t5_true_labels_must_differ(t5_dir):
    with pytest.raises(ValueError, match="cannot tell"):
        T5TrueNLI(str(t5_dir), positive="1", negative="1").score("a", "b")


def test_registry_builds_each_type(bert_dirs, t5_dir):
    assert {"hf", "t5-true", "purr"} <= set(available())
    hf = build(AttributionConfig(type="hf", model=str(bert_dirs["mnli"]), max_length=64))
    assert isinstance(hf, OnnxSequenceClassificationNLI) and hf.max_length == 64  # a folder: ONNX
    pt = build(AttributionConfig(type="hf", model=str(bert_dirs["mnli"]), runtime="torch"))
    assert isinstance(pt, HFSequenceClassificationNLI)
    pair = ("Paris is in France.", "Paris is in Europe.")
    assert _as_tuple(hf.score(*pair)) == pytest.approx(_as_tuple(pt.score(*pair)), abs=1e-5)
    t5 = build(AttributionConfig(type="t5-true", model=str(t5_dir), batch_size=2))
    assert isinstance(t5, T5TrueNLI) and t5.batch_size == 2
    purr = build(AttributionConfig(type="purr", model=str(bert_dirs["mnli"])))
    assert isinstance(purr, OnnxSequenceClassificationNLI)
    assert _sums_to_one(purr.score("Paris is in France.", "Paris is in Europe."))
    with pytest.raises(ValueError, match="already registered"):
        register("hf", lambda cfg, settings: hf)


def test_purr_artefact_default_location_and_missing_folder(tmp_path):
    assert default_purr_path().parts[-3:] == ("editor", "models", "purr-attribution")
    shipped = default_purr_path()
    for name in ("purr_base.json", "weights-00001.safetensors", "fusion.json", "config.json"):
        assert (shipped / name).is_file(), name  # shipped in the repo
    assert all(p.stat().st_size < 20 * 1024 * 1024 for p in shipped.iterdir())
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
