"""Services live on ``app.state`` (built in the lifespan) and reach routes through ``Depends``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Request


def from_state(name: str) -> Callable[[Request], Any]:
    """A dependency returning ``request.app.state.<name>``; a clear error if the app was run
    without its lifespan (the service is built there)."""

    def get(request: Request) -> Any:
        service = getattr(request.app.state, name, None)
        if service is None:
            raise RuntimeError(f"{name} not started; run the app with its lifespan (uvicorn)")
        return service

    get.__name__ = f"get_{name}"
    return get
