"""A corpus in Milvus: embedded Milvus Lite (``FILE.db``) on one machine, a Milvus server or
cluster (``http(s)://HOST:PORT``) beyond it, behind the same retriever interface as ``Index``.

One collection holds the snippets: display fields, the BM25 terms (Milvus's built-in BM25
function over them fills a sparse field), the dense vectors of our encoder, and a generation
number. The resolved index config, the stats and the committed generation are collection
properties. A writer inserts under the next generation and commits it last; searches read only
committed generations, so a writer killed mid-way leaves nothing visible, and the next writer
removes what it left. A build writes a new collection and renames it into place.

The terms are analysed here (``retrieval.bm25.analyse``: the local index's stop words and
stemmer) because Milvus Lite's analyzer does not stem; every engine then scores the same terms.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from retrieval.bm25 import analyse
from retrieval.chunking import chunk
from retrieval.config import DenseConfig, IndexConfig, SearchConfig
from retrieval.encoders import Encoder, build_encoder
from retrieval.index import IndexNotFoundError, check_search, passage_text
from retrieval.milvus_client import DEFAULT_COLLECTION, MilvusTarget, connect, milvus_errors
from retrieval.milvus_schema import create_collection, insert_rows, search_collection
from retrieval.types import Document, Hit, Snippet

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
META = "purr.meta"
REFRESH_S = 10.0
FINGERPRINT_TEXT = "purr encoder check: the Eiffel Tower was finished in 1889."
_FIELDS = ["row", "passage_id", "doc_id", "title", "text", "start", "end", "url", "source"]


class EncoderMismatchError(IndexNotFoundError):
    """The collection's vectors came from another encoder than the one asked for."""


def fingerprint(encoder: Encoder) -> list[float]:
    """The first 8 components of the encoder's vector for a fixed passage."""
    return [round(float(x), 5) for x in encoder.encode_passages([FINGERPRINT_TEXT])[0][:8]]


