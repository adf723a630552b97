"""FAVA-Bench's entity errors as sentence rows: the words people tagged wrong, and their fix."""

from __future__ import annotations

import json

from helpers import run_purr

from training.data.fava import fava_rows, sentence_rows

ANSWER = {
    "prompt": "Tell me about  the Eiffel Tower.",
    "subject": "eiffel tower",
    "model": "chatgpt",
    "annotated": (
        "The Eiffel Tower is in Paris.It was designed by the company of "
        "<entity><delete>Thomas Edison</delete><mark>gustave eiffel</mark></entity>. "
        "It opened in <entity><delete>1899</delete><mark>1889</mark></entity> and "
        "<invented><delete>it glows green</delete></invented>. "
        "It is <subjective><delete>beautiful</delete></subjective>."
    ),
}


def test_sentences_become_wrong_rows_with_their_fix_and_right_rows():
    rows = sentence_rows(ANSWER, 0)
    assert [r["text"] for r in rows] == [
        "The Eiffel Tower is in Paris.",  # a lost line break restored
        "It was designed by the company of Thomas Edison.",
    ]  # the sentences with two errors, or with no correction, are left out
    right, wrong = rows
    assert not right["wrong"] and right["answers"] == []
    assert wrong["wrong"] and wrong["answers"] == ["Gustave eiffel"]
    assert wrong["wrong_value"] == "Thomas Edison"
    assert wrong["gold"] == "It was designed by the company of Gustave eiffel."
    assert wrong["context"] == "Tell me about the Eiffel Tower." and "evidence" not in wrong
    assert {r["split"] for r in rows} == {right["split"]}  # split by subject


def test_only_answers_about_a_page_of_the_corpus_are_kept(tmp_path):
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps([ANSWER, {**ANSWER, "subject": "no such page"}]))
    rows = fava_rows(path, ["Eiffel Tower", "Paris"])
    assert {r["id"].rsplit("-", 1)[0] for r in rows} == {"fava-0"}


def test_purr_data_fava_on_the_real_file(dev_data, tmp_path):
    done = run_purr("data", "fava", "--out", str(tmp_path), "--data", str(dev_data))
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(x) for s in ("dev", "test") for x in (tmp_path / f"{s}.jsonl").open()]
    wrong = [r for r in rows if r["wrong"]]
    assert len(wrong) >= 10 and len(rows) > 10 * len(wrong)
    for r in wrong:
        assert r["wrong_value"] in r["text"] and r["gold"] != r["text"]
