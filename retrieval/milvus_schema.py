"""The purr collection in Milvus: its schema and indexes, and the three search modes (BM25 with
Milvus's built-in function, dense, and hybrid fused inside the engine by RRF or weights)."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from retrieval.bm25 import analyse
from retrieval.config import IndexConfig, SearchConfig

_INSERT_BATCH = 512
_MAX_BYTES = 65_535
_VARCHAR = {"passage_id": 1024, "doc_id": 1024, "title": 4096, "url": 4096, "source": 1024}


def dense_index(cfg: IndexConfig, n_rows: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(index type, build params, search params) for the dense field, as the local index
    chooses: exact up to ``exact_max`` passages, approximate above."""
    d = cfg.dense
    kind = d.index_type
    if kind == "auto":
        kind = "flat" if n_rows <= d.exact_max else "hnsw"
    if kind == "flat":
        return "FLAT", {}, {}
    if kind == "ivf":
        nlist = max(1, min(65536, int(4 * math.sqrt(max(n_rows, 1)))))
        return "IVF_FLAT", {"nlist": nlist}, {"nprobe": d.ivf_nprobe}
    return "HNSW", {"M": d.hnsw_m, "efConstruction": 200}, {"ef": d.hnsw_ef_search}


def search_params(cfg: IndexConfig, stats: dict[str, Any]) -> dict[str, Any]:
    """The dense search parameters of the index type the collection was built with."""
    kind = stats.get("dense_index")
    if kind == "HNSW":
        return {"ef": cfg.dense.hnsw_ef_search}
    if kind == "IVF_FLAT":
        return {"nprobe": cfg.dense.ivf_nprobe}
    return {}


def create_collection(client, name: str, cfg: IndexConfig, dim: int | None, n_rows: int) -> str:
    """Create the collection ``name``; returns the dense index type (or 'none')."""
    from pymilvus import DataType, Function, FunctionType

    schema = client.create_schema(auto_id=False, description="purr snippets")
    schema.add_field("row", DataType.INT64, is_primary=True)
    schema.add_field("gen", DataType.INT64)
    for field, size in _VARCHAR.items():
        schema.add_field(field, DataType.VARCHAR, max_length=size)
    schema.add_field("text", DataType.VARCHAR, max_length=65535)
    schema.add_field("start", DataType.INT64)
    schema.add_field("end", DataType.INT64)
    # already analysed (retrieval.bm25.analyse), so the engine only splits on spaces
    schema.add_field(
        "terms",
        DataType.VARCHAR,
        max_length=65535,
        enable_analyzer=True,
        analyzer_params={"tokenizer": "standard"},
    )
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(
        Function(
            name="bm25",
            function_type=FunctionType.BM25,
            input_field_names=["terms"],
            output_field_names=["sparse"],
        )
    )
    params = client.prepare_index_params()
    params.add_index(
        "sparse",
        index_type="SPARSE_INVERTED_INDEX",
        metric_type="BM25",
        params={"bm25_k1": cfg.bm25.k1, "bm25_b": cfg.bm25.b},
    )
    kind = "none"
    if dim is not None:
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
        kind, build, _ = dense_index(cfg, n_rows)
        params.add_index("dense", index_type=kind, metric_type="IP", params=build)
    client.create_collection(name, schema=schema, index_params=params)
    return kind


def _one(client, name, data, field, param, k, expr, fields, score):
    """One retriever's hits for one query: (entity, score, {retriever: score})."""
    label = "bm25" if field == "sparse" else field
    res = client.search(
        name,
        data=[data],
        anns_field=field,
        limit=k,
        filter=expr,
        output_fields=fields,
        search_params=param,
    )[0]
    return [(h["entity"], score(h["distance"]), {label: score(h["distance"])}) for h in res]


