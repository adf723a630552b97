"""A client for any OpenAI-compatible server (``vllm serve``, llama.cpp server, hosted APIs).

One HTTP request per prompt or conversation, at most ``max_concurrency`` in flight, each with a
timeout and retried with exponential backoff on connection errors, timeouts, 429 and 5xx.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from editor.config import LLMConfig
from editor.llm.base import BackendBase, ChatMessage, LLMError, Sampling, apply_stop
from retrieval.settings import Settings

logger = logging.getLogger(__name__)

_START_HINT = (
    "start an OpenAI-compatible server (e.g. `vllm serve MODEL --port 8001`) "
    "or point llm.base_url / PURR_LLM_BASE_URL at a running one"
)


def normalize_base_url(url: str) -> str:
    """The API root ending in ``/v1`` (appended when missing).

    >>> normalize_base_url("http://127.0.0.1:8001/")
    'http://127.0.0.1:8001/v1'
    >>> normalize_base_url("https://openrouter.ai/api/v1")
    'https://openrouter.ai/api/v1'
    """
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"LLM base URL must start with http:// or https://, got '{url}'")
    return url if url.endswith("/v1") else url + "/v1"


class OpenAIBackend(BackendBase):
    """``LLMBackend`` over HTTP. ``model`` is the name the server serves the model under."""

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        max_concurrency: int = 8,
        max_new_tokens: int = 128,
        temperature: float = 0.7,
        backoff_s: float = 0.5,
        max_backoff_s: float = 8.0,
    ) -> None:
        if not model or not model.strip():
            raise ValueError("openai backend needs the served model name; set llm.model=NAME")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        super().__init__(max_new_tokens, temperature)
        self.model = model
        self.base_url = normalize_base_url(base_url)
        self.max_retries = max_retries
        self.max_concurrency = max_concurrency
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout_s),
            limits=httpx.Limits(max_connections=max_concurrency),
        )

    @classmethod
    def from_config(cls, cfg: LLMConfig, settings: Settings | None = None) -> OpenAIBackend:
        settings = settings or Settings()
        base_url = cfg.base_url or settings.llm_base_url
        if not base_url:
            raise ValueError(
                "llm.backend=openai needs a server URL: set llm.base_url "
                "(--set llm.base_url=http://127.0.0.1:8001/v1) or PURR_LLM_BASE_URL"
            )
        return cls(
            cfg.model,
            base_url,
            api_key=settings.llm_api_key,
            timeout_s=cfg.timeout_s,
            max_retries=cfg.max_retries,
            max_concurrency=cfg.max_concurrency,
            max_new_tokens=cfg.max_new_tokens,
            temperature=cfg.temperature,
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAIBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _complete(self, prompts: list[str], sampling: Sampling) -> list[list[str]]:
        return self._run("/completions", [{"prompt": p} for p in prompts], sampling)

    def _chat(self, conversations: list[list[ChatMessage]], sampling: Sampling) -> list[list[str]]:
        bodies = [{"messages": list(c)} for c in conversations]
        return self._run("/chat/completions", bodies, sampling)

    def _run(self, path: str, bodies: list[dict[str, Any]], sampling: Sampling) -> list[list[str]]:
        common: dict[str, Any] = {
            "model": self.model,
            "max_tokens": sampling.max_new_tokens,
            "temperature": sampling.temperature,
        }
        if sampling.stop:
            common["stop"] = list(sampling.stop)

        def one(body: dict[str, Any]) -> list[str]:
            texts = self._samples(path, {**common, **body}, sampling.n)
            return [apply_stop(t, sampling.stop) for t in texts]

        if len(bodies) <= 1:
            return [one(b) for b in bodies]
        workers = min(self.max_concurrency, len(bodies))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="purr-llm") as pool:
            return list(pool.map(one, bodies))

    def _samples(self, path: str, body: dict[str, Any], n: int) -> list[str]:
        """``n`` samples; asks again for the rest when a server returns fewer choices than n."""
        texts: list[str] = []
        while len(texts) < n:
            got = self._choices(path, {**body, "n": n - len(texts)})
            if not got:
                raise LLMError(f"LLM server at {self.base_url}{path} returned no choices")
            texts.extend(got)
        return texts[:n]

    def _choices(self, path: str, body: dict[str, Any]) -> list[str]:
        data = self._post(path, body)
        try:
            choices = sorted(data["choices"], key=lambda c: c.get("index", 0))
            if path == "/completions":
                return [c["text"] or "" for c in choices]
            return [c["message"].get("content") or "" for c in choices]
        except (KeyError, TypeError, AttributeError) as e:
            raise LLMError(
                f"LLM server at {self.base_url}{path} sent an unexpected response "
                f"(missing {e}); is it OpenAI-compatible? Body starts: {str(data)[:200]}"
            ) from None

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}{path}"
        last = ""
        retry_after: str | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                delay = self._delay(attempt, retry_after)
                logger.warning(
                    "LLM call to %s failed (%s); retry %d in %.2fs", url, last, attempt, delay
                )
                time.sleep(delay)
            try:
                response = self._client.post(path, json=body)
            except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as e:
                last, retry_after = f"{type(e).__name__}: {e}", None
                continue
            if response.status_code == 429 or response.status_code >= 500:
                last = f"HTTP {response.status_code}: {_error_message(response)}"
                retry_after = response.headers.get("retry-after")
                continue
            if response.status_code >= 400:
                raise LLMError(
                    f"LLM server at {url} rejected the request with HTTP {response.status_code}: "
                    f"{_error_message(response)} (is llm.model='{self.model}' the served name?)"
                )
            try:
                return response.json()
            except ValueError:
                raise LLMError(
                    f"LLM server at {url} returned non-JSON: {response.text[:200]}"
                ) from None
        raise LLMError(
            f"LLM server at {self.base_url} unreachable after {self.max_retries} retries: {last}; "
            f"{_START_HINT}"
        )

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        """Exponential backoff, at least a numeric Retry-After, at most ``max_backoff_s``."""
        delay = self.backoff_s * 2 ** (attempt - 1)
        if retry_after and retry_after.strip().isdigit():
            delay = max(delay, float(retry_after))
        return min(delay, self.max_backoff_s)


def _error_message(response: httpx.Response) -> str:
    """The message of an OpenAI-style error body, else the start of the body."""
    try:
        data = response.json()
        return str(data["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return response.text[:200] or response.reason_phrase
