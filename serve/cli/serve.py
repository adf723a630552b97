"""``purr serve`` (the edit API, chat wrapper and web page), ``purr mcp`` (tools for agents over
the Model Context Protocol, ``serve.mcp``) and ``purr serve-llm`` (an OpenAI-compatible server
for a local transformers model)."""

from __future__ import annotations

import argparse
import logging

from training.args import option

PACKAGED_CHAT = "packaged:smollm2-135m-instruct"


def register(sub: argparse._SubParsersAction, common) -> None:
    p = sub.add_parser("serve", help="HTTP API: /v1/edit, /v1/score, chat wrapper, web page")
    p.add_argument("--host", default="127.0.0.1", help="interface (0.0.0.0 for all)")
    p.add_argument("--port", type=int, default=8000)
    option(
        p,
        "--workers",
        int,
        None,
        "passages edited at once in this process (default PURR_WORKERS or 2)",
    )
    p.add_argument("--upstream", default=None, help="chat upstream URL (PURR_UPSTREAM_URL)")
    option(
        p,
        "--grace",
        int,
        None,
        "seconds in-flight requests get to finish after SIGTERM (default "
        "PURR_SHUTDOWN_GRACE_S or 30)",
    )
    common(p)
    p.set_defaults(handler=cmd_serve)

    m = sub.add_parser("mcp", help="tools for agents over the Model Context Protocol (stdio)")
    m.add_argument(
        "--http",
        default=None,
        metavar="[HOST:]PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST: 127.0.0.1 "
        "unless given; keys: PURR_API_KEYS); bind to a non-loopback host only behind TLS",
    )
    option(
        m,
        "--workers",
        int,
        None,
        "answers checked at once in this process (default PURR_WORKERS or 2)",
    )
    common(m)
    m.set_defaults(handler=cmd_mcp)

    q = sub.add_parser("serve-llm", help="OpenAI-compatible server for a local transformers LLM")
    q.add_argument(
        "--model",
        default="packaged",
        help="packaged (SmolLM2-135M-Instruct), packaged:NAME, a local path or a hub id",
    )
    q.add_argument("--name", default=None, help="model name clients send (default: from --model)")
    q.add_argument("--host", default="127.0.0.1")
    q.add_argument("--port", type=int, default=8001)
    option(q, "--max-new-tokens", int, 256, "default reply length")
    q.add_argument("--device", default="cpu", help="torch device (cpu, cuda)")
    q.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    q.set_defaults(handler=cmd_serve_llm)


def _check_port(port: int) -> None:
    if not 0 < port < 65536:
        raise ValueError(f"--port must be 1..65535, got {port}")


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline
    from serve.app import create_app
    from serve.cli.common import share_cores
    from serve.malloc import arenas_setting, limit_arenas
    from serve.settings import ServeSettings

    _check_port(args.port)
    limit_arenas(arenas_setting())  # before the thread pool allocates
    logging.getLogger().setLevel(logging.INFO if not args.verbose else logging.DEBUG)
    for handler in logging.getLogger().handlers:
        handler.setLevel(logging.getLogger().level)
    cfg = load_config(args.config, list(args.overrides))
    updates = {}
    if args.workers is not None:
        updates["workers"] = args.workers
    if args.upstream is not None:
        updates["upstream_url"] = args.upstream
    if args.grace is not None:
        if args.grace < 0:
            raise ValueError(f"--grace must be >= 0 seconds, got {args.grace}")
        updates["shutdown_grace_s"] = args.grace
    settings = ServeSettings(**updates) if updates else ServeSettings()
    threads = share_cores(settings.workers)  # before any model loads
    logging.getLogger(__name__).info(
        "%d workers, %d inference thread(s) per model call (PURR_THREADS)",
        settings.workers,
        threads,
    )
    pipeline = Pipeline(Components(cfg, index_path=args.index))
    app = create_app(pipeline, settings)
    # SIGTERM / Ctrl-C: uvicorn stops accepting, waits up to the grace period for the requests
    # in flight to be answered, then runs the lifespan's shutdown and exits
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level="info",
        timeout_keep_alive=30,
        timeout_graceful_shutdown=settings.shutdown_grace_s,
    )
    return 0


def _host_port(value: str) -> tuple[str, int]:
    """``HOST:PORT``, or ``PORT`` / ``:PORT`` on loopback.

    >>> _host_port("8765"), _host_port("0.0.0.0:80"), _host_port("[::1]:8765")
    (('127.0.0.1', 8765), ('0.0.0.0', 80), ('::1', 8765))
    """
    host, sep, port = value.rpartition(":")
    host = host or "127.0.0.1"  # loopback unless told otherwise
    if not port.isdigit():
        raise ValueError(f"--http must be HOST:PORT or PORT (e.g. 127.0.0.1:8765), got {value!r}")
    _check_port(int(port))
    return host.strip("[]"), int(port)


def cmd_mcp(args: argparse.Namespace) -> int:
    from retrieval.extras import require

    require("mcp", "purr mcp", ("mcp",))  # before any model loads
    import uvicorn

    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline
    from serve.cli.common import share_cores
    from serve.edit.service import EditService
    from serve.mcp.http import http_app
    from serve.mcp.server import build_server
    from serve.mcp.tools import AgentTools
    from serve.settings import ServeSettings

    where = _host_port(args.http) if args.http else None
    cfg = load_config(args.config, list(args.overrides))
    settings = ServeSettings(**({"workers": args.workers} if args.workers is not None else {}))
    share_cores(settings.workers)
    pipeline = Pipeline(Components(cfg, index_path=args.index, progress=False))
    service = EditService(pipeline, settings)
    service.start()  # the models load in the background; a call waits for them
    server = build_server(AgentTools(service))
    try:
        if where is None:
            server.run()  # stdio: the protocol on stdout, logs on stderr
        else:
            app = http_app(server, settings, where[0])
            uvicorn.run(app, host=where[0], port=where[1], log_level="warning")
    finally:
        service.close()
    return 0


def cmd_serve_llm(args: argparse.Namespace) -> int:
    import uvicorn

    from editor.llm.transformers_backend import TransformersBackend
    from retrieval.extras import require
    from serve.llm_server import create_llm_app

    require("llm", "purr serve-llm (a model on PyTorch)")  # before the server starts
    _check_port(args.port)
    if args.max_new_tokens < 1:
        raise ValueError(f"--max-new-tokens must be >= 1, got {args.max_new_tokens}")
    model = PACKAGED_CHAT if args.model == "packaged" else args.model
    name = args.name or model.removeprefix("packaged:").rstrip("/").rsplit("/", 1)[-1]
    backend = TransformersBackend(
        model, max_new_tokens=args.max_new_tokens, temperature=0.0, device=args.device
    )
    app = create_llm_app(backend, name)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0
