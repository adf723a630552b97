"""Runtime settings read from ``PURR_*`` environment variables (never from experiment YAML)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_cache() -> Path:
    return Path.home() / ".cache" / "purr"


class Settings(BaseSettings):
    """Machine-specific settings: cache locations, server URLs, keys.

    Every field is read from ``PURR_<NAME>`` (e.g. ``PURR_CACHE_DIR``).
    """

    model_config = SettingsConfigDict(env_prefix="PURR_", extra="ignore")

    cache_dir: Path = Field(
        default_factory=_default_cache,
        description="Model conversions and the default index live here.",
    )
    default_index_dir: Path | None = Field(
        default=None,
        description="Where the default-corpus index is built; defaults to <cache_dir>/indexes/default.",
    )
    llm_base_url: str | None = Field(
        default=None,
        description="Base URL of an OpenAI-compatible server (e.g. http://127.0.0.1:8001/v1).",
    )
    llm_api_key: str | None = Field(
        default=None, description="API key sent as a bearer token to the LLM server."
    )
    brave_api_key: str | None = Field(
        default=None, description="Brave Search API key (web.provider=brave)."
    )
    serper_api_key: str | None = Field(
        default=None, description="Serper API key (web.provider=serper)."
    )
    tavily_api_key: str | None = Field(
        default=None, description="Tavily API key (web.provider=tavily)."
    )
    searxng_api_key: str | None = Field(
        default=None, description="Optional key for a SearXNG behind an authenticating proxy."
    )
    milvus_token: str | None = Field(
        default=None,
        description="Token for a Milvus server (--index http(s)://HOST:PORT): 'user:password' "
        "or an API key. Never needed for a Milvus Lite file.",
    )
    milvus_timeout_s: float = Field(
        default=10.0, gt=0, description="How long to wait for a Milvus server to answer."
    )
    threads: int = Field(
        default=0,
        ge=0,
        le=1024,
        description="CPU threads per model call (ONNX Runtime and torch); 0 = all cores, and "
        "under purr serve the cores shared between its workers (2 workers on 2 cores: 1 each). "
        "Set 1 when running several processes side by side (purr data make --shard), so they "
        "do not fight over the cores.",
    )
    batch: bool = Field(
        default=False,
        description="Join concurrent calls of each ONNX model into shared batches "
        "(retrieval.batching). Off by default: on 2 cores `purr bench serve --mix` served "
        "3.75 requests/s with it and 4.33 without.",
    )
    batch_wait_ms: float = Field(
        default=0.0,
        ge=0,
        le=100,
        description="Milliseconds a model call that finds the model idle waits for others to "
        "join it (0: none; calls that arrive while the model runs join the next run anyway).",
    )
    batch_max: int = Field(default=32, ge=1, le=1024, description="Most rows in one joined run.")
    priority: bool = Field(
        default=False,
        description="Model calls of the cheap lane's requests (purr serve's /v1/score and "
        "/v1/check) go first: other calls wait while one is in flight (retrieval.lanes).",
    )
    priority_max_wait_ms: float = Field(
        default=1000.0,
        ge=0,
        le=60000,
        description="Longest a model call waits for the cheap lane's requests (edits are "
        "slowed, never starved).",
    )
    offline: bool = Field(
        default=True, description="Never try to download from a model hub (sets HF_HUB_OFFLINE)."
    )

    def web_key(self, provider: str) -> str | None:
        """The key ``PURR_<PROVIDER>_API_KEY`` holds, if any."""
        return getattr(self, f"{provider}_api_key", None)

    @property
    def index_dir(self) -> Path:
        return self.default_index_dir or self.cache_dir / "indexes" / "default"
