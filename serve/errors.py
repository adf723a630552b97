"""One error shape for every failure of every purr server (OpenAI's, so OpenAI clients parse it):

    {"error": {"message": "...", "type": "invalid_request_error", "param": null, "code": "..."}}

``ApiError`` is raised by services and routers; ``install_error_handlers(app)`` turns it, request
validation errors, HTTP errors, ``ValueError`` and any crash into that shape, so no request ever
gets an HTML error page or a bare traceback.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from serve.llm_protocol import ErrorInfo, ErrorResponse

logger = logging.getLogger(__name__)

# the OpenAI error types by status
_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    408: "timeout_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    502: "upstream_error",
    503: "service_unavailable",
    504: "timeout_error",
}


def documented(descriptions: dict[int, str]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` declaring the error shape for each status."""
    return {code: {"model": ErrorResponse, "description": d} for code, d in descriptions.items()}


ERROR_RESPONSES = documented(
    {
        400: "Malformed request (invalid JSON, not UTF-8, too deep, bad value)",
        401: "Missing or wrong API key",
        408: "The body did not arrive whole before the body timeout",
        413: "Body, text or batch over the limit",
        415: "The body is not sent as application/json",
        422: "A field has the wrong type or is missing",
        429: "Over this API key's quota (PURR_KEY_PER_MINUTE, PURR_KEY_CONCURRENT; Retry-After)",
        500: "The server failed",
    }
)
UPSTREAM_RESPONSES = documented(
    {
        404: "The upstream does not serve the model",
        502: "The upstream is unreachable or answered with an error",
        503: "No upstream is configured",
        504: "The upstream did not answer before the deadline",
    }
)


@dataclass(eq=False, repr=False)  # an exception: compared and shown as one
class ApiError(Exception):
    """An error with its HTTP status; the message says what was wrong and what to do."""

    status: int
    message: str
    code: str | None = None
    param: str | None = None
    headers: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)


def error_body(
    status: int, message: str, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    """The JSON body of an error.

    >>> error_body(401, "bad key", "invalid_api_key")["error"]["type"]
    'authentication_error'
    """
    type_ = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    info = ErrorInfo(message=message, type=type_, param=param, code=code)
    return ErrorResponse(error=info).model_dump()


async def send_error(
    send: Callable[[dict[str, Any]], Awaitable[None]],
    status: int,
    message: str,
    code: str,
    headers: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    """An error in the one shape, sent by ASGI middleware that answers before any route."""
    body = json.dumps(error_body(status, message, code)).encode()
    start = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": [*start, *headers]})
    await send({"type": "http.response.body", "body": body})


def error_response(
    status: int,
    message: str,
    code: str | None = None,
    param: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(
        status_code=status,
        content=error_body(status, message, code, param),
        headers=dict(headers) if headers else None,
    )


def _validation_message(exc: RequestValidationError) -> tuple[int, str, str | None]:
    return validation_message(exc.errors())


def validation_message(
    errors: Sequence[Any], schema: str = "the schema at /docs"
) -> tuple[int, str, str | None]:
    """The status, message and first wrong field of a request's validation ``errors``
    (pydantic's ``errors()``), worded once for the HTTP API and the MCP tools."""
    parts, param = [], None
    for err in errors:
        loc = [str(p) for p in err.get("loc", ()) if p != "body"]
        where = ".".join(loc)
        param = param or where or None
        if err.get("type") == "json_invalid":
            ctx = err.get("ctx") or {}
            return 400, f"the body is not valid JSON ({ctx.get('error', 'parse error')})", None
        msg = err.get("msg")
        if (
            err.get("type") == "string_pattern_mismatch"
            and (err.get("ctx") or {}).get("pattern") == r"\S"
        ):
            parts.append(f"{where or 'text'} is empty; pass the passage to check")
            continue
        parts.append(f"{where}: {msg}" if where else str(msg))
    return 422, "; ".join(parts) + f" (see {schema})", param


def install_error_handlers(
    app: FastAPI, status_for_validation: int | None = None, openai_prefix: str = "/v1/chat/"
) -> None:
    """Every failure of ``app`` answers in the one error shape.

    ``status_for_validation`` forces one status for invalid bodies; routes under
    ``openai_prefix`` answer 400 for them, as OpenAI's API does (elsewhere 422)."""

    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.code, exc.param, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        status, message, param = _validation_message(exc)
        if request.url.path.startswith(openai_prefix):
            status = 400
        status = status_for_validation or status
        code = "invalid_json" if message.startswith("the body is not valid JSON") else None
        return error_response(status, message, code or "invalid_request", param)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(exc.status_code, str(exc.detail), None, None, exc.headers)

    @app.exception_handler(ValueError)
    async def _bad_value(_: Request, exc: ValueError) -> JSONResponse:
        return error_response(400, str(exc), "invalid_request")

    @app.exception_handler(Exception)
    async def _crashed(_: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error")
        return error_response(500, f"internal error: {type(exc).__name__}: {exc}", "internal")
