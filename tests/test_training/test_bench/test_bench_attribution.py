"""``purr bench attribution`` on a tiny classifier: throughput per length beside the ceiling
this CPU's measured matrix-multiply rate allows (the figures themselves are not asserted)."""

from __future__ import annotations

from types import SimpleNamespace

from helpers import save_tiny_bert_nli

from training.bench.attribution import bench_attribution, encoder_flops, matmul_peak_gflops


def test_encoder_flops_grow_with_length_and_depth():
    cfg = SimpleNamespace(hidden_size=384, intermediate_size=1536, num_hidden_layers=6)
    assert round(encoder_flops(cfg, 256) / 1e9, 2) == 6.04  # all-MiniLM-L6 at 256 tokens
    assert encoder_flops(cfg, 128) < encoder_flops(cfg, 256) / 2 + 1e6  # attention is quadratic
    deeper = SimpleNamespace(hidden_size=384, intermediate_size=1536, num_hidden_layers=12)
    assert encoder_flops(deeper, 256) == 2 * encoder_flops(cfg, 256)


def test_bench_attribution_reports_the_ceiling(tmp_path):
    assert matmul_peak_gflops(runs=1, size=256) > 0
    path = save_tiny_bert_nli(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"})
    report = bench_attribution(str(path), [32], n=4, runs=1, batch_size=2)
    row = report["lengths"]["32"]
    assert report["matmul_peak_gflops"] > 0
    assert row["none"]["pairs_per_s"] > 0 and row["int8"]["pairs_per_s"] > 0
    assert row["gflop_per_pair"] >= 0 and row["pairs_per_s_at_peak"] > 0
    assert 0.0 <= row["int8_vs_fp32"]["same_decision"] <= 1.0


def test_bench_pairs_fill_exactly_the_length_so_no_model_chunks_them(tmp_path):
    from transformers import AutoTokenizer

    from editor.attribution import default_purr_path
    from training.bench.attribution import fixed_length_pairs

    tok = AutoTokenizer.from_pretrained(str(default_purr_path()))
    pairs = fixed_length_pairs(tok, 5, 128)
    for premise, hypothesis in pairs:
        n = len(tok(premise, hypothesis)["input_ids"])
        assert 120 <= n <= 128  # cut at a token boundary, whole words kept
        assert premise and premise[0].isupper()  # the premise keeps its case for the slot parse
