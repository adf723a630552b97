"""Configuration of the research library, one pydantic model per component."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Cfg(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


Probability = Annotated[float, Field(ge=0, le=1)]
"""A setting from 0 to 1: a probability, a share or a weight."""


class ChunkingConfig(_Cfg):
    """How documents are cut into snippets (RARR: 4 sentences, stride 1)."""

    window: int = Field(4, ge=1, description="Sentences per snippet.")
    stride: int = Field(1, ge=1, description="Sentences between consecutive snippet starts.")
    max_chars: int = Field(
        2000, ge=100, description="A snippet longer than this is cut at a sentence boundary."
    )

    @model_validator(mode="after")
    def _stride_le_window(self) -> ChunkingConfig:
        if self.stride > self.window:
            raise ValueError(
                f"chunking.stride ({self.stride}) > chunking.window ({self.window}) would skip "
                "sentences; lower stride or raise window"
            )
        return self


class BM25Config(_Cfg):
    """Sparse retrieval with bm25s (see README for why not rank-bm25)."""

    k1: float = Field(1.2, gt=0)
    b: Probability = 0.75
    stemmer: Literal["english", "none"] = Field(
        "english", description="PyStemmer stemmer, or none."
    )
    stopwords: Literal["en", "none"] = "en"


class DenseConfig(_Cfg):
    """Dense retrieval: an encoder plus a FAISS index."""

    model: str = Field(
        "packaged:bge-small-en",
        description="packaged:NAME, local path or sentence-transformers hub id.",
    )
    query_prefix: str | None = Field(
        None,
        description="Prepended to queries; None = the model's own default (bge: its search instruction).",
    )
    max_length: int = Field(256, ge=8, le=8192, description="Tokens per passage.")
    batch_size: int = Field(
        8,
        ge=1,
        description="Passages per encoder call; small batches of length-sorted passages are "
        "fastest for the int8 model on a CPU (`purr bench batch`: 8 is 1.66x faster than 64).",
    )
    index_type: Literal["auto", "flat", "ivf", "hnsw"] = Field(
        "auto", description="auto = exact (flat) up to exact_max, IVF above."
    )
    exact_max: int = Field(
        50_000,
        ge=1,
        description="Largest corpus indexed exactly when index_type=auto (exact search over 100k "
        "passages already takes ~11 ms a query on 2 cores; IVF keeps recall@10 ~0.99).",
    )
    ivf_nprobe: int = Field(32, ge=1)
    hnsw_m: int = Field(32, ge=4)
    hnsw_ef_search: int = Field(64, ge=1)


class RerankConfig(_Cfg):
    """Cross-encoder snippet ranking with a calibrated 0-1 relevance."""

    enabled: bool = True
    model: str = Field(
        "packaged:ms-marco-minilm-l12",
        description="packaged:NAME, local path or HF cross-encoder id.",
    )
    max_length: int = Field(256, ge=16, le=1024)
    batch_size: int = Field(
        8,
        ge=1,
        description="Pairs per cross-encoder call (`purr bench batch`: 8 is 1.26x faster than 32).",
    )
    depth: int = Field(
        20,
        ge=1,
        le=1000,
        description="First-stage hits reranked by a search (cost grows linearly).",
    )
    matching_sentences: bool = Field(
        False,
        description="Score a window on its sentences that share a word with the query (fewer "
        "tokens a pair); the hit keeps its whole window.",
    )
    stop_at: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Score each query's first `probe` hits first; a query whose best relevance "
        "reaches this keeps them alone (null: score every hit).",
    )
    probe: int = Field(4, ge=1, description="Hits scored first per query under stop_at.")
    prefilter: str | None = Field(
        None,
        description="A cheaper cross-encoder (packaged:NAME, a folder or an HF id) that scores "
        "every hit first; only each query's `prefilter_keep` best are scored by `model`, and "
        "come first in its order (a cascade; null: `model` scores every hit). The others keep "
        "its relevance, calibrated as `model`'s: a student distilled from `model`.",
    )
    prefilter_keep: int = Field(
        2, ge=1, description="Hits per query `model` scores under prefilter."
    )
    calibration_scale: float = Field(
        0.2002,
        gt=0,
        description="Platt scaling: relevance = sigmoid(scale*logit + bias). Default fit on SciFact "
        "train (purr eval retrieval --calibrate): test ECE 0.232 -> 0.045.",
    )
    calibration_bias: float = -1.0659
    fuse_weight: Probability = Field(
        0.3,
        description="Final ranking mixes the first-stage fused score with this weight (0 = cross-encoder only).",
    )

    @model_validator(mode="after")
    def _one_shortcut(self) -> RerankConfig:
        if self.prefilter and self.stop_at is not None:
            raise ValueError(
                f"rerank.prefilter ({self.prefilter!r}) and rerank.stop_at ({self.stop_at}) both "
                "skip pairs of the main model: set one of them (the other null)"
            )
        return self


class SearchConfig(_Cfg):
    """First-stage search and fusion."""

    mode: Literal["bm25", "dense", "hybrid"] = "hybrid"
    fusion: Literal["rrf", "weighted"] = "rrf"
    rrf_k: int = Field(60, ge=1)
    dense_weight: Probability = Field(
        0.5, description="Weight of the dense score in weighted fusion."
    )
    candidates: int = Field(100, ge=1, description="Hits taken from each retriever before fusion.")


class IndexConfig(_Cfg):
    """What an index directory is made of; saved beside the index as config.json."""

    chunking: ChunkingConfig = Field(default_factory=ChunkingConfig)
    bm25: BM25Config = Field(default_factory=BM25Config)
    dense: DenseConfig = Field(default_factory=DenseConfig)
    dense_enabled: bool = Field(
        True, description="Build dense vectors (False = BM25 only, much faster to index)."
    )
    title_in_passage: bool = Field(
        True, description="Index 'title. snippet' so a window keeps its document's subject."
    )


class WebConfig(_Cfg):
    """Web research (``research.source`` web or both): the search provider and page fetching.
    Keys come from ``PURR_<PROVIDER>_API_KEY``, never from here."""

    provider: Literal["searxng", "brave", "serper", "tavily"] = Field(
        "searxng", description="Search provider."
    )
    url: str | None = Field(
        None,
        description="The provider's base URL (SearXNG: where /search answers; default: the "
        "hosted API's own, or http://127.0.0.1:8888 for SearXNG).",
    )
    results: int = Field(5, ge=1, le=50, description="Search results per query.")
    fetch: bool = Field(
        True, description="Fetch and extract result pages (false: the provider's snippets only)."
    )
    timeout_s: float = Field(10.0, gt=0, description="Timeout of each search or fetch request.")
    max_bytes: int = Field(2_000_000, ge=1000, description="Largest page body read.")
    concurrency: int = Field(8, ge=1, description="Page fetches in flight at once.")
    per_host: int = Field(2, ge=1, description="Page fetches in flight to one host.")
    retries: int = Field(
        2, ge=0, le=10, description="Retries of a search on 429 and 5xx (Retry-After kept)."
    )
    page_retries: int = Field(
        1,
        ge=0,
        le=10,
        description="Retries of a page on 429 and 5xx (one page of many: its provider snippet "
        "stands in when it fails).",
    )
    cache_dir: str | None = Field(
        None, description="Folder of the search and page cache (--web-cache); None: no cache."
    )
    cache_mode: Literal["rw", "ro", "refresh"] = Field(
        "rw", description="rw: read and fill; ro: read only, never send a request; refresh."
    )
    max_requests: int | None = Field(
        None, ge=0, description="Search requests one run may send (None: no cap)."
    )
    allow_networks: list[str] = Field(
        default_factory=list,
        description="Private networks (CIDR, e.g. 10.0.0.0/8) or host names result pages and "
        "redirects may reach; empty: the public internet only (loopback, private, link-local "
        "and metadata addresses are refused). The provider's own web.url is always trusted.",
    )
    requests_per_minute: int | None = Field(
        None, ge=1, description="Search requests in any 60 s (None: no cap)."
    )

    @field_validator("allow_networks")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        from retrieval.netguard import parse_allow

        parse_allow(value)  # a clear error for an entry that is neither network nor host
        return value