class MilvusIndex:
    """Search over a purr collection in Milvus. Open with :meth:`open`, build with :meth:`build`."""

    def __init__(self, target: MilvusTarget, client, meta: dict[str, Any], encoder=None):
        self.target = target
        self.path = target.ref
        self.client = client
        self.meta = meta
        self.cfg = IndexConfig.model_validate(meta["config"])
        self._encoder = encoder
        self._checked = encoder is not None
        self.dense = True if self.cfg.dense_enabled and meta["stats"].get("dense_dim") else None
        self._read_at = time.monotonic()

    def _refresh(self) -> None:
        """Re-read the committed generation at most every ``REFRESH_S``, so a long-running
        reader (a service replica) sees what other writers committed since it opened."""
        if time.monotonic() - self._read_at < REFRESH_S:
            return
        self.meta = _read_meta(self.client, self.target)
        self._read_at = time.monotonic()

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(
        cls, ref: str, encoder: Encoder | None = None, *, token: str | None = None
    ) -> MilvusIndex:
        target = MilvusTarget.parse(ref)
        client = connect(target, token)
        with milvus_errors(target):
            if not client.has_collection(target.collection):
                raise IndexNotFoundError(
                    f"no collection '{target.collection}' in Milvus at {target.where}; build it "
                    f"with: purr index CORPUS.jsonl --backend milvus --out {ref}"
                )
            meta = _read_meta(client, target)
            client.load_collection(target.collection)
        return cls(target, client, meta, encoder)

    @property
    def encoder(self) -> Encoder:
        """The encoder the collection was built with, checked against its stored fingerprint."""
        if self._encoder is None:
            self._encoder = build_encoder(self.cfg.dense)
        if not self._checked:
            stored = self.meta.get("encoder", {}).get("fingerprint")
            now = fingerprint(self._encoder)
            if stored and not np.allclose(stored, now, atol=1e-3):
                raise EncoderMismatchError(
                    f"the collection at {self.path} was embedded by {self.cfg.dense.model} as it "
                    f"was then, and that model now encodes differently; rebuild it with: purr index "
                    f"CORPUS --backend milvus --out {self.path} --overwrite"
                )
            self._checked = True
        return self._encoder

    def check_encoder(self, dense: DenseConfig) -> None:
        """Refuse a command that asks for another encoder than the collection's."""
        if not self.cfg.dense_enabled:
            return
        built = self.cfg.dense.model
        if dense.model != built or dense.max_length != self.cfg.dense.max_length:
            raise EncoderMismatchError(
                f"the collection at {self.path} holds vectors of {built} (max_length "
                f"{self.cfg.dense.max_length}); this command asks for {dense.model} (max_length "
                f"{dense.max_length}). Drop the index.dense override, or rebuild with: purr index "
                f"CORPUS --backend milvus --out {self.path} --overwrite --set index.dense.model="
                f"{dense.model}"
            )

    def __len__(self) -> int:
        return int(self.meta["stats"]["passages"])

    def stats(self) -> dict[str, Any]:
        return dict(self.meta.get("stats", {}))

    def close(self) -> None:
        """Close the connection; for a Milvus Lite file, also its engine in this process, which
        holds the file's lock (every open index of that file in this process is closed)."""
        self.client.close()
        if not self.target.server:
            from milvus_lite.server_manager import server_manager_instance

            server_manager_instance.release_server(self.target.uri)

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        docs: Iterable[Document],
        ref: str,
        cfg: IndexConfig | None = None,
        *,
        overwrite: bool = False,
        extra_config: dict[str, Any] | None = None,
        encoder: Encoder | None = None,
        progress: bool = True,
        token: str | None = None,
    ) -> MilvusIndex:
        """Chunk, embed and insert ``docs`` into a new collection, renamed into place when whole."""
        cfg = cfg or IndexConfig()
        target = MilvusTarget.parse(ref)
        client = connect(target, token)
        name = target.collection
        with milvus_errors(target):
            if client.has_collection(name) and not overwrite:
                raise FileExistsError(
                    f"collection '{name}' already exists in Milvus at {target.where}; pass "
                    "--overwrite to replace it or --append to add to it"
                )
            for stale in client.list_collections():
                if stale.startswith(f"{name}__building_"):
                    client.drop_collection(stale)  # left by a build that was killed
        rows, t_chunk = _chunk_all(docs, cfg, progress)
        if not rows:
            raise ValueError(
                "the corpus produced no snippets (all documents empty?); nothing to index"
            )
        enc = None
        if cfg.dense_enabled:
            from retrieval.prebuilt import passage_encoder

            enc = encoder or passage_encoder(cfg.dense)
        tmp = f"{name}__building_{os.getpid()}"
        meta: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "config": cfg.model_dump(mode="json"),
            "committed": 0,
            "stats": {"passages": 0, "documents": 0, "next_row": 0, "appends": 0},
        }
        if extra_config:
            meta["pipeline"] = extra_config
        with milvus_errors(target):
            dense_kind = create_collection(client, tmp, cfg, enc.dim if enc else None, len(rows))
            timings = insert_rows(
                client, tmp, rows, cfg, enc, gen=0, first_row=0, progress=progress
            )
            meta["encoder"] = (
                {"model": cfg.dense.model, "dim": enc.dim, "fingerprint": fingerprint(enc)}
                if enc is not None
                else {}
            )
            meta["stats"].update(
                passages=len(rows),
                documents=len({r[0].doc_id for r in rows}),
                next_row=len(rows),
                dense_index=dense_kind,
                dense_model=cfg.dense.model if enc else None,
                dense_dim=enc.dim if enc else None,
                seconds={"chunking": round(t_chunk, 2), **timings},
            )
            _write_meta(client, tmp, meta)
            if client.has_collection(name):
                client.drop_collection(name)
            client.rename_collection(tmp, name)
        client.close()
        return cls.open(ref, encoder=enc, token=token)

    def append(self, docs: Iterable[Document], progress: bool = True) -> int:
        """Add documents whose ids are not in the collection; returns the new passage count."""
        name = self.target.collection
        with milvus_errors(self.target):
            self.meta = _read_meta(self.client, self.target)  # what other writers committed
            self._drop_uncommitted()
            fresh, seen = [], set()
            for doc in docs:
                if doc.id in seen:
                    continue
                seen.add(doc.id)
                fresh.append(doc)
            known = self._known_docs([d.id for d in fresh])
            for doc_id in known:
                log.warning("document %s is already indexed; skipped", doc_id)
            rows, _ = _chunk_all([d for d in fresh if d.id not in known], self.cfg, progress)
            if not rows:
                return 0
            gen = self.meta["committed"] + 1
            stats = self.meta["stats"]
            enc = self.encoder if self.dense else None
            insert_rows(self.client, name, rows, self.cfg, enc, gen, stats["next_row"], progress)
            stats["passages"] += len(rows)
            stats["documents"] += len({r[0].doc_id for r in rows})
            stats["next_row"] += len(rows)
            stats["appends"] = stats.get("appends", 0) + 1
            self.meta["committed"] = gen
            _write_meta(self.client, name, self.meta)  # the commit: the rows become visible
        return len(rows)

    def delete(self, doc_ids: Iterable[str]) -> int:
        """Remove every snippet of these documents; returns the number of passages removed."""
        ids = sorted(set(doc_ids))
        name = self.target.collection
        with milvus_errors(self.target):
            self.meta = _read_meta(self.client, self.target)
            self._drop_uncommitted()
            rows = [
                r
                for part in _chunks(ids)
                for r in self._query(f"doc_id in {_quote_list(part)}", ["row", "doc_id"])
            ]
            if not rows:
                return 0
            for part in _chunks(ids):
                self.client.delete(name, filter=f"doc_id in {_quote_list(part)}")
            stats = self.meta["stats"]
            stats["passages"] -= len(rows)
            stats["documents"] -= len({r["doc_id"] for r in rows})
            stats["deletes"] = stats.get("deletes", 0) + 1
            _write_meta(self.client, name, self.meta)
        return len(rows)

    def _drop_uncommitted(self) -> None:
        """Rows of a writer killed before its commit."""
        self.client.delete(self.target.collection, filter=f"gen > {self.meta['committed']}")

    def _known_docs(self, doc_ids: list[str]) -> set[str]:
        known: set[str] = set()
        for part in _chunks(doc_ids):
            known |= {
                r["doc_id"] for r in self._query(f"doc_id in {_quote_list(part)}", ["doc_id"])
            }
        return known

    def _query(self, expr: str, fields: list[str]) -> list[dict]:
        expr = f"({expr}) and gen <= {self.meta['committed']}"
        return list(
            self.client.query(
                self.target.collection, filter=expr, output_fields=fields, limit=16384
            )
        )

    # ------------------------------------------------------------------ searching
    def search(self, query: str, k: int = 10, search: SearchConfig | None = None) -> list[Hit]:
        """Top-k snippets for one query (first stage only; rerank with ``retrieval.rerank``)."""
        return self.search_batch([query], k, search)[0]

    def search_batch(
        self, queries: list[str], k: int = 10, search: SearchConfig | None = None
    ) -> list[list[Hit]]:
        cfg = check_search(search, k, bool(self.dense), f"the collection at {self.path}")
        terms = [" ".join(t) for t in analyse(queries, self.cfg.bm25)]
        vectors = None
        if cfg.mode != "bm25":
            live = [i for i, q in enumerate(queries) if q.strip()]
            vectors = [None] * len(queries)
            if live:
                for i, v in zip(
                    live, self.encoder.encode_queries([queries[i] for i in live]), strict=True
                ):
                    vectors[i] = v
        with milvus_errors(self.target):
            self._refresh()
            found = search_collection(
                self.client, self.target.collection, self.meta, terms, vectors, k, cfg, _FIELDS
            )
        return [
            [
                Hit(_snippet(e), score, rank, cfg.mode, scores=scores, row=int(e["row"]))
                for rank, (e, score, scores) in enumerate(per)
            ]
            for per in found
        ]

    def document_snippets(self, hit: Hit) -> list[Snippet]:
        """Every snippet of the document a hit belongs to, in document order."""
        with milvus_errors(self.target):
            self._refresh()
            rows = self._query(f"doc_id == {_quote(hit.snippet.doc_id)}", _FIELDS)
        return [_snippet(r) for r in sorted(rows, key=lambda r: r["row"])]


