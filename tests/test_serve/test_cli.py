"""The real `purr` command, run as a subprocess like a user would."""

import json

import pytest
from helpers import run_purr as purr

# a real HTTP server, the CLI as a subprocess or a real browser
pytestmark = pytest.mark.integration


def _bm25_search(query: str, index) -> dict:
    """What ``purr search QUERY --mode bm25 --no-rerank --json`` prints, parsed."""
    r = purr("search", query, "--index", str(index), "--mode", "bm25", "--no-rerank", "--json")
    return json.loads(r.stdout)


def test_index_then_search_json(tmp_path, resources):
    out = tmp_path / "ix"
    r = purr(
        "index",
        str(resources / "tiny_corpus.jsonl"),
        "--out",
        str(out),
        "--set",
        "index.chunking.window=3",
    )
    assert r.returncode == 0, r.stderr
    assert "indexed 8 documents" in r.stdout
    assert json.loads((out / "config.json").read_text())["config"]["chunking"]["window"] == 3
    r = purr("search", "Who walked on the Moon first?", "--index", str(out), "-k", "2", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["reranked"] is True and len(data["hits"]) == 2
    assert data["hits"][0]["doc_id"] == "moon-landing" and 0 <= data["hits"][0]["relevance"] <= 1
    data = _bm25_search("Who walked on the Moon first?", out)
    assert (
        data["reranked"] is False
        and data["mode"] == "bm25"
        and data["hits"][0]["relevance"] is None
    )


def test_index_append_and_overwrite_flags(tmp_path, resources):
    out = tmp_path / "ix"
    assert purr("index", str(resources / "docs"), "--out", str(out), "--no-dense").returncode == 0
    r = purr("index", str(resources / "docs"), "--out", str(out))
    assert r.returncode == 2 and "--overwrite" in r.stderr
    r = purr("index", str(resources / "tiny_corpus.jsonl"), "--out", str(out), "--append")
    assert r.returncode == 0 and "appended" in r.stdout, r.stderr
    assert _bm25_search("Amazon river length", out)["hits"][0]["doc_id"] == "amazon-river"


def test_human_output_and_research(built_index):
    r = purr("search", "Great Wall length", "--index", str(built_index), "-k", "1")
    assert r.returncode == 0 and "Great Wall of China" in r.stdout
    r = purr(
        "research",
        "The Eiffel Tower is in Berlin. It was built from 1887 to 1889.",
        "--index",
        str(built_index),
        "--json",
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert len(data["queries"]) == 2
    assert data["evidence"] and all(e["title"] == "Eiffel Tower" for e in data["evidence"])
    assert set(data["timings_ms"]) >= {"querygen", "retrieval", "rerank", "total"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["search", "", "--index", "{index}"], "query is empty"),
        (["search", "x", "--index", "{tmp}/missing"], "purr index CORPUS.jsonl --out"),
        (["search", "x", "--index", "{index}", "--set", "search.mode=sideways"], "search.mode"),
        (
            ["search", "x", "--index", "{index}", "--config", "nosuchpreset"],
            "no config preset 'nosuchpreset'",
        ),
        (["search", "x", "--index", "{index}", "-k", "0"], "-k must be >= 1"),
        (["index", "{tmp}/nothing.jsonl", "--out", "{tmp}/o"], "no such file"),
        (["research", "   ", "--index", "{index}"], "text is empty"),
    ],
)
def test_user_errors_exit_2_with_a_clear_message(tmp_path, built_index, args, message):
    args = [a.format(index=built_index, tmp=tmp_path) for a in args]
    r = purr(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr and "Traceback" not in r.stderr


def test_bad_corpus_names_line_and_writes_nothing(tmp_path):
    bad = tmp_path / "c.jsonl"
    bad.write_text('{"id": "1", "text": "ok"}\n{"id": "2", "text": 5}\n')
    r = purr("index", str(bad), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "c.jsonl:2" in r.stderr and "'text'" in r.stderr
    assert not (tmp_path / "o").exists()


def test_huge_query_is_truncated_not_refused(built_index):
    r = purr(
        "search",
        "Mount Everest elevation " * 1000,
        "--index",
        str(built_index),
        "-k",
        "1",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hits"][0]["doc_id"] == "mount-everest"
    assert "only the first 10000" in r.stderr


def test_config_command_shows_overrides():
    r = purr("config", "--set", "research.k_documents=3", "--set", "search.fusion=weighted")
    assert r.returncode == 0
    assert "k_documents: 3" in r.stdout and "fusion: weighted" in r.stdout
