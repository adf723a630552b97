from retrieval import sentences
from retrieval.chunking import chunk, windows
from retrieval.config import ChunkingConfig
from retrieval.corpus import read_corpus
from retrieval.types import Document


def test_sentence_spans_keep_abbreviations_and_decimals():
    text = "The U.S. economy grew 2.5 percent in 2019. Dr. Smith disagreed. See e.g. Fig. 3 for details!"
    assert sentences.split(text) == [
        "The U.S. economy grew 2.5 percent in 2019.",
        "Dr. Smith disagreed.",
        "See e.g. Fig. 3 for details!",
    ]


def test_windows_four_sentences_stride_one_cover_every_sentence():
    text = " ".join(f"Sentence number {i} is here." for i in range(7))
    snippets = list(chunk(Document("d", "T", text), ChunkingConfig()))
    assert len(snippets) == 4  # 7 sentences, window 4, stride 1
    for s in snippets:
        assert text[s.start : s.end] == s.text
        assert len(sentences.split(s.text)) == 4
    assert snippets[0].text.startswith("Sentence number 0")
    assert snippets[-1].text.endswith("number 6 is here.")
    assert [s.id for s in snippets] == ["d#0", "d#1", "d#2", "d#3"]


def test_windows_tail_covered_with_larger_stride():
    assert windows(10, 4, 3) == [(0, 4), (3, 7), (6, 10)]
    assert windows(9, 4, 3)[-1] == (5, 9)


def test_short_document_is_one_snippet():
    snippets = list(chunk(Document("d", "T", "Only one sentence."), ChunkingConfig()))
    assert [s.text for s in snippets] == ["Only one sentence."]


def test_snippets_never_cross_a_markdown_heading(resources):
    (doc,) = read_corpus([resources / "docs" / "guide.md"])
    assert doc.title == "Tea guide"
    snippets = list(chunk(doc, ChunkingConfig()))
    assert len(snippets) == 2
    assert "Black tea" not in snippets[0].text and "Green tea" in snippets[0].text
    assert snippets[1].text.startswith("Black tea is fully oxidised")
    for s in snippets:
        assert doc.text[s.start : s.end] == s.text
        assert "#" not in s.text


def test_html_sections_title_and_scripts(resources):
    (doc,) = read_corpus([resources / "docs" / "notes.html"])
    assert doc.title == "Coffee notes"
    assert "var x" not in doc.text and "color:red" not in doc.text
    snippets = list(chunk(doc, ChunkingConfig()))
    assert len(snippets) == 2
    assert "Yemen" in snippets[1].text and "Yemen" not in snippets[0].text


def test_max_chars_cuts_at_sentence_boundary():
    text = " ".join(["A fairly long sentence with many words in it."] * 20)
    snippets = list(chunk(Document("d", "", text), ChunkingConfig(max_chars=120)))
    assert all(len(s.text) <= 120 for s in snippets)
    assert all(s.text.endswith(".") for s in snippets)
