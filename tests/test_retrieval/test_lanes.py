"""The cheap lane's gate (``retrieval.lanes``) on the packaged int8 reranker (a real ONNX
session): a call outside an urgent request waits for it, and every call gets its own scores."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from retrieval import onnx_runtime
from retrieval.assets import resolve
from retrieval.lanes import Lanes, PrioritySession
from retrieval.rerank import OnnxCrossEncoder

QUERY = "When was the Eiffel Tower built?"
PASSAGES = [
    "The Eiffel Tower was built from 1887 to 1889 as the entrance to the World's Fair.",
    "Paris is the capital of France.",
]


@pytest.fixture(scope="module")
def folder():
    return resolve("packaged:ms-marco-minilm-l12").path


def _gated(folder, monkeypatch, cap_s: float):
    """The reranker's scores without a gate, a gate, and the reranker behind it (``cap_s``)."""
    ref = OnnxCrossEncoder(folder, 256).logits(QUERY, PASSAGES)
    lanes = Lanes()
    gated = PrioritySession(onnx_runtime.session(str(folder / "model.onnx")), cap_s, lanes)
    monkeypatch.setattr(onnx_runtime, "session", lambda *a, **k: gated)
    return ref, lanes, OnnxCrossEncoder(folder, 256)


def test_an_edits_model_call_waits_for_the_urgent_request_in_flight(folder, monkeypatch):
    ref, lanes, model = _gated(folder, monkeypatch, 60.0)
    release = threading.Event()
    order: list[str] = []

    def cheap() -> np.ndarray:
        with lanes.urgent():
            scores = model.logits(QUERY, PASSAGES)  # its own calls never wait
            order.append("urgent ran")
            release.wait(60)
            order.append("urgent done")
            return scores

    def edit() -> np.ndarray:
        scores = model.logits(QUERY, PASSAGES)
        order.append("edit ran")
        return scores

    def until(done) -> None:
        for _ in range(6000):  # a minute at most: a failing request ends the wait
            if done() or first.done():
                return
            threading.Event().wait(0.01)

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(cheap)
        until(lambda: "urgent ran" in order)
        second = pool.submit(edit)
        until(second.running)
        assert not first.done(), first.exception()
        release.set()
        urgent, other = first.result(), second.result()
    assert order == ["urgent ran", "urgent done", "edit ran"]
    np.testing.assert_allclose(urgent, ref, atol=1e-5)
    np.testing.assert_allclose(other, ref, atol=1e-5)


def test_a_call_waits_no_longer_than_its_cap(folder, monkeypatch):
    ref, lanes, model = _gated(folder, monkeypatch, 0.0)
    with ThreadPoolExecutor(1) as other, lanes.urgent():  # a cap of 0: never held back
        scores = other.submit(model.logits, QUERY, PASSAGES).result()
    np.testing.assert_allclose(scores, ref, atol=1e-5)
