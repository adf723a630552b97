import json

import pytest

from retrieval.corpus import CorpusError, read_corpus, read_jsonl
from retrieval.index import Index


def test_jsonl_rows_and_aliases(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text(
        '{"_id": 7, "title": "T", "contents": "Body text.", "url": "http://x"}\n\n{"id": "b", "text": "More."}\n'
    )
    docs = list(read_jsonl(p))
    assert [(d.id, d.title, d.text, d.url) for d in docs] == [
        ("7", "T", "Body text.", "http://x"),
        ("b", "", "More.", None),
    ]


@pytest.mark.parametrize(
    "content, expected",
    [
        ('{"id": "a", "text": "ok"}\n{"id": "b", "text": "broken"\n', ":2: invalid JSON"),
        ('{"id": "a", "title": "no text"}\n', ":1: field 'text' is missing"),
        ('["a", "b"]\n', ":1: expected a JSON object"),
        (
            '{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n',
            ":2: duplicate id 'a' (first on line 1)",
        ),
        ("", "contains no documents"),
    ],
)
def test_malformed_jsonl_names_file_and_line(tmp_path, content, expected):
    p = tmp_path / "bad.jsonl"
    p.write_text(content)
    with pytest.raises(CorpusError) as e:
        list(read_jsonl(p))
    assert str(p) in str(e.value) and expected in str(e.value)


def test_binary_and_non_utf8_files(tmp_path):
    b = tmp_path / "blob.txt"
    b.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    with pytest.raises(CorpusError, match="binary file"):
        list(read_corpus([b]))
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "caf\xe9"}\n')
    with pytest.raises(CorpusError, match=r"latin.jsonl:2: not valid UTF-8"):
        list(read_corpus([latin]))


def test_missing_path_and_unsupported_type(tmp_path):
    with pytest.raises(CorpusError, match="no such file"):
        list(read_corpus([tmp_path / "nope.jsonl"]))
    pdf = tmp_path / "x.pdf"
    pdf.write_text("x")
    with pytest.raises(CorpusError, match="unsupported file type '.pdf'"):
        list(read_corpus([pdf]))


def test_failed_build_leaves_nothing_behind(tmp_path, resources):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x", "text": "fine"}) + "\n{not json}\n")
    out = tmp_path / "idx"
    with pytest.raises(CorpusError, match="bad.jsonl:2"):
        Index.build(read_corpus([resources / "tiny_corpus.jsonl", bad]), out, progress=False)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [bad]  # no temporary folders left


def test_folder_reads_all_supported_files(resources):
    docs = {d.id: d for d in read_corpus([resources / "docs"])}
    assert set(docs) == {"guide.md", "notes.html", "honey.txt"}
    assert docs["honey.txt"].title == "honey"
