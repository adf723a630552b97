"""Runtime settings of ``purr serve``, read from ``PURR_*`` environment variables.

PURR_API_KEYS=key1,key2          bearer keys accepted (unset: no authentication)
PURR_UPSTREAM_URL=http://127.0.0.1:8001/v1   the chat model behind /v1/chat/completions
PURR_CORS_ORIGINS=https://app.example.com    origins allowed to call the API from a browser
PURR_KEY_PER_MINUTE=600 PURR_KEY_CONCURRENT=16  quotas per API key
"""

from __future__ import annotations

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


class ServeSettings(BaseSettings):
    """Limits, keys and the upstream of the HTTP service (``PURR_<NAME>``)."""

    model_config = SettingsConfigDict(env_prefix="PURR_", extra="ignore")

    api_keys: str | None = Field(
        None,
        description="Comma-separated API keys; when set, every /v1 call needs one as a bearer.",
    )
    cors_origins: str | None = Field(
        None, description="Comma-separated origins allowed by CORS ('*' for any); unset: none."
    )
    upstream_url: str | None = Field(
        None, description="OpenAI-compatible base URL the chat wrapper forwards to (…/v1)."
    )
    upstream_api_key: str | None = Field(None, description="Bearer key sent to the upstream.")
    upstream_model: str | None = Field(
        None, description="Model name to send upstream when the request names none."
    )
    upstream_timeout_s: float = Field(120.0, gt=0, description="Upstream request timeout.")
    max_body_bytes: int = Field(
        512 * 1024, ge=1024, description="Largest request body accepted (bytes)."
    )
    body_timeout_s: float = Field(
        30.0, gt=0, description="A body that has not arrived whole by then answers 408."
    )
    max_batch: int = Field(16, ge=1, description="Most passages in one /v1/edit/batch call.")
    max_evidence: int = Field(64, ge=1, description="Most evidence texts in one request.")
    deadline_s: float = Field(
        60.0,
        gt=0,
        description="Per-request deadline; past it the original text comes back degraded.",
    )
    workers: int = Field(
        2, ge=1, le=64, description="Passages edited at once (threads sharing the loaded models)."
    )
    max_queue: int = Field(
        64,
        ge=0,
        description="Most model calls waiting for a worker; past it a request answers 503 "
        "(code overloaded, Retry-After) at once instead of queueing.",
    )
    cheap_workers: int = Field(
        1,
        ge=0,
        le=64,
        description="Threads of the cheap lane: /v1/score and /v1/check (given sources, no "
        "research) run there, never queued behind edits (0: they share the edit workers).",
    )
    research_cache: int = Field(
        4096,
        ge=0,
        description="Queries whose evidence the service keeps, per tenant (an API key; "
        "anonymous without one), so a repeated query is not researched again (0: no cache).",
    )
    research_cache_ttl_s: float = Field(
        3600.0, gt=0, description="Seconds a cached query's evidence stays valid."
    )
    key_per_minute: int = Field(
        600,
        ge=0,
        description="Requests one API key may send in any 60 s (429 rate_limited with "
        "Retry-After past it; 0: no limit). Applies when PURR_API_KEYS is set.",
    )
    key_concurrent: int = Field(
        16,
        ge=0,
        description="Requests of one API key in flight at once (429 past it; 0: no limit), so "
        "one client cannot fill every worker and the queue.",
    )
    warmup: bool = Field(True, description="Load the models and index at start-up.")
    retry_after_s: int = Field(
        10, ge=1, description="Retry-After (seconds) sent with 503 while the models load."
    )
    shutdown_grace_s: int = Field(
        30,
        ge=0,
        description="On SIGTERM: stop accepting, let in-flight requests finish for up to this "
        "long, then exit.",
    )

    @field_validator("upstream_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(
                f"PURR_UPSTREAM_URL must start with http:// or https://, got {value!r}"
            )
        return value.rstrip("/") if value else value

    def keys(self) -> set[str]:
        """The accepted API keys (empty: authentication off).

        >>> sorted(ServeSettings(api_keys="a, b,").keys())
        ['a', 'b']
        """
        return set(_split(self.api_keys))

    def origins(self) -> list[str]:
        return _split(self.cors_origins)
