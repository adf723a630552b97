"""The Milvus index backend on embedded Milvus Lite (a real engine in this process) and on the
Milvus Lite gRPC server (a real server on a loopback port): building, every search mode against
the local index, append, delete, reopen, refused encoders and unreachable or refusing servers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from concurrent import futures
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pymilvus", reason="the Milvus extra: pip install 'purr-edit[milvus]'")
pytest.importorskip("milvus_lite")

from retrieval.backends import build_index, open_index  # noqa: E402
from retrieval.config import IndexConfig, SearchConfig  # noqa: E402
from retrieval.corpus import read_corpus  # noqa: E402
from retrieval.milvus import EncoderMismatchError, MilvusIndex  # noqa: E402
from retrieval.milvus_client import MilvusUnavailableError, is_milvus  # noqa: E402
from retrieval.types import Document  # noqa: E402
from serve.loopback_web import free_port  # noqa: E402
from tests.helpers import run_purr  # noqa: E402

EIFFEL = "who designed the Eiffel Tower"


@pytest.fixture(scope="session")
def milvus_built(tmp_path_factory, resources, tiny_index) -> Path:
    """A Milvus Lite file over the same corpus and config as ``tiny_index``, built once."""
    out = tmp_path_factory.mktemp("milvus") / "tiny.db"
    index = build_index(
        read_corpus([resources / "tiny_corpus.jsonl", resources / "docs"]),
        out,
        tiny_index.cfg,
        progress=False,
    )
    index.close()
    return out


@pytest.fixture
def milvus_copy(milvus_built, tmp_path) -> MilvusIndex:
    dst = tmp_path / "copy.db"
    shutil.copytree(milvus_built, dst)
    index = MilvusIndex.open(str(dst))
    yield index
    index.close()


def _docs(hits) -> list[str]:
    return [h.snippet.doc_id for h in hits]


def test_every_mode_ranks_like_the_local_index(milvus_copy, tiny_index):
    queries = [EIFFEL, "Nobel prize in physics and chemistry", "python programming language"]
    assert len(milvus_copy) == len(tiny_index)
    for mode in ("bm25", "dense"):
        cfg = SearchConfig(mode=mode)
        got = milvus_copy.search_batch(queries, 5, cfg)
        want = tiny_index.search_batch(queries, 5, cfg)
        for g, w in zip(got, want, strict=True):
            assert [h.snippet.id for h in g] == [h.snippet.id for h in w]
            if mode == "dense":  # the same vectors: the same scores
                assert np.allclose([h.score for h in g], [h.score for h in w], atol=1e-4)
            else:  # the same terms; Milvus's BM25 keeps the (k1 + 1) factor Lucene drops
                ratio = np.array([h.score for h in g]) / np.array([h.score for h in w])
                assert np.allclose(ratio, 1 + tiny_index.cfg.bm25.k1, rtol=0.1)
    rrf = SearchConfig(mode="hybrid", fusion="rrf")
    got, want = milvus_copy.search(EIFFEL, 5, rrf), tiny_index.search(EIFFEL, 5, rrf)
    assert [h.snippet.id for h in got] == [h.snippet.id for h in want]
    weighted = milvus_copy.search(EIFFEL, 3, SearchConfig(mode="hybrid", fusion="weighted"))
    assert _docs(weighted)[0] == "eiffel-tower"
    hit = got[0]
    assert hit.snippet == tiny_index.search(EIFFEL, 1, rrf)[0].snippet  # every field comes back
    assert milvus_copy.document_snippets(hit) == tiny_index.document_snippets(
        tiny_index.search(EIFFEL, 1, rrf)[0]
    )


def test_append_delete_and_reopen_keep_the_config(milvus_copy):
    path = milvus_copy.path
    before = len(milvus_copy)
    doc = Document(
        "kilimanjaro",
        "Kilimanjaro",
        "Kilimanjaro is a dormant volcano in Tanzania. "
        "It is the highest mountain in Africa at 5,895 metres.",
    )
    added = milvus_copy.append(
        [doc, Document("eiffel-tower", "Eiffel Tower", "a duplicate id")], progress=False
    )
    assert added == 1
    assert _docs(
        milvus_copy.search("dormant volcano in Tanzania", 1, SearchConfig(mode="bm25"))
    ) == ["kilimanjaro"]
    assert len(milvus_copy) == before + 1
    accented = Document(
        'agnès-"av"', "Agnès Varda", "Agnès Varda was a Belgian-born French film director."
    )  # ids with non-ASCII letters and quotes go into filters as they are
    assert milvus_copy.append([accented], progress=False) == 1
    hit = milvus_copy.search("Varda film director", 1, SearchConfig(mode="bm25"))[0]
    assert hit.snippet.doc_id == 'agnès-"av"'
    assert [s.doc_id for s in milvus_copy.document_snippets(hit)] == ['agnès-"av"']
    assert milvus_copy.delete(['agnès-"av"']) == 1
    milvus_copy.close()
    reopened = MilvusIndex.open(path)
    assert len(reopened) == before + 1 and reopened.stats()["appends"] == 2
    assert reopened.cfg == IndexConfig.model_validate(reopened.meta["config"])
    assert reopened.delete(["kilimanjaro", "eiffel-tower", "no-such-doc"]) == 2
    for mode in ("bm25", "dense", "hybrid"):
        found = _docs(reopened.search("Kilimanjaro Eiffel Tower", 10, SearchConfig(mode=mode)))
        assert "kilimanjaro" not in found and "eiffel-tower" not in found
    assert len(reopened) == before - 1
    reopened.close()


def test_a_reader_sees_what_another_writer_committed(milvus_copy, monkeypatch):
    import retrieval.milvus as milvus_module

    writer = MilvusIndex.open(milvus_copy.path)  # a second handle, as another replica's
    query = "dormant volcano in Tanzania"
    assert "kilimanjaro" not in _docs(milvus_copy.search(query, 3, SearchConfig(mode="bm25")))
    doc = Document("kilimanjaro", "Kilimanjaro", "Kilimanjaro is a dormant volcano in Tanzania.")
    assert writer.append([doc], progress=False) == 1
    monkeypatch.setattr(milvus_module, "REFRESH_S", 0.0)  # the reader's next refresh is due
    assert _docs(milvus_copy.search(query, 1, SearchConfig(mode="bm25"))) == ["kilimanjaro"]
    assert len(milvus_copy) == len(writer)


def test_rows_of_a_killed_writer_stay_invisible_and_are_removed(milvus_copy):
    """An append killed before its commit left rows under the next generation."""
    committed = milvus_copy.meta["committed"]
    row = {
        "row": 10_000,
        "gen": committed + 1,
        "passage_id": "ghost#0",
        "doc_id": "ghost",
        "title": "Ghost",
        "text": "Eiffel Tower ghost row",
        "start": 0,
        "end": 10,
        "url": "",
        "source": "",
        "terms": "eiffel tower ghost",
        "dense": [0.05] * 384,
    }
    milvus_copy.client.insert("purr", [row])
    assert "ghost" not in _docs(
        milvus_copy.search("eiffel tower ghost", 10, SearchConfig(mode="bm25"))
    )
    assert (
        milvus_copy.append([Document("x", "X", "Something new about ghosts.")], progress=False) == 1
    )
    left = milvus_copy.client.query("purr", filter='doc_id == "ghost"', output_fields=["row"])
    assert list(left) == []


def test_a_changed_encoder_and_a_foreign_collection_are_refused(milvus_copy, tiny_index):
    path = milvus_copy.path
    with pytest.raises(EncoderMismatchError, match="index.dense override"):
        milvus_copy.check_encoder(
            tiny_index.cfg.dense.model_copy(update={"model": "packaged:all-minilm-l6-v2"})
        )
    meta = dict(milvus_copy.meta)
    meta["encoder"] = {**meta["encoder"], "fingerprint": [0.5] * 8}  # another model's vectors
    milvus_copy.client.alter_collection_properties(
        "purr", properties={"purr.meta": json.dumps(meta)}
    )
    milvus_copy.close()
    tampered = MilvusIndex.open(path)
    assert tampered.search(EIFFEL, 1, SearchConfig(mode="bm25"))  # BM25 needs no encoder
    with pytest.raises(EncoderMismatchError, match="encodes differently"):
        tampered.search(EIFFEL, 1, SearchConfig(mode="dense"))
    from pymilvus import DataType

    schema = tampered.client.create_schema(auto_id=True)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("v", DataType.FLOAT_VECTOR, dim=2)
    tampered.client.create_collection("theirs", schema=schema)
    tampered.close()
    with pytest.raises(Exception, match="not written by purr index"):
        MilvusIndex.open(f"{path}#theirs")
    with pytest.raises(Exception, match="no collection 'other'"):
        MilvusIndex.open(f"{path}#other")


@pytest.mark.integration
def test_cli_index_search_append_delete_and_refusals(tmp_path, resources):
    db = tmp_path / "corpus.db"
    built = run_purr(
        "index", str(resources / "tiny_corpus.jsonl"), "--backend", "milvus", "--out", str(db)
    )
    assert built.returncode == 0, built.stderr
    assert "passages into" in built.stdout
    again = run_purr("index", str(resources / "tiny_corpus.jsonl"), "--out", str(db))
    assert again.returncode == 2 and "--overwrite" in again.stderr
    for mode in ("bm25", "dense", "hybrid"):
        r = run_purr("search", EIFFEL, "--index", str(db), "--mode", mode, "-k", "2", "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["hits"][0]["doc_id"] == "eiffel-tower"
    other = run_purr(
        "index",
        str(resources / "docs"),
        "--append",
        "--out",
        str(db),
        "--set",
        "index.dense.model=packaged:all-minilm-l6-v2",
    )
    assert other.returncode == 2
    assert other.stderr.count("\n") == 1 and "Drop the index.dense override" in other.stderr
    held = MilvusIndex.open(str(db))
    assert held.stats()["appends"] == 0  # nothing was written
    busy = run_purr("index", "--out", str(db), "--delete", "eiffel-tower")
    assert busy.returncode == 2 and "one process at a time" in busy.stderr  # Lite's file lock
    held.close()
    deleted = run_purr("index", "--out", str(db), "--delete", "eiffel-tower")
    assert deleted.returncode == 0 and "deleted" in deleted.stdout
    local = run_purr("index", "--out", str(tmp_path / "dir"), "--delete", "x")
    assert local.returncode == 2


@pytest.mark.integration
def test_a_milvus_server_by_uri_and_the_errors_naming_the_fix(tmp_path, resources):
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "milvus_lite",
            "server",
            "--data-dir",
            str(tmp_path / "srv"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        uri = f"http://127.0.0.1:{port}#news"
        deadline = time.time() + 60
        while True:
            r = run_purr("index", str(resources / "tiny_corpus.jsonl"), "--out", uri)
            if r.returncode == 0 or time.time() > deadline:
                break
            time.sleep(1)
        assert r.returncode == 0, r.stderr
        assert is_milvus(uri)
        hit = run_purr("search", EIFFEL, "--index", uri, "-k", "1", "--json")
        assert json.loads(hit.stdout)["hits"][0]["doc_id"] == "eiffel-tower"
    finally:
        server.terminate()
        server.wait(30)
    down = run_purr("search", EIFFEL, "--index", f"http://127.0.0.1:{free_port()}")
    assert down.returncode == 2 and down.stderr.count("\n") == 1
    assert "cannot reach Milvus" in down.stderr and "check the URI" in down.stderr


def test_a_refused_token_names_the_variable_to_set():
    """A gRPC server that refuses every call the way Milvus with authentication does."""
    import grpc

    class Refuse(grpc.GenericRpcHandler):
        def service(self, handler_call_details):
            def deny(request, context):
                context.abort(
                    grpc.StatusCode.UNAUTHENTICATED,
                    "auth check failure, please check username and password are correct",
                )

            return grpc.unary_unary_rpc_method_handler(deny)

    server = grpc.server(futures.ThreadPoolExecutor(2))
    server.add_generic_rpc_handlers((Refuse(),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with pytest.raises(MilvusUnavailableError, match="PURR_MILVUS_TOKEN") as err:
            open_index(f"http://127.0.0.1:{port}")
        assert "refused the token" in str(err.value)
    finally:
        server.stop(0)


def test_without_the_extra_the_error_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pymilvus", None)
    with pytest.raises(ImportError, match=r"purr-edit\[milvus\]"):
        open_index("nowhere.db")


def test_research_and_edit_run_on_a_milvus_index(milvus_copy):
    from editor.config import editor_overrides, load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline

    path = milvus_copy.path
    milvus_copy.close()
    cfg = load_config("default", editor_overrides("substitute"))
    pipeline = Pipeline(Components(cfg, index_path=path, progress=False))
    result = pipeline.edit(
        "The Eiffel Tower is a lattice tower in Paris. It was designed and built by Thomas "
        "Edison's company from 1887 to 1889."
    )
    assert result.status == "edited", result.warnings
    assert "Gustave Eiffel" in result.revised and "Edison" not in result.revised
    assert any(e.url == "https://example.org/eiffel-tower" for e in result.evidence)
    pipeline.components.index.close()