def _quote(text: str) -> str:
    """A string literal for a Milvus filter: only ``\\`` and ``"`` escaped, other characters
    kept as they are (Milvus Lite's parser knows no ``\\u`` escapes).

    >>> _quote('Agnès "AV" Varda')
    '"Agnès \\\\"AV\\\\" Varda"'
    """
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'


def _quote_list(ids: list[str]) -> str:
    return "[" + ", ".join(_quote(i) for i in ids) + "]"


def _chunks(ids: list[str], size: int = 50) -> list[list[str]]:
    """Document ids a few at a time, so that one query's passages stay under Milvus's 16,384
    result limit."""
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def _snippet(e: dict) -> Snippet:
    return Snippet(
        id=e["passage_id"],
        doc_id=e["doc_id"],
        title=e["title"],
        text=e["text"],
        start=int(e["start"]),
        end=int(e["end"]),
        url=e["url"] or None,
        source=e["source"],
    )


def _chunk_all(
    docs: Iterable[Document], cfg: IndexConfig, progress: bool
) -> tuple[list[tuple[Snippet, str]], float]:
    t = time.perf_counter()
    rows: list[tuple[Snippet, str]] = []
    for doc in tqdm(docs, desc="chunking", unit="doc", disable=not progress):
        rows.extend((s, passage_text(s, cfg)) for s in chunk(doc, cfg.chunking))
    return rows, time.perf_counter() - t


def _read_meta(client, target: MilvusTarget) -> dict[str, Any]:
    props = client.describe_collection(target.collection).get("properties", {}) or {}
    raw = props.get(META)
    if raw is None:
        raise IndexNotFoundError(
            f"collection '{target.collection}' in Milvus at {target.where} was not written by "
            f"purr index (it has no {META} property); index into another collection "
            f"(--out URI#NAME) or rebuild it with --overwrite"
        )
    try:
        meta = json.loads(raw)
        IndexConfig.model_validate(meta["config"])
    except (json.JSONDecodeError, KeyError, ValueError) as e:
        raise IndexNotFoundError(
            f"the {META} property of '{target.collection}' at {target.where} is unreadable ({e}); "
            "rebuild it with --overwrite"
        ) from None
    if meta.get("format_version") != FORMAT_VERSION:
        raise IndexNotFoundError(
            f"collection '{target.collection}' has format {meta.get('format_version')}, expected "
            f"{FORMAT_VERSION}; rebuild it with --overwrite"
        )
    return meta


def _write_meta(client, name: str, meta: dict[str, Any]) -> None:
    client.alter_collection_properties(name, properties={META: json.dumps(meta)})


__all__ = ["DEFAULT_COLLECTION", "EncoderMismatchError", "MilvusIndex", "fingerprint"]