def search_collection(
    client,
    name: str,
    meta: dict[str, Any],
    terms: list[str],
    vectors: list | None,
    k: int,
    cfg: SearchConfig,
    fields: list[str],
) -> list[list[tuple[dict, float, dict[str, float]]]]:
    """Per query, best first: (entity fields, fused score, per-retriever scores)."""
    from pymilvus import AnnSearchRequest, RRFRanker, WeightedRanker

    expr = f"gen <= {int(meta['committed'])}"
    n_cand = max(k, cfg.candidates)
    dense_params = search_params(IndexConfig.model_validate(meta["config"]), meta["stats"])
    bm25_param = {"metric_type": "BM25"}
    dense_param = {"metric_type": "IP", "params": dense_params}
    out: list[list[tuple[dict, float, dict[str, float]]]] = [[] for _ in terms]
    for qi, words in enumerate(terms):
        has_terms = bool(words.strip())
        vec = vectors[qi] if vectors is not None else None
        if cfg.mode == "bm25" or (cfg.mode == "hybrid" and vec is None):
            if has_terms:
                # Milvus Lite returns BM25 scores negated, a server positive: best first either way
                out[qi] = _one(client, name, words, "sparse", bm25_param, k, expr, fields, abs)
        elif cfg.mode == "dense" or not has_terms:
            if vec is not None:
                out[qi] = _one(
                    client, name, vec.tolist(), "dense", dense_param, k, expr, fields, float
                )
        else:
            assert vec is not None  # hybrid without a query vector went to BM25 above
            requests = [
                AnnSearchRequest(
                    data=[words], anns_field="sparse", param=bm25_param, limit=n_cand, expr=expr
                ),
                AnnSearchRequest(
                    data=[vec.tolist()],
                    anns_field="dense",
                    param=dense_param,
                    limit=n_cand,
                    expr=expr,
                ),
            ]
            ranker = (
                RRFRanker(cfg.rrf_k)
                if cfg.fusion == "rrf"
                else WeightedRanker(1 - cfg.dense_weight, cfg.dense_weight)
            )
            res = client.hybrid_search(
                name, requests, ranker=ranker, limit=k, output_fields=fields
            )[0]
            out[qi] = [(h["entity"], float(h["distance"]), {}) for h in res]
    return out


def _clip(text: str, limit: int = _MAX_BYTES) -> str:
    raw = text.encode("utf-8")
    return text if len(raw) <= limit else raw[:limit].decode("utf-8", "ignore")


def insert_rows(client, name, rows, cfg, encoder, gen, first_row, progress) -> dict[str, float]:
    """Embed and insert ``rows`` ((snippet, indexed text) pairs) as rows ``first_row``… under
    generation ``gen``, in batches; seconds spent embedding and inserting."""
    t_embed = t_insert = 0.0
    with tqdm(
        total=len(rows), desc="indexing into milvus", unit="passage", disable=not progress
    ) as bar:
        for i in range(0, len(rows), _INSERT_BATCH):
            part = rows[i : i + _INSERT_BATCH]
            t = time.perf_counter()
            vecs = encoder.encode_passages([p for _, p in part]) if encoder is not None else None
            t_embed += time.perf_counter() - t
            terms = analyse([p for _, p in part], cfg.bm25)
            data = []
            for j, ((s, _), words) in enumerate(zip(part, terms, strict=True)):
                row = {
                    "row": first_row + i + j,
                    "gen": gen,
                    "passage_id": _clip(s.id, 1024),
                    "doc_id": _clip(s.doc_id, 1024),
                    "title": _clip(s.title, 4096),
                    "text": _clip(s.text),
                    "start": s.start,
                    "end": s.end,
                    "url": _clip(s.url or "", 4096),
                    "source": _clip(s.source, 1024),
                    "terms": _clip(" ".join(words)),
                }
                if vecs is not None:
                    row["dense"] = vecs[j].astype(np.float32).tolist()
                data.append(row)
            t = time.perf_counter()
            client.insert(name, data)
            t_insert += time.perf_counter() - t
            bar.update(len(part))
    t = time.perf_counter()
    client.flush(name)
    t_insert += time.perf_counter() - t
    return {"dense": round(t_embed, 2), "insert": round(t_insert, 2)}
