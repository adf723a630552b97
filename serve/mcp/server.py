"""``build_server(tools)``: purr's tools for agents on the official MCP SDK (``mcp``).

Each tool is a thin call into ``AgentTools`` (the HTTP API's ``EditService``): the same
limits, deadlines, worker threads and error codes. Arguments are validated strictly (unknown
fields and wrong types refused) before a tool runs; a refused call, like any ``ApiError``, is a
tool result with ``isError`` and the HTTP API's error body (``{"error": {message, type, param,
code}}``) as its structured content, so the server keeps answering. An edit reports progress
(one notification per stage) and, cancelled, stops waiting at once: work not yet started is
dropped, work under way finishes on its thread and is discarded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from editor.edit_run import STAGES
from serve.edit.protocol import NON_BLANK, CheckResponse, CheckSource, ResearchResponse
from serve.errors import ApiError, error_body, validation_message
from serve.mcp.protocol import AnswerCheck, AnswerEdit, Document
from serve.mcp.tools import AgentTools
from serve.quota import key_id
from serve.tenants import ANONYMOUS

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "purr checks an answer against sources and fixes only what they prove wrong. Call "
    "check_answer or edit_answer before you give an answer that states facts, with the "
    "documents you wrote it from; research finds evidence in purr's index or on the web."
)

Text = Annotated[str, Field(pattern=NON_BLANK, description="The answer to check, as written.")]
Question = Annotated[str | None, Field(description="The question or conversation turn it answers.")]
Documents = Annotated[
    list[Document] | None,
    Field(
        description="The documents it was written from (its [1] is the first); without "
        "them purr researches its own index."
    ),
]


def _error(e: ApiError) -> CallToolResult:
    body = error_body(e.status, e.message, e.code, e.param)
    return CallToolResult(
        content=[TextContent(type="text", text=f"{e.code}: {e.message}")],
        structured_content=body,
        is_error=True,
    )


def _ok(model: BaseModel) -> CallToolResult:
    data = model.model_dump(mode="json")
    text = json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _tenant(ctx: Context) -> str:
    scheme, _, token = ((ctx.headers or {}).get("authorization") or "").partition(" ")
    return key_id(token.strip()) if scheme.lower() == "bearer" and token.strip() else ANONYMOUS


class _Stages:
    """An edit's stages as MCP progress notifications, sent from the worker thread."""

    def __init__(self, ctx: Context) -> None:
        self.ctx, self.loop = ctx, asyncio.get_running_loop()
        self.sent: list[concurrent.futures.Future[None]] = []
        self.closed = False  # the call has answered (or given up): a late stage says nothing

    def __call__(self, stage: str) -> None:
        if self.closed:
            return
        step = STAGES.index(stage) + 1 if stage in STAGES else 0
        self.sent.append(
            asyncio.run_coroutine_threadsafe(
                self.ctx.report_progress(step, len(STAGES) + 1, message=stage), self.loop
            )
        )

    async def finish(self) -> None:
        self.closed = True
        await asyncio.gather(*(asyncio.wrap_future(f) for f in self.sent), return_exceptions=True)
        await self.ctx.report_progress(len(STAGES) + 1, len(STAGES) + 1, message="done")


async def _staged(ctx: Context, work: Callable[[_Stages], Awaitable[BaseModel]]) -> CallToolResult:
    """``work`` with its stages reported as progress; its ``ApiError`` as a tool error."""
    stages = _Stages(ctx)
    try:
        out = await work(stages)
    except ApiError as e:
        return _error(e)
    finally:
        stages.closed = True
    await stages.finish()
    return _ok(out)


