"""Fixtures shared by this folder's tests."""

from __future__ import annotations

from pathlib import Path

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


CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """A headless Debian Chromium driven by selenium, one per test module (the page tests)."""
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.skip(f"needs Chromium at {CHROMIUM} and chromedriver at {CHROMEDRIVER}")
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
        "--window-size=1100,1600",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
