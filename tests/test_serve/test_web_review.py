"""The web page as a reviewer works in it, in a real headless Chromium against the real app: an
answer, its question and its document pasted; the wrong words marked by kind; a finding opened
with its evidence sentence highlighted in the document; one fix accepted (the answer and the
diff change), another rejected, the keys; the revised text copied; documents dropped as files
(.html through the page-text extraction) and bad files refused with the page still usable.

Set PURR_WEB_SCREENSHOTS=DIR to save the marked answer and an open finding as PNGs."""

from __future__ import annotations

import os
import time

import httpx
import pytest
from llm_helpers import serve

from editor.config import load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from serve.app import create_app
from serve.settings import ServeSettings

pytestmark = pytest.mark.integration

ANSWER = "The Brightline kettle comes with a one-year warranty. It boils 2 litres in four minutes."
QUESTION = "How long is the Brightline kettle's warranty?"
DOCUMENT = (
    "The Brightline kettle boils 1.7 litres in four minutes. It comes with a two-year warranty "
    "and a limescale filter."
)
DECIDING = "It comes with a two-year warranty and a limescale filter."
WAIT_S = 60


@pytest.fixture(scope="module")
def url(built_index):
    pipe = Pipeline(Components(load_config("default"), index_path=built_index, progress=False))
    with serve(create_app(pipe, ServeSettings(workers=1, deadline_s=120))) as base:
        deadline = time.monotonic() + 300
        while httpx.get(f"{base}/readyz", timeout=10).status_code != 200:
            assert time.monotonic() < deadline, "server not ready"
            time.sleep(0.5)
        yield base


def _by(how: str):
    from selenium.webdriver.common.by import By

    return getattr(By, how)


def _text_of(browser, element_id: str) -> str:
    """The element's text once it has any (a page's asynchronous write lands later)."""
    from selenium.webdriver.support.ui import WebDriverWait

    element = browser.find_element(_by("ID"), element_id)
    return WebDriverWait(browser, WAIT_S).until(lambda _: element.text)


def _wait(browser, css: str, gone: bool = False):
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    cond = EC.invisibility_of_element_located if gone else EC.visibility_of_element_located
    return WebDriverWait(browser, WAIT_S).until(cond((_by("CSS_SELECTOR"), css)))


def _check(browser, url: str) -> None:
    browser.get(f"{url}/")
    browser.find_element(_by("ID"), "text").send_keys(ANSWER)
    browser.find_element(_by("ID"), "question").send_keys(QUESTION)
    browser.find_element(_by("ID"), "doc-1").send_keys(DOCUMENT)
    browser.find_element(_by("ID"), "submit").click()
    _wait(browser, "#marked mark.finding")


def _marks(browser) -> dict[str, str]:
    """Each marked word (as shown now) and its written kind."""
    marks = browser.find_elements(_by("CSS_SELECTOR"), "#marked mark.finding")
    tags = browser.find_elements(_by("CSS_SELECTOR"), "#marked .kind-tag")
    return {m.text: t.text.lower() for m, t in zip(marks, tags, strict=True)}


def _finding(browser, words: str):
    (item,) = [
        d
        for d in browser.find_elements(_by("CSS_SELECTOR"), "details.finding-item")
        if d.find_element(_by("CSS_SELECTOR"), "summary q").text == words
    ]
    return item


