"""``purr serve`` shares the cores between its workers unless ``PURR_THREADS`` says otherwise."""

from __future__ import annotations

import os

import pytest

from serve.cli import common
from serve.cli.common import share_cores


@pytest.fixture(autouse=True)
def _own_process(monkeypatch):
    """PURR_THREADS restored after each test, and this process's torch threads left alone."""
    monkeypatch.setenv("PURR_THREADS", "0")  # 0: share (recorded, so it is restored)
    monkeypatch.setattr(common, "limit_threads", lambda: None)


@pytest.mark.parametrize(("cores", "workers", "threads"), [(2, 2, 1), (8, 2, 4), (2, 4, 1)])
def test_the_workers_share_the_cores(monkeypatch, cores, workers, threads):
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(cores)))
    assert share_cores(workers) == threads
    assert os.environ["PURR_THREADS"] == str(threads)  # what every ONNX session reads


def test_a_set_thread_count_stands(monkeypatch):
    monkeypatch.setenv("PURR_THREADS", "3")
    assert share_cores(2) == 3
