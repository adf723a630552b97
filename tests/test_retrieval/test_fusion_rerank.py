import numpy as np
import pytest

from retrieval.config import RerankConfig
from retrieval.fusion import reciprocal_rank_fusion, weighted_score_fusion
from retrieval.rerank import build_reranker, calibrate, fit_platt
from retrieval.types import Hit, Snippet


def test_rrf_rewards_agreement():
    fused = reciprocal_rank_fusion([[10, 20, 30], [40, 20, 50]], k=60)
    assert fused[0][0] == 20  # ranked 2nd by both beats 1st by one list only
    assert {i for i, _ in fused} == {10, 20, 30, 40, 50}


def test_weighted_fusion_weights_matter():
    a = ([1, 2], [10.0, 0.0])
    b = ([2, 1], [1.0, 0.0])
    assert weighted_score_fusion([a, b], [0.9, 0.1])[0][0] == 1
    assert weighted_score_fusion([a, b], [0.1, 0.9])[0][0] == 2
    with pytest.raises(ValueError, match="one weight per list"):
        weighted_score_fusion([a, b], [1.0])


def test_calibration_is_monotonic_and_bounded():
    z = np.linspace(-20, 20, 41)
    p = calibrate(z, 0.5, -1.0)
    assert np.all((p >= 0) & (p <= 1)) and np.all(np.diff(p) > 0)
    logits = np.concatenate(
        [np.random.default_rng(0).normal(-3, 1, 200), np.random.default_rng(1).normal(3, 1, 200)]
    )
    labels = np.array([0] * 200 + [1] * 200)
    s, b = fit_platt(logits, labels)
    probs = calibrate(logits, s, b)
    assert probs[:200].mean() < 0.15 and probs[200:].mean() > 0.85


def _hit(i, text):
    return Hit(Snippet(f"d{i}#0", f"d{i}", "", text, 0, len(text)), 1.0 / (i + 1), i, "bm25")


@pytest.mark.parametrize("model", ["packaged:ms-marco-minilm-l12", "packaged:purr-reranker-l6"])
def test_packaged_cross_encoder_ranks_the_answer_first(model):
    rr = build_reranker(RerankConfig(model=model))
    hits = [
        _hit(0, "Paris is the capital and most populous city of France."),
        _hit(
            1,
            "The Eiffel Tower was designed by the company of engineer Gustave Eiffel and built from 1887 to 1889.",
        ),
        _hit(2, "Bananas are rich in potassium."),
    ]
    ranked = rr.rerank("Who designed the Eiffel Tower?", hits, top_k=2)
    assert len(ranked) == 2 and ranked[0].snippet.doc_id == "d1"
    assert (
        ranked[0].relevance
        > 0.5
        > rr.relevance("Who designed the Eiffel Tower?", [hits[2].snippet.text])[0]
    )
    assert ranked[0].retriever == "bm25+rerank" and "rerank" in ranked[0].scores


TEXTS = [
    "Paris is the capital and most populous city of France.",
    "The Eiffel Tower was designed by the company of engineer Gustave Eiffel.",
    "Bananas are rich in potassium.",
    "Marie Curie won the Nobel Prize in Chemistry in 1911.",
]
QUERIES = ["Who designed the Eiffel Tower?", "When did Curie win the chemistry prize?", "x"]


def test_rerank_batch_scores_every_query_in_one_call_like_one_call_each():
    rr = build_reranker(RerankConfig())
    texts, queries = TEXTS, QUERIES
    hits = [
        [_hit(i, t) for i, t in enumerate(texts)],
        [_hit(i, t) for i, t in enumerate(texts)],
        [],
    ]
    batched = rr.rerank_batch(queries, hits)
    alone = [rr.rerank(q, h) for q, h in zip(queries, hits, strict=True)]
    assert [len(r) for r in batched] == [4, 4, 0]
    assert [r[0].snippet.doc_id for r in batched[:2]] == ["d1", "d3"]
    for b, a in zip(batched, alone, strict=True):
        assert [h.snippet.id for h in b] == [h.snippet.id for h in a]
        # int8 activations are quantised per batch: scores move a little with the batch
        assert np.allclose([h.relevance for h in b], [h.relevance for h in a], atol=0.05)


