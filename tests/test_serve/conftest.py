"""Fixtures shared by this folder's tests."""

from __future__ import annotations

import pytest

from editor.attribution.base import build as build_attribution
from editor.config import AttributionConfig, load_config
from editor.factory import Components
from editor.pipeline import Pipeline


@pytest.fixture(scope="session")
def pipeline(built_index) -> Pipeline:
    """The default pipeline (real models) over the test index, shared by a worker's tests (a
    test module may define its own ``pipeline``)."""
    nli = build_attribution(AttributionConfig())
    cfg = load_config("default")
    return Pipeline(Components(cfg, index_path=built_index, progress=False), attribution=nli)
