"""The loopback web of the web-research tests (``serve.loopback_web``) with the tests' key."""

from __future__ import annotations

from functools import partial

from serve.loopback_web import ARTICLE, create_web_app

KEY = "sk-test-5ecret-KEY-0123456789"

create_web_app = partial(create_web_app, KEY)

__all__ = ["ARTICLE", "KEY", "create_web_app"]
