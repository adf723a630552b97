"""An index directory: snippet store + BM25 + FAISS vectors + the config that built them.

Layout::

    DIR/config.json          resolved IndexConfig, stats, the models used
    DIR/passages.jsonl       snippets (+ passages.offsets.npy, passage_doc.npy, docs.jsonl)
    DIR/bm25/                bm25s sparse matrices (memory-mapped on open)
    DIR/dense.faiss          FAISS index (memory-mapped on open where FAISS can)

Builds and appends write into a temporary sibling folder and swap it in only when complete,
so a failure never leaves a half-written index behind.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from retrieval.bm25 import BM25Index
from retrieval.chunking import chunk
from retrieval.config import IndexConfig, SearchConfig
from retrieval.dense import DenseIndex
from retrieval.encoders import Encoder, build_encoder
from retrieval.files.atomic import recover, remove_stale, swap_in, temp_sibling
from retrieval.files.failures import writing
from retrieval.fusion import reciprocal_rank_fusion, weighted_score_fusion
from retrieval.prebuilt import passage_encoder, text_key
from retrieval.store import SnippetStore, write_store
from retrieval.titles import TitleLookup
from retrieval.types import Document, Hit, Snippet

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
CONFIG_FILE = "config.json"


class IndexNotFoundError(FileNotFoundError):
    """No usable index at a path; the message names the command that builds one."""


class Index:
    """Search over an index directory. Open with :meth:`open`, build with :meth:`build`."""

    def __init__(
        self,
        path: Path,
        cfg: IndexConfig,
        meta: dict[str, Any],
        mmap: bool = True,
        encoder: Encoder | None = None,
    ):
        self.path = path
        self.cfg = cfg
        self.meta = meta
        self.store = SnippetStore(path, mmap=mmap)
        self.bm25 = BM25Index.load(path / "bm25", mmap=mmap)
        self.dense: DenseIndex | None = None
        self._encoder = encoder
        self._titles: TitleLookup | None = None
        if cfg.dense_enabled and (path / "dense.faiss").exists():
            self.dense = DenseIndex.load(path / "dense.faiss", cfg.dense, mmap=mmap)

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | Path, mmap: bool = True, encoder: Encoder | None = None) -> Index:
        path = Path(path)
        cfg_file = path / CONFIG_FILE
        if not path.exists():
            recover(path)
        if not cfg_file.exists():
            raise IndexNotFoundError(
                f"no purr index at {path}; build one with: purr index CORPUS.jsonl --out {path}"
            )
        try:
            meta = json.loads(cfg_file.read_text("utf-8"))
            cfg = IndexConfig.model_validate(meta["config"])
        except (json.JSONDecodeError, KeyError, ValueError) as e:
            raise IndexNotFoundError(
                f"{cfg_file} is unreadable ({e}); rebuild with: purr index CORPUS --out {path}"
            ) from None
        if meta.get("format_version") != FORMAT_VERSION:
            raise IndexNotFoundError(
                f"index at {path} has format {meta.get('format_version')}, expected {FORMAT_VERSION}; rebuild it"
            )
        return cls(path, cfg, meta, mmap=mmap, encoder=encoder)

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = build_encoder(self.cfg.dense)
        return self._encoder

    def __len__(self) -> int:
        return len(self.store)

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        docs: Iterable[Document],
        out: str | Path,
        cfg: IndexConfig | None = None,
        *,
        overwrite: bool = False,
        extra_config: dict[str, Any] | None = None,
        encoder: Encoder | None = None,
        progress: bool = True,
    ) -> Index:
        """Chunk, embed and index ``docs`` into the directory ``out``."""
        cfg = cfg or IndexConfig()
        out = Path(out)
        if out.exists() and any(out.iterdir()) and not overwrite:
            raise FileExistsError(
                f"{out} exists and is not empty; pass --overwrite to replace it or --append to add to it"
            )
        tmp = _temp_sibling(out)
        enc = encoder or (passage_encoder(cfg.dense) if cfg.dense_enabled else None)
        with writing(out, tmp):
            _write_all(
                tmp, docs, cfg, enc, existing=None, extra_config=extra_config, progress=progress
            )
            swap_in(tmp, out)
        return cls.open(out, encoder=enc)

    def append(self, docs: Iterable[Document], progress: bool = True) -> int:
        """Add documents whose ids are not indexed yet; returns the number of new passages.

        BM25 statistics are recomputed over the whole store; dense vectors are added.
        """
        remove_stale(self.path)  # a writer killed after its swap, even when nothing is new now
        known = {d["id"] for d in self.store.docs}
        fresh = []
        for doc in docs:
            if doc.id in known:
                log.warning("document %s is already indexed; skipped", doc.id)
                continue
            known.add(doc.id)
            fresh.append(doc)
        if not fresh:
            return 0
        before = len(self.store)
        tmp = _temp_sibling(self.path)
        with writing(self.path, tmp):
            shutil.copytree(self.path, tmp)
            existing = SnippetStore(tmp, mmap=False)
            enc = self.encoder if self.cfg.dense_enabled else None
            _write_all(
                tmp,
                fresh,
                self.cfg,
                enc,
                existing=existing,
                extra_config=self.meta.get("pipeline"),
                progress=progress,
            )
            existing.close()
            self.close()
            swap_in(tmp, self.path)
        reopened = Index.open(self.path, encoder=self._encoder)
        self.__dict__.update(reopened.__dict__)
        return len(self.store) - before

    def close(self) -> None:
        self.store.close()

    # ------------------------------------------------------------------ searching
    def search(self, query: str, k: int = 10, search: SearchConfig | None = None) -> list[Hit]:
        """Top-k snippets for one query (first stage only; rerank with ``retrieval.rerank``)."""
        return self.search_batch([query], k, search)[0]

    def search_batch(
        self, queries: list[str], k: int = 10, search: SearchConfig | None = None
    ) -> list[list[Hit]]:
        cfg = check_search(search, k, self.dense is not None, f"index at {self.path}")
        mode = cfg.mode
        n_cand = max(k, cfg.candidates)
        sparse = self.bm25.search_batch(queries, n_cand) if mode in ("bm25", "hybrid") else None
        dense = None
        if mode in ("dense", "hybrid"):
            assert self.dense is not None
            live = [i for i, q in enumerate(queries) if q.strip()]
            dense = [(np.zeros(0, np.int64), np.zeros(0, np.float32))] * len(queries)
            if live:
                vecs = self.encoder.encode_queries([queries[i] for i in live])
                found = self.dense.search(vecs, n_cand)
                for i, res in zip(live, found, strict=True):
                    dense[i] = res
        results = []
        for qi in range(len(queries)):
            if mode == "bm25":
                assert sparse is not None
                fused = list(zip(sparse[qi][0].tolist(), sparse[qi][1].tolist(), strict=True))
                per = {"bm25": dict(fused)}
            elif mode == "dense":
                assert dense is not None
                fused = list(zip(dense[qi][0].tolist(), dense[qi][1].tolist(), strict=True))
                per = {"dense": dict(fused)}
            else:
                assert sparse is not None and dense is not None
                per = {
                    "bm25": dict(zip(sparse[qi][0].tolist(), sparse[qi][1].tolist(), strict=True)),
                    "dense": dict(zip(dense[qi][0].tolist(), dense[qi][1].tolist(), strict=True)),
                }
                if cfg.fusion == "rrf":
                    fused = reciprocal_rank_fusion(
                        [sparse[qi][0].tolist(), dense[qi][0].tolist()], cfg.rrf_k
                    )
                else:
                    fused = weighted_score_fusion(
                        [sparse[qi], dense[qi]], [1 - cfg.dense_weight, cfg.dense_weight]
                    )
            hits = []
            for rank, (row, score) in enumerate(fused[:k]):
                scores = {name: float(v[row]) for name, v in per.items() if row in v}
                hits.append(
                    Hit(
                        self.store.get(int(row)),
                        float(score),
                        rank,
                        mode,
                        scores=scores,
                        row=int(row),
                    )
                )
            results.append(hits)
        return results

    def document_snippets(self, hit: Hit) -> list[Snippet]:
        """Every snippet of the document a hit belongs to, in document order."""
        if hit.row < 0:
            raise ValueError("hit carries no passage row; it did not come from this index")
        return self.store.get_many(self.store.doc_rows(hit.row))

    def named(self, text: str, limit: int = 3) -> list[Hit]:
        """The first window of each document whose title ``text`` names (``retrieval.titles``),
        at most ``limit``: research's way to its subject's own page."""
        if self._titles is None:
            self._titles = TitleLookup(d.get("title", "") for d in self.store.docs)
        docs = self.store.docs
        rows = [docs[i]["first"] for i in self._titles.named(text, limit)]
        return [Hit(self.store.get(r), 0.0, -1, "title", row=r) for r in rows]

    def stats(self) -> dict[str, Any]:
        return dict(self.meta.get("stats", {}))


def check_search(search: SearchConfig | None, k: int, dense: bool, where: str) -> SearchConfig:
    """The search settings to use, refusing ``k`` < 1 and a dense mode on an index without
    vectors (any backend)."""
    cfg = search or SearchConfig()
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if cfg.mode != "bm25" and not dense:
        raise IndexNotFoundError(
            f"{where} has no dense vectors, so mode '{cfg.mode}' is unavailable; use --mode bm25 "
            "or rebuild with dense vectors (purr index ... --set index.dense_enabled=true)"
        )
    return cfg


def passage_text(snippet: Snippet, cfg: IndexConfig) -> str:
    """The text that is indexed for a snippet (title-prefixed when configured)."""
    if cfg.title_in_passage and snippet.title and not snippet.text.startswith(snippet.title):
        return f"{snippet.title}. {snippet.text}"
    return snippet.text


def _temp_sibling(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    recover(path)  # a writer killed mid-swap (where renameat2 is missing) left the old one aside
    remove_stale(path)  # folders of writers that were killed
    return temp_sibling(path)


def _write_all(
    directory: Path,
    docs: Iterable[Document],
    cfg: IndexConfig,
    encoder: Encoder | None,
    *,
    existing: SnippetStore | None,
    extra_config: dict[str, Any] | None,
    progress: bool,
) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    groups = []
    new_texts: list[str] = []
    for doc in tqdm(docs, desc="chunking", unit="doc", disable=not progress):
        snippets = list(chunk(doc, cfg.chunking))
        groups.append(({"id": doc.id, "title": doc.title, "url": doc.url}, snippets))
        new_texts.extend(passage_text(s, cfg) for s in snippets)
    if existing is None and not new_texts:
        raise ValueError("the corpus produced no snippets (all documents empty?); nothing to index")
    total = write_store(directory, groups, existing=existing)
    t_chunk = time.perf_counter() - t0

    store = SnippetStore(directory, mmap=False)
    all_texts = [passage_text(s, cfg) for s in store]
    store.close()
    t1 = time.perf_counter()
    bm25_dir = directory / "bm25"
    if bm25_dir.exists():
        shutil.rmtree(bm25_dir)
    bm25_dir.mkdir()
    BM25Index.build(all_texts, cfg.bm25, show_progress=progress).save(bm25_dir)
    t_bm25 = time.perf_counter() - t1

    t2 = time.perf_counter()
    dense_kind = None
    if cfg.dense_enabled and encoder is not None:
        with tqdm(
            total=len(new_texts), desc="embedding", unit="passage", disable=not progress
        ) as bar:
            vectors = encoder.encode_passages(new_texts, progress=bar.update)
        faiss_path = directory / "dense.faiss"
        if existing is not None and faiss_path.exists():
            dense = DenseIndex.load(faiss_path, cfg.dense, mmap=False)
            dense.add(vectors)
        else:
            dense = DenseIndex.build(vectors, cfg.dense, dim=encoder.dim)
        dense.save(faiss_path)
        dense_kind = dense.kind
    t_dense = time.perf_counter() - t2

    prev = {}
    if existing is not None and (directory / CONFIG_FILE).exists():
        prev = json.loads((directory / CONFIG_FILE).read_text("utf-8")).get("stats", {})
    stats = {
        "passages": total,
        "documents": sum(1 for _ in open(directory / "docs.jsonl", encoding="utf-8")),
        "dense_index": dense_kind,
        "dense_model": cfg.dense.model if cfg.dense_enabled else None,
        "dense_dim": encoder.dim if encoder is not None and cfg.dense_enabled else None,
        "seconds": {
            "chunking": round(t_chunk, 2),
            "bm25": round(t_bm25, 2),
            "dense": round(t_dense, 2),
        },
        "appends": prev.get("appends", -1) + 1 if existing is not None else 0,
    }
    meta = {"format_version": FORMAT_VERSION, "config": cfg.model_dump(mode="json"), "stats": stats}
    if extra_config:
        meta["pipeline"] = extra_config
    (directory / CONFIG_FILE).write_text(json.dumps(meta, indent=2), "utf-8")
    log.info("indexed %d passages (%s)", total, stats["seconds"])


def export_vectors(index_dir: str | Path, prefix: str | Path) -> int:
    """Write the passage vectors of a flat-FAISS index as a vector cache at ``prefix``.

    Returns the number of vectors written."""
    import faiss

    index = Index.open(index_dir, mmap=False)
    if index.dense is None:
        raise ValueError(f"index at {index_dir} has no dense vectors to export")
    raw = faiss.read_index(str(Path(index_dir) / "dense.faiss"))
    if not hasattr(raw, "reconstruct_n"):
        raise ValueError("only a flat FAISS index keeps exact vectors; build with index_type=flat")
    vectors = raw.reconstruct_n(0, raw.ntotal)  # (n, dim) float32
    texts = [passage_text(s, index.cfg) for s in index.store]
    if len(texts) != len(vectors):
        raise ValueError(f"{len(texts)} passages but {len(vectors)} vectors in {index_dir}")
    keys = np.fromiter((text_key(t) for t in texts), dtype=np.uint64, count=len(texts))
    keys, first = np.unique(keys, return_index=True)  # identical passages share one vector
    prefix = Path(prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    np.save(f"{prefix}.keys.npy", keys)
    np.save(f"{prefix}.vectors.npy", vectors[first].astype(np.float16))
    meta = {
        "model": index.cfg.dense.model,
        "max_length": index.cfg.dense.max_length,
        "dim": int(vectors.shape[1]),
        "count": len(keys),
        "title_in_passage": index.cfg.title_in_passage,
        "chunking": index.cfg.chunking.model_dump(mode="json"),
    }
    Path(f"{prefix}.json").write_text(json.dumps(meta, indent=2), "utf-8")
    return len(keys)
