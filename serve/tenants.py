"""Who a request is for: the tenant whose part of the research cache it reads and fills.

A request carrying a bearer key is its key's tenant (``quota.key_id``: a digest, never the key);
any other is ``anonymous``. With ``PURR_API_KEYS`` set, only accepted keys reach a route (the
guard answers 401 first), so tenants are exactly the deployment's keys.
"""

from __future__ import annotations

from fastapi import Request

from serve.quota import key_id

ANONYMOUS = "anonymous"


def tenant_of(request: Request) -> str:
    """The request's tenant (a FastAPI dependency).

    >>> from starlette.requests import Request as R
    >>> tenant_of(R({"type": "http", "headers": [(b"authorization", b"Bearer k")]}))
    'sha256:8254c329a928'
    >>> tenant_of(R({"type": "http", "headers": []}))
    'anonymous'
    """
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    token = token.strip()
    return key_id(token) if scheme.lower() == "bearer" and token else ANONYMOUS
