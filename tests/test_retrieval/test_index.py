import json

import numpy as np
import pytest

from retrieval.config import IndexConfig, SearchConfig
from retrieval.corpus import read_corpus
from retrieval.index import Index, IndexNotFoundError
from retrieval.types import Document

QUESTION = "In which year did Marie Curie win the Nobel Prize in Chemistry?"


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_each_mode_finds_the_right_document(tiny_index, mode):
    hits = tiny_index.search(QUESTION, 3, SearchConfig(mode=mode))
    assert hits[0].snippet.doc_id == "marie-curie"
    assert [h.rank for h in hits] == [0, 1, 2]
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:], strict=False))
    assert "1911" in " ".join(h.snippet.text for h in hits)


def test_dense_finds_paraphrase_bm25_cannot(tiny_index):
    query = "tallest peak on the planet"  # no word shared with the Everest article
    assert (
        tiny_index.search(query, 1, SearchConfig(mode="bm25")) == []
        or tiny_index.search(query, 1, SearchConfig(mode="bm25"))[0].snippet.doc_id
        != "mount-everest"
    )
    assert (
        tiny_index.search(query, 1, SearchConfig(mode="dense"))[0].snippet.doc_id == "mount-everest"
    )
    assert (
        tiny_index.search(query, 1, SearchConfig(mode="hybrid"))[0].snippet.doc_id
        == "mount-everest"
    )


def test_hybrid_hit_carries_both_scores_and_weighted_fusion(tiny_index):
    hit = tiny_index.search(QUESTION, 1, SearchConfig(mode="hybrid"))[0]
    assert set(hit.scores) == {"bm25", "dense"}
    w = tiny_index.search(
        QUESTION, 3, SearchConfig(mode="hybrid", fusion="weighted", dense_weight=0.3)
    )
    assert w[0].snippet.doc_id == "marie-curie" and 0 < w[0].score <= 1.0


def test_empty_and_huge_queries(tiny_index):
    assert tiny_index.search("", 5, SearchConfig(mode="hybrid")) == []
    assert tiny_index.search("   ", 5, SearchConfig(mode="bm25")) == []
    huge = ("Gustave Eiffel built a lattice tower in Paris. " * 250)[:10_000]
    hits = tiny_index.search(huge, 3, SearchConfig(mode="hybrid"))
    assert hits[0].snippet.doc_id == "eiffel-tower"
    with pytest.raises(ValueError, match="k must be >= 1"):
        tiny_index.search("x", 0)


def test_saved_config_and_reopen_memory_mapped(built_index):
    meta = json.loads((built_index / "config.json").read_text())
    assert IndexConfig.model_validate(meta["config"]).chunking.window == 4
    assert (
        meta["pipeline"]["search"]["mode"] == "hybrid"
    )  # the resolved pipeline config is saved too
    assert meta["stats"]["passages"] > meta["stats"]["documents"] > 0
    ix = Index.open(built_index, mmap=True)
    assert isinstance(ix.store.offsets, np.memmap)
    assert ix.dense is not None and ix.dense.size == len(ix)
    assert ix.search(QUESTION, 1)[0].snippet.doc_id == "marie-curie"


def test_document_snippets_returns_all_windows(tiny_index):
    hit = tiny_index.search(QUESTION, 1, SearchConfig(mode="bm25"))[0]
    windows = tiny_index.document_snippets(hit)
    assert {s.doc_id for s in windows} == {"marie-curie"}
    assert [s.id for s in windows] == [f"marie-curie#{i}" for i in range(len(windows))]
    assert len(windows) == 3  # 6 sentences -> 3 windows of 4


def test_append_adds_new_documents_and_skips_known(tiny_index_copy, resources):
    ix = Index.open(tiny_index_copy)
    before = len(ix)
    new = [
        Document(
            "kiwi",
            "Kiwi",
            "The kiwi is a flightless bird endemic to New Zealand. It lays very large eggs.",
        )
    ]
    added = ix.append(list(read_corpus([resources / "tiny_corpus.jsonl"])) + new, progress=False)
    assert added == 1 and len(ix) == before + 1
    for mode in ("bm25", "dense", "hybrid"):
        assert (
            ix.search("flightless bird New Zealand", 1, SearchConfig(mode=mode))[0].snippet.doc_id
            == "kiwi"
        )
    reopened = Index.open(tiny_index_copy)
    assert len(reopened) == before + 1 and reopened.stats()["appends"] == 1
    assert not [p for p in tiny_index_copy.parent.iterdir() if p.name.startswith(".")]


