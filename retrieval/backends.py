"""Opening an index by what the user typed: a folder is the local index (bm25s + FAISS), a
``FILE.db`` or an ``http(s)://`` URI is Milvus (``retrieval.milvus``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from retrieval.config import DenseConfig, IndexConfig
from retrieval.encoders import Encoder
from retrieval.index import Index
from retrieval.milvus_client import is_milvus
from retrieval.types import Document


def open_index(ref: str | Path, encoder: Encoder | None = None, dense: DenseConfig | None = None):
    """The index at ``ref``: an ``Index`` or a ``MilvusIndex``. With ``dense``, a Milvus
    collection built with another encoder is refused."""
    if is_milvus(ref):
        from retrieval.milvus import MilvusIndex

        index = MilvusIndex.open(str(ref), encoder=encoder)
        if dense is not None:
            index.check_encoder(dense)
        return index
    return Index.open(ref, encoder=encoder)


def build_index(
    docs: Iterable[Document],
    out: str | Path,
    cfg: IndexConfig,
    *,
    backend: str = "auto",
    overwrite: bool = False,
    extra_config: dict[str, Any] | None = None,
    progress: bool = True,
):
    """Build the index ``out`` on ``backend`` (auto: Milvus for FILE.db or a URI)."""
    if backend == "milvus" or (backend == "auto" and is_milvus(out)):
        from retrieval.milvus import MilvusIndex

        if not is_milvus(out):
            raise ValueError(
                f"--backend milvus writes a Milvus Lite file ending in .db or a server URI "
                f"(http://HOST:19530), not {out}; e.g. --out {Path(out).with_suffix('.db')}"
            )
        return MilvusIndex.build(
            docs, str(out), cfg, overwrite=overwrite, extra_config=extra_config, progress=progress
        )
    return Index.build(
        docs, out, cfg, overwrite=overwrite, extra_config=extra_config, progress=progress
    )