def test_a_reviewer_sees_the_wrong_words_opens_a_finding_and_accepts_or_rejects(browser, url):
    _check(browser, url)
    for control in ("text", "question", "context", "doc-1", "doc-files", "api-key"):
        assert browser.find_element(_by("CSS_SELECTOR"), f"label[for='{control}']")
    # the sure fix is in (purr applied it), the unsure one waits; the kind is written, not
    # only coloured
    assert _marks(browser) == {"one-year": "contradicted", "1.7": "contradicted, fixed"}
    assert "1 waiting for you" in browser.find_element(_by("ID"), "findings-summary").text
    shots = os.environ.get("PURR_WEB_SCREENSHOTS")
    if shots:
        browser.save_screenshot(os.path.join(shots, "review-marked.png"))

    browser.find_element(_by("CSS_SELECTOR"), "#marked mark.finding").click()  # one-year
    opened = _finding(browser, "one-year")
    assert opened.get_attribute("open") is not None
    evidence = opened.find_element(_by("CSS_SELECTOR"), "blockquote.evidence-doc")
    assert evidence.text == DOCUMENT  # the whole document, its deciding sentence marked
    assert evidence.find_element(_by("CSS_SELECTOR"), "mark.evidence-sentence").text == DECIDING
    assert "Document 1" in opened.text and "unsure" in opened.text
    if shots:
        browser.save_screenshot(os.path.join(shots, "review-finding.png"))

    opened.find_element(_by("CSS_SELECTOR"), "button.accept").click()
    assert _marks(browser) == {"two-year": "contradicted, fixed", "1.7": "contradicted, fixed"}
    diff = browser.find_element(_by("ID"), "diff")
    assert [i.text for i in diff.find_elements(_by("TAG_NAME"), "ins")] == ["two", "1.7"]
    assert "Document 1" in _finding(browser, "one-year").text  # the panel stays

    item = _finding(browser, "2")
    item.find_element(_by("TAG_NAME"), "summary").click()
    item.find_element(_by("CSS_SELECTOR"), "button.reject").click()
    assert _marks(browser) == {"two-year": "contradicted, fixed", "2": "contradicted, kept"}
    assert [i.text for i in diff.find_elements(_by("TAG_NAME"), "ins")] == ["two"]
    assert "rejected" in _finding(browser, "2").text

    # keys: p / n move between findings, a accepts the one open
    body = browser.find_element(_by("TAG_NAME"), "body")
    body.send_keys("p")
    body.send_keys("n")
    assert _finding(browser, "2").get_attribute("open") is not None
    browser.switch_to.active_element.send_keys("a")
    assert _marks(browser) == {"two-year": "contradicted, fixed", "1.7": "contradicted, fixed"}
    fixed = ANSWER.replace("one-year", "two-year").replace(" 2 ", " 1.7 ")

    browser.execute_cdp_cmd(
        "Browser.grantPermissions",
        {"origin": url, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
    )
    browser.find_element(_by("ID"), "copy-plain").click()
    status = _text_of(browser, "copy-status")  # set once the clipboard write resolves
    assert status.startswith("Copied the answer without citation markers")
    pasted = browser.execute_async_script(
        "navigator.clipboard.readText().then(arguments[0], e => arguments[0]('! ' + e));"
    )
    assert pasted == fixed
    browser.find_element(_by("ID"), "copy-revised").click()
    cited = browser.execute_async_script("navigator.clipboard.readText().then(arguments[0]);")
    assert cited.replace(" [1]", "") == fixed and "[1]" in cited
    browser.find_element(_by("ID"), "accept-sure").click()  # the sure one stays in
    assert "1.7" in _marks(browser)
    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe


def test_documents_come_as_files_and_bad_files_are_refused(browser, url, tmp_path):
    page = tmp_path / "kettle.html"
    page.write_text(
        "<html><head><title>Brightline kettle</title></head><body><nav>Home | Shop | Cart</nav>"
        f"<article><h1>Brightline kettle</h1><p>{DOCUMENT}</p></article>"
        "<footer>Cookie settings</footer></body></html>",
        encoding="utf-8",
    )
    (tmp_path / "huge.txt").write_text("x" * 1_200_000, encoding="utf-8")
    (tmp_path / "photo.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    browser.get(f"{url}/")
    files = browser.find_element(_by("ID"), "doc-files")
    files.send_keys(str(page))
    note = browser.find_element(_by("ID"), "doc-note")
    _wait(browser, "#doc-note:not(:empty)")
    assert note.text == "1 document added"
    doc = browser.find_element(_by("ID"), "doc-1")
    assert DOCUMENT in doc.get_attribute("value") and "Cookie" not in doc.get_attribute("value")
    for name, says in (("huge.txt", "over the 1 MB"), ("photo.txt", "looks binary")):
        files.send_keys(str(tmp_path / name))
        time.sleep(0.5)
        assert says in note.text and "bad" in note.get_attribute("class").split()
    assert len(browser.find_elements(_by("CSS_SELECTOR"), ".doc")) == 1  # nothing was added
    browser.find_element(_by("ID"), "text").send_keys(ANSWER)  # the page is still usable
    browser.find_element(_by("ID"), "question").send_keys(QUESTION)
    browser.find_element(_by("ID"), "submit").click()
    _wait(browser, "#marked mark.finding")
    assert "one-year" in _marks(browser)
