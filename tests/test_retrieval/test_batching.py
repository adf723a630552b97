"""Dynamic batching across threads on the packaged int8 reranker (a real ONNX session)."""

import threading

import numpy as np
import pytest

from retrieval import onnx_runtime
from retrieval.assets import resolve
from retrieval.batching import BatchedSession, BatchPolicy
from retrieval.rerank import OnnxCrossEncoder, calibrate

QUERY = "When was the Eiffel Tower built?"
PASSAGES = [
    "The Eiffel Tower was built from 1887 to 1889 as the entrance to the World's Fair.",
    "Marie Curie was born in Warsaw.",
    "The tower is 330 metres tall and was the tallest man-made structure for 41 years, until "
    "the Chrysler Building in New York City was finished in 1930.",
    "Paris is the capital of France.",
] * 3


@pytest.fixture(scope="module")
def folder():
    return resolve("packaged:ms-marco-minilm-l12").path


def test_concurrent_calls_share_runs_and_each_gets_its_own_scores(folder, monkeypatch):
    alone = OnnxCrossEncoder(folder, 256, batch_size=4)
    ref = [alone.logits(QUERY, PASSAGES[i : i + 4]) for i in range(0, len(PASSAGES), 4)]
    session = BatchedSession(
        onnx_runtime.session(str(folder / "model.onnx")),
        BatchPolicy(wait_ms=20, max_batch=32, slack=10),  # join everything that arrives
    )
    monkeypatch.setattr(onnx_runtime, "session", lambda *a, **k: session)
    out: list = [None] * len(ref)
    start = threading.Barrier(len(ref))

    def call(i: int) -> None:
        start.wait()
        out[i] = OnnxCrossEncoder(folder, 256, batch_size=4).logits(
            QUERY, PASSAGES[4 * i : 4 * i + 4]
        )

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(ref))]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert session.calls == len(ref) and session.runs < session.calls  # calls were joined
    for mine, theirs in zip(out, ref, strict=True):
        # int8 activations are quantised per batch: relevance moves a little, ranks hold
        assert (
            np.abs(calibrate(mine, 0.2002, -1.0659) - calibrate(theirs, 0.2002, -1.0659)).max()
            < 0.05
        )
        assert np.argmax(mine) == np.argmax(theirs)


def test_a_failing_call_fails_alone(folder):
    session = BatchedSession(
        onnx_runtime.session(str(folder / "model.onnx")), BatchPolicy(wait_ms=50, slack=10)
    )
    good = {k: np.ones((2, 8), np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")}
    bad = {**good, "input_ids": np.full((2, 8), 10**9, np.int64)}  # ids past the vocabulary
    results: dict = {}

    def run(name, feed):
        try:
            results[name] = session.run(None, feed)[0]
        except Exception as e:  # noqa: BLE001
            results[name] = e

    threads = [threading.Thread(target=run, args=x) for x in (("good", good), ("bad", bad))]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert isinstance(results["bad"], Exception)
    assert results["good"].shape == (2, 1)


def test_policy_refuses_nonsense():
    with pytest.raises(ValueError, match="max_batch"):
        BatchPolicy(max_batch=0)