def build_server(tools: AgentTools) -> MCPServer:
    """The MCP server over ``tools`` (stdio: ``server.run()``; HTTP: ``serve.mcp.http``)."""

    async def edit_answer(
        text: Text,
        ctx: Context,
        question: Question = None,
        documents: Documents = None,
        apply_unsure: Annotated[
            bool, Field(description="Also apply the fixes purr is unsure of (default: suggest).")
        ] = False,
    ) -> Annotated[CallToolResult, AnswerEdit]:
        """Fix an answer where its sources prove it wrong, before you send it. Returns the
        revised text, each change ([-old-]{+new+} and with offsets), the words purr doubts with
        a suggested fix, the citations and the attribution scores."""
        return await _staged(
            ctx,
            lambda p: tools.edit_answer(text, question, documents, apply_unsure, p, _tenant(ctx)),
        )

    async def check_answer(
        text: Text, ctx: Context, question: Question = None, documents: Documents = None
    ) -> Annotated[CallToolResult, AnswerCheck]:
        """Check an answer without changing it: each sentence's verdict (supported,
        contradicted, unverified), the words its sources contradict and the fix they suggest.
        Call it to decide whether an answer can be trusted as it is."""
        return await _staged(
            ctx, lambda p: tools.check_answer(text, question, documents, p, _tenant(ctx))
        )

    async def research(
        query: Annotated[str, Field(pattern=NON_BLANK, description="What to look up.")],
        k: Annotated[int, Field(ge=1, le=50, description="How many snippets.")] = 5,
    ) -> Annotated[CallToolResult, ResearchResponse]:
        """Find evidence for a question in purr's index (or on the web where configured):
        snippets with their titles and sources, best first. Call it when you need sources to
        answer from or to check a claim against."""
        try:
            return _ok(await tools.research(query, k))
        except ApiError as e:
            return _error(e)

    async def check_citations(
        text: Annotated[str, Field(pattern=NON_BLANK, description="A text with [1] markers.")],
        sources: Annotated[
            list[CheckSource], Field(min_length=1, description="The sources, by marker id.")
        ],
    ) -> Annotated[CallToolResult, CheckResponse]:
        """Check whether each citation of a cited text ([1], [2]) supports its sentence:
        per-sentence outcomes, citation precision and recall. Call it on a RAG answer that
        cites its sources, to find the citations that do not hold."""
        try:
            return _ok(await tools.check_citations(text, sources))
        except ApiError as e:
            return _error(e)

    made = [
        _strict(Tool.from_function(fn))
        for fn in (edit_answer, check_answer, research, check_citations)
    ]
    server: MCPServer = MCPServer(
        "purr", version="0.1.0", instructions=INSTRUCTIONS, tools=made, log_level="WARNING"
    )
    server.middleware.append(_refuse_invalid({t.name: t.fn_metadata for t in made}))
    return server


def _strict(tool: Tool) -> Tool:
    """``tool`` whose arguments refuse unknown fields and values of the wrong type."""
    base = tool.fn_metadata.arg_model
    config = ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)
    strict: Any = type(
        base.__name__, (base,), {"model_config": config, "__module__": base.__module__}
    )
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)
    return tool


def _refuse_invalid(metas: dict[str, Any]) -> Callable[..., Any]:
    """Middleware: a call whose arguments do not validate gets the HTTP API's 422 body. The
    arguments are read as the SDK reads them (JSON in a string parsed first: some clients send
    lists that way), so the check and the call see the same values."""

    async def check(ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        params = (ctx.params if ctx.method == "tools/call" else None) or {}
        meta = metas.get(params.get("name", ""))
        if meta is not None:
            args = params.get("arguments") or {}
            try:
                if not isinstance(args, dict):
                    raise TypeError
                meta.arg_model.model_validate(meta.pre_parse_json(args))
            except ValidationError as e:
                errors = [x for x in e.errors() if x.get("loc", ("",))[0] != "ctx"]
                status, message, param = validation_message(errors, "the tool's input schema")
                return _error(ApiError(status, message, "invalid_request", param))
            except TypeError:
                return _error(ApiError(422, "arguments must be an object", "invalid_request"))
        return await call_next(ctx)

    return check
