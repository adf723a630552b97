"""``POST /v1/extract``: an HTML page's main text, extracted as web research extracts fetched
pages (``retrieval.web.extract``), so a document dropped on the web page as ``.html`` reads as
its article, not its navigation."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from serve.edit.protocol import ExtractRequest, ExtractResponse
from serve.errors import ApiError

if TYPE_CHECKING:
    from serve.edit.service import EditService


async def extract(svc: EditService, req: ExtractRequest) -> ExtractResponse:
    """The title and main text of ``req.html``; 422 ``no_text`` where the page has none."""
    from retrieval.web.extract import extract_main_text

    seconds = svc.settings.deadline_s
    try:
        title, text = await svc.run_cheap(
            lambda: extract_main_text(req.html), time.monotonic() + seconds
        )
    except TimeoutError:
        raise ApiError(
            504, f"extraction did not finish within {seconds:g} s", "deadline_exceeded"
        ) from None
    if not text.strip():
        raise ApiError(
            422,
            "no article text was found in this page; paste the text you want checked instead",
            "no_text",
            "html",
        )
    return ExtractResponse(title=title, text=text)