def test_hf_cross_encoder_by_path(tmp_path):
    """Any HF sequence-classification cross-encoder loads by path (a tiny random BERT here)."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    from retrieval.assets import packaged_path

    tok = BertTokenizerFast(vocab_file=str(packaged_path("ms-marco-minilm-l12") / "vocab.txt"))
    model = BertForSequenceClassification(
        BertConfig(
            vocab_size=tok.vocab_size,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            num_labels=1,
        )
    )
    model.save_pretrained(tmp_path / "ce")
    tok.save_pretrained(tmp_path / "ce")
    rr = build_reranker(RerankConfig(model=str(tmp_path / "ce")))
    rel = rr.relevance("query", ["one passage", "another passage here", "third"])
    assert rel.shape == (3,) and np.all((rel > 0) & (rel < 1))


def test_stop_at_scores_only_the_probe_when_its_best_is_clear_and_sentences_can_be_trimmed():
    texts = [
        "The Eiffel Tower was designed by the company of engineer Gustave Eiffel.",
        "Paris is the capital and most populous city of France.",
        "Bananas are rich in potassium.",
        "Marie Curie won the Nobel Prize in Chemistry in 1911.",
    ]
    hits = [[_hit(i, t) for i, t in enumerate(texts)]] * 2
    queries = ["Who designed the Eiffel Tower?", "Which fruit is rich in potassium?"]
    seen: list = []
    rr = build_reranker(RerankConfig(stop_at=0.5, probe=1))
    original = rr.scorer.pair_logits
    rr.scorer.pair_logits = lambda pairs: seen.append(pairs) or original(pairs)
    ranked = rr.rerank_batch(queries, hits)
    # the first query's probe (the designer's window) is clear: its other windows are never
    # scored; the second's is not, so all of its windows are
    assert [len(r) for r in ranked] == [1, 4]
    assert sum(len(p) for p in seen) == 2 + 3
    assert ranked[0][0].snippet.doc_id == "d0" and ranked[1][0].snippet.doc_id == "d2"
    trim = build_reranker(RerankConfig(matching_sentences=True))
    window = "Bananas are yellow. The Eiffel Tower was designed by Gustave Eiffel's company."
    (hit,) = trim.rerank("Who designed the Eiffel Tower?", [_hit(0, window)])
    assert hit.snippet.text == window  # the hit keeps its whole window
    (scored,) = trim._relevance(
        trim.scorer.pair_logits, ["Who designed the Eiffel Tower?"], [[hit]]
    )
    alone = trim.relevance("Who designed the Eiffel Tower?", [window.split(". ")[1]])
    assert abs(float(scored[0]) - float(alone[0])) < 0.05


def test_a_prefilter_lets_the_main_model_score_only_each_querys_best_hits():
    texts, queries = TEXTS, QUERIES
    hits = [[_hit(i, t) for i, t in enumerate(texts)]] * 2 + [[]]
    cfg = RerankConfig(prefilter="packaged:purr-reranker-l6", prefilter_keep=2)
    rr = build_reranker(cfg)
    seen: list = []
    original = rr.scorer.pair_logits
    rr.scorer.pair_logits = lambda pairs: seen.append(pairs) or original(pairs)
    ranked = rr.rerank_batch(queries, hits)
    assert [len(r) for r in ranked] == [4, 4, 0]
    assert sum(len(p) for p in seen) == 2 + 2  # the main model read two hits a query
    assert [r[0].snippet.doc_id for r in ranked[:2]] == ["d1", "d3"]
    main = {p for call in seen for p in call}
    for q, r in zip(queries, ranked, strict=False):
        head = [h for h in r if (q, h.snippet.text) in main]
        assert r[: len(head)] == head  # the main model's hits come first
        tail = r[len(head) :]
        assert all(h.retriever.endswith("+rerank") and "rerank" in h.scores for h in head)
        assert all(h.retriever.endswith("+prefilter") and "prefilter" in h.scores for h in tail)
        assert [h.score for h in r] == sorted((h.score for h in r), reverse=True)
    # keeping every hit, the cascade is the main model's own ranking
    every = build_reranker(cfg.model_copy(update={"prefilter_keep": 4})).rerank_batch(queries, hits)
    plain = build_reranker(RerankConfig()).rerank_batch(queries, hits)
    assert [[h.snippet.id for h in r] for r in every] == [[h.snippet.id for h in r] for r in plain]
    with pytest.raises(ValueError, match="stop_at"):
        RerankConfig(prefilter="packaged:purr-reranker-l6", stop_at=0.8)


class _Overlap:
    """A scorer with ``logits`` alone (no ``pair_logits``, as an HF model): the words a
    passage shares with the query, times ``scale``."""

    def __init__(self, scale):
        self.scale, self.calls = scale, []

    def logits(self, query, passages):
        self.calls.append((query, list(passages)))
        words = set(query.lower().split())
        return np.array([self.scale * len(words & set(p.lower().split())) for p in passages])


def test_a_cascade_of_scorers_without_pair_logits_scores_each_query_in_one_call():
    from retrieval.rerank import Reranker

    main, cheap = _Overlap(1.0), _Overlap(1.0)
    cfg = RerankConfig(prefilter="any", prefilter_keep=1, fuse_weight=0.0)
    rr = Reranker(main, cfg, prefilter=cheap)
    hits = [[_hit(i, t) for i, t in enumerate(TEXTS)]] * 2
    queries = ["who designed the eiffel tower?", "which fruit is rich in potassium?"]
    ranked = rr.rerank_batch(queries, hits)
    assert [q for q, _ in cheap.calls] == queries  # one call a query, every hit
    assert [len(ps) for _, ps in cheap.calls] == [4, 4]
    assert [len(ps) for _, ps in main.calls] == [1, 1]  # the main model: each query's best
    assert [r[0].snippet.doc_id for r in ranked] == ["d1", "d2"]
    assert [h.retriever.rsplit("+", 1)[1] for h in ranked[0]] == ["rerank"] + ["prefilter"] * 3


def test_the_prefilters_hits_stay_below_the_main_models_whatever_their_relevance():
    from retrieval.rerank import Reranker

    # the prefilter's scale is ten times the main model's: its hits would outrank the head
    cfg = RerankConfig(prefilter="any", prefilter_keep=1, fuse_weight=0.0)
    rr = Reranker(_Overlap(0.1), cfg, prefilter=_Overlap(1.0))
    hits = [[_hit(i, t) for i, t in enumerate(TEXTS)]]
    (ranked,) = rr.rerank_batch(["the eiffel tower was designed by paris"], hits)
    head, tail = ranked[0], ranked[1:]
    assert head.retriever.endswith("+rerank") and all("+prefilter" in h.retriever for h in tail)
    assert all(h.score < head.score for h in tail) and all(h.score >= 0 for h in tail)
    assert any(h.relevance > head.relevance for h in tail)  # their own relevance, kept
    (top,) = rr.rerank_batch(["the eiffel tower was designed by paris"], hits, top_k=1)
    assert [h.snippet.id for h in top] == [head.snippet.id]
    none = rr._ranked(hits[0], np.full(4, 0.5), None, head=np.zeros(0, dtype=int))
    assert all(h.retriever.endswith("+prefilter") for h in none)
