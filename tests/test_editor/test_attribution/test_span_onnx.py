"""The span judge as its 8-bit ONNX graph (``quantize: int8``): written from the network's
weights (``bert_graph``, no torch) or exported from the torch network, run by onnxruntime,
close to fp32; built once into the cache and chosen by the config."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import TINY_BERT

from editor.attribution.span_judge import SpanJudge
from editor.attribution.span_model import build_model
from editor.attribution.span_onnx import MODEL_FILE, OnnxSpanNetwork, build, cache_key
from editor.config import load_config


def _batch(lengths: list[int], seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    width = max(lengths)
    ids = torch.randint(5, 120, (len(lengths), width), generator=g)
    mask = torch.zeros_like(ids)
    types = torch.zeros_like(ids)
    for i, n in enumerate(lengths):
        mask[i, :n] = 1
        types[i, n // 2 : n] = 1
    return ids * mask, mask, types


@pytest.mark.parametrize("source", ["weights", "torch export"])
def test_the_int8_graph_answers_like_the_torch_network_at_any_batch_and_length(tmp_path, source):
    import onnx

    torch.manual_seed(0)
    model = build_model(TINY_BERT).eval()
    for p in model.parameters():  # weights far from zero: outputs that differ, row to row
        p.data.mul_(2)
    weights = {k: v.numpy() for k, v in model.state_dict().items() if "position_ids" not in k}
    given = (model.config.to_dict(), weights) if source == "weights" else model
    path = build(given, tmp_path, tmp_path / "int8")
    assert path.name == MODEL_FILE and (tmp_path / "int8" / "build.json").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporaries
    ops = [n.op_type for n in onnx.load(str(path)).graph.node]
    assert ops.count("MatMulNBits") == 2 * 6 + 2  # 6 per layer, the token and pointer heads
    net = OnnxSpanNetwork(path, threads=1)
    alone = net(*(a.numpy() for a in _batch([12], seed=1)))
    for lengths in ([12], [30, 12, 5]):  # the export's own shape was 2 x 24
        args = _batch(lengths, seed=1)
        with torch.inference_mode():
            ref = model(*args)
        got = [torch.from_numpy(o) for o in net(*(a.numpy() for a in args))]
        assert [tuple(t.shape) for t in got] == [tuple(t.shape) for t in ref]
        assert np.abs(ref[0].numpy() - got[0].numpy()).max() < 0.02 * ref[0].abs().max()
        real = args[1] == 1
        assert np.abs(ref[1][real].numpy() - got[1][real].numpy()).max() < 0.02 * ref[1].abs().max()
        # the pointer keeps its mask: nothing but [CLS] and evidence tokens can be pointed at
        allowed = (args[2] == 1) & real
        allowed[:, 0] = True
        assert (got[2][~allowed] < -1e30).all()
        assert np.allclose(
            ref[2][allowed], got[2][allowed], atol=0.02 * ref[2][allowed].abs().max()
        )
    # a row padded in a batch answers as it does alone
    args = _batch([12, 30], seed=1)  # row 0: the same 12 tokens as ``alone``, then padding
    assert np.allclose(net(*(a.numpy() for a in args))[1][0, :12], alone[1][0], atol=1e-3)


def test_the_cache_key_follows_the_weights_not_the_card_or_the_metrics(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "purr_base.json").write_text('{"shards": ["w.safetensors"]}')
    (tmp_path / "w.safetensors").write_bytes(b"a" * 10)
    (tmp_path / "README.md").write_text("card")
    first = cache_key(tmp_path)
    (tmp_path / "README.md").write_text("another card")
    (tmp_path / "metrics.json").write_text("{}")
    assert cache_key(tmp_path) == first
    (tmp_path / "w.safetensors").write_bytes(b"b" * 10)
    assert cache_key(tmp_path) != first


def test_a_bad_quantize_or_device_is_refused_with_what_to_set():
    with pytest.raises(ValueError, match="'none' or 'int8'"):
        SpanJudge(quantize="int4")
    with pytest.raises(ValueError, match="CPU only.*set quantize: none"):
        SpanJudge(quantize="int8", device="cuda")


def test_quantize_int8_reaches_every_span_judge_the_config_builds():
    from editor.attribution.factories import _purr
    from editor.factory import build_reviser, span_locator
    from retrieval.settings import Settings

    sets = ["judge.quantize=int8", "attribution.model=span", "attribution.quantize=int8"]
    cfg = load_config("span", sets)
    assert _purr(cfg.attribution, Settings()).quantize == "int8"
    judge = build_reviser(cfg, lambda: None, lambda: None).judge
    locator = span_locator(cfg.judge.quantize)
    # one judge, at int8, for deciding, editing and the citation locator (nothing loaded yet)
    assert judge.fixer.judge is locator.judge and locator.judge.quantize == "int8"
    plain = build_reviser(load_config("span"), lambda: None, lambda: None).judge
    assert plain.fixer.judge.quantize == "none" and plain.fixer is not locator


def test_the_shipped_judge_at_int8_flags_and_points_as_at_fp32(tmp_path, monkeypatch):
    """Loaded first, into an empty cache (its base converted there too, then the graph built:
    about 15 s), then the same judgements as fp32."""
    import threading

    monkeypatch.setenv("PURR_CACHE_DIR", str(tmp_path))
    int8 = SpanJudge(quantize="int8")
    loading = threading.Thread(target=int8.load, daemon=True)
    loading.start()
    loading.join(timeout=300)
    assert not loading.is_alive(), "the first int8 load hung"
    assert list((tmp_path / "models" / "span-int8").glob("*/model.onnx"))
    claim = "Cleopatra was Queen of the Ptolemaic Kingdom of Egypt from 51 to 30 AD."
    evidence = (
        "Cleopatra VII Philopator was Queen of the Ptolemaic Kingdom of Egypt from 51 to 30 BC, "
        "and its last active ruler."
    )
    items = [(claim, evidence), (evidence, evidence)]
    fp32 = SpanJudge()
    a, b = fp32.judge_batch(items), int8.judge_batch(items)
    for x, y in zip(a, b, strict=True):
        assert abs(x.scores.supported - y.scores.supported) < 0.02
        assert [(s.start, s.end, s.kind) for s in x.spans] == [
            (s.start, s.end, s.kind) for s in y.spans
        ]
    span = next(s for s in b[0].spans if s.kind == "contradicted")
    assert claim[span.start : span.end] == "AD"
    point = int8.point_batch([(claim, (span.start, span.end), evidence)])[0]
    assert point is not None and evidence[point[0] : point[1]] == "BC"
