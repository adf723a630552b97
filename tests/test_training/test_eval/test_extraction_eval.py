"""``purr eval extraction`` on real saved pages against the hand check."""

from __future__ import annotations

import json
import shutil

from helpers import run_purr

from training.eval.extraction import CHECK, kept, load_check, normalise

SOME = ["en.wikipedia.org.tsne.html", "reuters.com.parasite.html", "lemire.me.json.html"]


def test_the_hand_check_covers_twenty_pages_with_verbatim_snippets():
    check = load_check(CHECK)
    assert len(check) == 20
    for name, page in check.items():
        assert len(page["main"]) == 6 and 3 <= len(page["boilerplate"]) <= 6, name
        assert not set(map(normalise, page["main"])) & set(map(normalise, page["boilerplate"]))


def test_a_snippet_counts_by_its_words_not_its_spacing():
    text = "The tower ( in Paris ) opened in 1889 , for the fair.\nHome About"
    assert kept("The tower (in Paris) opened in 1889, for the fair.", text)
    assert not kept("The tower opened in 1887 after a long delay", text)
    assert kept("Home About", text) and not kept("About Home", text)


def test_eval_extraction_keeps_the_article_and_drops_the_furniture(dev_data, tmp_path):
    pages = tmp_path / "pages"
    pages.mkdir()
    for name in [*SOME, "stackoverflow.com.rust.html"]:  # the last one is not hand-checked
        shutil.copy(dev_data / "web" / "pages" / name, pages / name)
    out = tmp_path / "out"
    proc = run_purr(
        "eval", "extraction", "--pages", str(pages), "--out", str(out), "--repeats", "1"
    )
    assert proc.returncode == 0, proc.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["pages"] == 4 and metrics["checked_pages"] == 3
    ours, everything = metrics["methods"]["precision"], metrics["methods"]["all-text"]
    assert ours["main_kept"] >= 0.9 and ours["boilerplate_dropped"] >= 0.9
    assert everything["main_kept"] == 1.0 and everything["boilerplate_dropped"] == 0.0
    assert ours["median_share_of_visible"] < 0.8 and ours["pages_empty"] == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 4 * 4 and (out / "extraction.png").stat().st_size > 10_000


def test_eval_extraction_says_what_is_missing(tmp_path):
    proc = run_purr("eval", "extraction", "--pages", str(tmp_path / "nope"), "--out", str(tmp_path))
    assert proc.returncode == 2 and "no such folder" in proc.stderr and "--pages" in proc.stderr
    (tmp_path / "bad.json").write_text("[1, 2]")
    proc = run_purr(
        "eval",
        "extraction",
        "--pages",
        str(tmp_path),
        "--check",
        str(tmp_path / "bad.json"),
        "--out",
        str(tmp_path / "o"),
    )
    assert proc.returncode == 2 and "bad.json" in proc.stderr
