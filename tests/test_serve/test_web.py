"""The web page at GET / in a real headless Chromium, against the real app (uvicorn) over a real
pipeline on the tiny test index: a planted error is fixed, diffed, cited; errors are shown and
the user's text is kept.

Set PURR_WEB_SCREENSHOT=/path/to.png to save a screenshot of the rendered result."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest
from llm_helpers import serve

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
    pytest.skip(
        f"needs Chromium at {CHROMIUM} and chromedriver at {CHROMEDRIVER}",
        allow_module_level=True,
    )
webdriver = pytest.importorskip(
    "selenium.webdriver", reason="needs selenium (pip install selenium)"
)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from editor.config import load_config  # noqa: E402
from editor.factory import Components  # noqa: E402
from editor.pipeline import Pipeline  # noqa: E402
from serve.app import create_app  # noqa: E402
from serve.settings import ServeSettings  # noqa: E402

# a real HTTP server, the CLI as a subprocess or a real browser
pytestmark = pytest.mark.integration

# test_revision shows the default pipeline on the tiny index fixes this planted number
PLANTED = "The Eiffel Tower is in Paris. The Eiffel Tower is 250 metres tall."
WAIT_S = 60
KEY = "web-test-key"


@pytest.fixture(scope="module")
def base_url(built_index):
    pipe = Pipeline(Components(load_config("default"), index_path=built_index, progress=False))
    app = create_app(pipe, ServeSettings(api_keys=KEY, deadline_s=120, workers=1))
    with serve(app) as url:
        deadline = time.monotonic() + 300  # the warm-up loads the models once
        while True:
            ready = httpx.get(f"{url}/readyz", timeout=10)
            if ready.status_code == 200:
                break
            reason = ready.json()["error"]["message"]
            assert "loading" in reason, reason  # a failed warm-up: no point waiting
            assert time.monotonic() < deadline, f"server not ready: {reason}"
            time.sleep(0.5)
        yield url


def _open(browser, base_url, key: str | None = KEY):
    """The page, its text box empty and the API key field holding ``key``."""
    browser.get(f"{base_url}/")
    browser.get_log("browser")  # drop what earlier pages logged
    field = browser.find_element(By.ID, "api-key")
    if field.get_attribute("value") != (key or ""):
        browser.find_element(By.CSS_SELECTOR, "details.key summary").click()
        field.clear()
        if key:
            field.send_keys(key)
    return browser.find_element(By.ID, "text")


def _submit(browser):
    button = browser.find_element(By.ID, "submit")
    assert button.text == "Check and revise"
    button.click()


def test_api_key_is_asked_for_and_remembered(browser, base_url):
    text = _open(browser, base_url, key=None)
    text.send_keys(PLANTED)
    _submit(browser)
    assert "needs an API key" in _error_shown(browser)
    browser.find_element(By.CSS_SELECTOR, "details.key summary").click()
    browser.find_element(By.ID, "api-key").send_keys("wrong")
    _submit(browser)
    assert "not valid" in _error_shown(browser)
    browser.find_element(By.ID, "api-key").clear()
    browser.find_element(By.ID, "api-key").send_keys(KEY)
    browser.refresh()  # the key is kept in localStorage
    assert browser.find_element(By.ID, "api-key").get_attribute("value") == KEY


def test_page_fixes_diffs_and_cites_a_planted_error(browser, base_url):
    text = _open(browser, base_url)
    assert browser.title.startswith("purr")
    for label in ("text", "context", "api-key"):  # every input has its label
        assert browser.find_element(By.CSS_SELECTOR, f"label[for='{label}']")
    text.send_keys(PLANTED)
    _submit(browser)
    status = WebDriverWait(browser, WAIT_S).until(
        EC.visibility_of_element_located((By.ID, "status"))
    )
    assert status.text == "edited"
    assert browser.find_element(By.ID, "submit").is_enabled()  # busy state is over

    diff = browser.find_element(By.ID, "diff")
    assert [d.text for d in diff.find_elements(By.TAG_NAME, "del")] == ["250"]
    assert [i.text for i in diff.find_elements(By.TAG_NAME, "ins")] == ["330"]
    assert diff.text == PLANTED.replace("250", "250330")  # del then ins, the rest unchanged

    revised = browser.find_element(By.ID, "revised")
    sentences = revised.find_elements(By.CSS_SELECTOR, "span.sentence")
    assert [s.text for s in sentences] == [
        "The Eiffel Tower is in Paris.",
        "The Eiffel Tower is 330 metres tall.",
    ]
    assert all(s.get_attribute("title").startswith("attribution ") for s in sentences)
    cites = revised.find_elements(By.CSS_SELECTOR, "a.cite")
    assert cites, revised.get_attribute("innerHTML")
    for cite in cites:
        anchor = cite.get_attribute("href").rsplit("#", 1)[1]
        assert anchor.startswith("ev-") and cite.text == f"[{anchor[3:]}]"
        card = browser.find_element(By.ID, anchor)
        assert "card" in card.get_attribute("class").split()
        assert card.is_displayed() and card.text.startswith(cite.text)

    cards = browser.find_elements(By.CSS_SELECTOR, "#evidence .card")
    assert [c.get_attribute("id") for c in cards] == [f"ev-{n}" for n in range(1, len(cards) + 1)]
    tower = [c for c in cards if "Eiffel Tower" in c.find_element(By.TAG_NAME, "h3").text]
    assert tower and "330 metres" in tower[0].text
    link = tower[0].find_element(By.CSS_SELECTOR, "a[href]")
    assert link.get_attribute("href") == "https://example.org/eiffel-tower"

    scores = browser.find_element(By.ID, "scores").text
    assert "→" in scores and "Preservation" in scores and "F1_AP" in scores
    assert browser.find_element(By.ID, "error").is_displayed() is False
    assert browser.find_element(By.ID, "text").get_attribute("value") == PLANTED
    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe
    if shot := os.environ.get("PURR_WEB_SCREENSHOT"):
        browser.save_screenshot(shot)


def _error_shown(browser) -> str:
    error = WebDriverWait(browser, WAIT_S).until(EC.visibility_of_element_located((By.ID, "error")))
    assert error.get_attribute("role") == "alert"
    assert browser.find_element(By.ID, "submit").is_enabled()
    assert not browser.find_element(By.ID, "result").is_displayed()
    return error.text


def test_empty_text_shows_the_server_message_and_keeps_the_input(browser, base_url):
    text = _open(browser, base_url)
    text.send_keys("   ")
    _submit(browser)
    assert _error_shown(browser).startswith("text is empty")
    assert browser.find_element(By.ID, "text").get_attribute("value") == "   "


def test_text_over_the_limit_shows_the_413_message_and_keeps_the_input(browser, base_url):
    text = _open(browser, base_url)
    long = "The Eiffel Tower is in Paris. " * 833  # 24,990 characters
    browser.execute_script("arguments[0].value = arguments[1];", text, long)
    text.send_keys(Keys.END, "End of it.")  # and some real typing at the end
    expected = long + "End of it."
    assert len(expected) == 25_000
    _submit(browser)
    message = _error_shown(browser)
    assert "25,000 characters, over the limit of 20,000" in message, message
    assert browser.find_element(By.ID, "text").get_attribute("value") == expected


CRAFTED = {
    "original": "The tower was built by <b>Thomas Edison</b>. It is tall. Hi!",
    "revised": "The tower was built by <b>Gustave Eiffel</b>. It is tall. Hi!",
    "context": None,
    "queries": ["Who built the tower?"],
    "evidence": [
        {
            "id": "e1",
            "text": "<img src=x onerror=\"document.title='pwned'\">Gustave Eiffel built it.",
            "title": "<script>document.title='pwned'</script>Tower",
            "source": "test",
            "url": "javascript:document.title='pwned'",
            "query": "Who built the tower?",
            "relevance": 0.9,
        }
    ],
    "steps": [],
    "report": {
        "evidence_ids": ["e1"],
        "sentences": [
            {
                "text": "The tower was built by <b>Gustave Eiffel</b>.",
                "decontextualized": "",
                "attribution": 0.93,
                "evidence_id": "e1",
                "applicable": True,
            },
            {
                "text": "It is tall.",
                "decontextualized": "",
                "attribution": 0.45,
                "evidence_id": "e1",
                "applicable": True,
            },
            {
                "text": "Hi!",
                "decontextualized": "",
                "attribution": None,
                "evidence_id": None,
                "applicable": False,
            },
        ],
        "attribution_before": 0.1,
        "attribution_after": 0.7,
        "preservation": 0.9,
        "f1_ap": 0.79,
    },
    "status": "edited",
    "warnings": ["<i>careful</i>"],
    "timings_ms": {"research": 1000.0, "revision": 500.0},
}


def test_response_data_is_escaped_and_rendered_as_text(browser, base_url):
    """A crafted answer (fetch stubbed in the page): markup in it stays text, a javascript:
    URL is not linked, colours and citations follow the scores, a name swap diffs as one
    replacement."""
    text = _open(browser, base_url)
    browser.execute_script(
        "const data = arguments[0];"
        "window.fetch = async () => new Response(JSON.stringify(data),"
        " {status: 200, headers: {'Content-Type': 'application/json'}});",
        CRAFTED,
    )
    text.send_keys(CRAFTED["original"])
    _submit(browser)
    WebDriverWait(browser, WAIT_S).until(EC.visibility_of_element_located((By.ID, "status")))
    result = browser.find_element(By.ID, "result")
    assert not result.find_elements(By.CSS_SELECTOR, "img, script, b, i")
    assert browser.title.startswith("purr")
    diff = browser.find_element(By.ID, "diff")
    assert [d.text for d in diff.find_elements(By.TAG_NAME, "del")] == ["Thomas Edison"]
    assert [i.text for i in diff.find_elements(By.TAG_NAME, "ins")] == ["Gustave Eiffel"]
    revised = browser.find_element(By.ID, "revised")
    assert revised.text.replace("[1]", "") == CRAFTED["revised"]
    spans = revised.find_elements(By.CSS_SELECTOR, "span.sentence")
    assert [s.get_attribute("class") for s in spans] == [
        "sentence high",
        "sentence mid",
        "sentence na",
    ]
    assert [s.get_attribute("title") for s in spans][:2] == ["attribution 0.93", "attribution 0.45"]
    assert len(revised.find_elements(By.CSS_SELECTOR, "a.cite")) == 1  # 0.45 < 0.5: no cite
    card = browser.find_element(By.ID, "ev-1")
    assert "<script>" in card.find_element(By.TAG_NAME, "h3").text
    assert "<img" in card.text and not card.find_elements(By.CSS_SELECTOR, "a")
    assert browser.find_element(By.ID, "warnings").text == "<i>careful</i>"
    assert browser.find_element(By.ID, "scores").text == (
        "Attribution 0.10 → 0.70 · Preservation 0.90 · F1_AP 0.79 · 1.5 s"
    )