def test_missing_index_names_the_build_command(tmp_path):
    with pytest.raises(IndexNotFoundError, match=r"purr index CORPUS.jsonl --out"):
        Index.open(tmp_path / "nowhere")


def test_refuses_to_overwrite_without_flag(tiny_index_copy, resources):
    with pytest.raises(FileExistsError, match="--overwrite"):
        Index.build(read_corpus([resources / "docs"]), tiny_index_copy, progress=False)


def test_bm25_only_index_rejects_dense_mode(tmp_path, resources):
    ix = Index.build(
        read_corpus([resources / "docs"]),
        tmp_path / "sparse",
        IndexConfig(dense_enabled=False),
        progress=False,
    )
    assert ix.dense is None
    assert ix.search("black tea", 1, SearchConfig(mode="bm25"))[0].snippet.doc_id == "guide.md"
    with pytest.raises(IndexNotFoundError, match="--mode bm25"):
        ix.search("black tea", 1, SearchConfig(mode="hybrid"))


def test_ivf_and_hnsw_indexes(tmp_path, resources):
    from retrieval.config import DenseConfig
    from retrieval.dense import DenseIndex

    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(2000, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    for kind in ("ivf", "hnsw"):
        cfg = DenseConfig(index_type=kind, ivf_nprobe=64)
        d = DenseIndex.build(vecs, cfg)
        assert d.kind == kind
        d.save(tmp_path / f"{kind}.faiss")
        loaded = DenseIndex.load(tmp_path / f"{kind}.faiss", cfg)
        ids, scores = loaded.search(vecs[:5], 3)[0]
        assert ids[0] == 0 and scores[0] == pytest.approx(1.0, abs=1e-4)
    auto = DenseIndex.build(vecs, DenseConfig(exact_max=1000))
    assert auto.kind == "ivf"


def test_append_with_nothing_new_still_removes_a_killed_writers_folder(tiny_index_copy, resources):
    """A writer killed after its swap, while deleting the old index, leaves a hidden folder;
    the next append finds every document indexed and must still clear it."""
    import subprocess
    import sys

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    pid = int(dead.stdout)
    leftover = tiny_index_copy.parent / f".{tiny_index_copy.name}.tmp-{pid}-123"
    leftover.mkdir()
    (leftover / "store.jsonl").write_text("{}\n")
    ix = Index.open(tiny_index_copy)
    assert ix.append(list(read_corpus([resources / "tiny_corpus.jsonl"])), progress=False) == 0
    assert not leftover.exists()


def test_a_saved_bm25_index_is_searched_without_bm25s_and_scores_the_same(built_index):
    """``SavedScores`` reads bm25s' files with numpy: same rows, same float scores; the stop
    words are bm25s' own."""
    import bm25s

    from retrieval.bm25 import STOPWORDS_EN, BM25Index, SavedScores

    assert frozenset(bm25s.stopwords.STOPWORDS_EN) == STOPWORDS_EN
    ours = BM25Index.load(built_index / "bm25")
    assert isinstance(ours._retriever, SavedScores) and ours.size > 10
    theirs = BM25Index(ours.cfg, bm25s.BM25.load(str(built_index / "bm25"), mmap=True))
    queries = ["Marie Curie Nobel Prize", "Eiffel Tower height metres", "the of and", "zzzz"]
    for (rows, scores), (rows2, scores2) in zip(
        ours.search_batch(queries, 50), theirs.search_batch(queries, 50), strict=True
    ):
        assert rows.tolist() == rows2.tolist() and scores.tolist() == scores2.tolist()
    assert len(ours.search("Marie Curie", 5)[0]) > 0
