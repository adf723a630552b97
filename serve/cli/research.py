"""``purr research`` and ``purr config``."""

from __future__ import annotations

import argparse
import json
import time

from editor.config import dump_config
from serve.cli.common import check_query, config_from


def cmd_research(args: argparse.Namespace) -> int:
    from editor.factory import Components
    from serve.render import research_json

    text = check_query(args.text, "text")
    cfg = config_from(args)
    comp = Components(cfg, index_path=args.index)
    researcher = comp.researcher  # opens (or, on first use, builds) the index
    t = time.perf_counter()
    run = researcher.run([text], [args.context])
    total = (time.perf_counter() - t) * 1000
    results, tm = run.results[0], run.timings
    timings = {
        "querygen": tm.querygen_ms,
        "retrieval": tm.retrieval_ms,
        "rerank": tm.rerank_ms,
        "total": total,
    }
    payload = research_json(text, args.context, results, timings)
    if args.json:
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return 0
    from rich.console import Console

    console = Console()
    console.print(f"[bold]{len(results)} queries[/] ({cfg.querygen.type}), {total:.0f} ms")
    for qe in results:
        console.print(f"\n[bold]? {qe.query.text}[/]")
        for ev in qe.evidence:
            console.print(f"  [cyan]{ev.title}[/] [dim]({ev.id}, relevance {ev.relevance:.2f})[/]")
            console.print(f"  {ev.text}", highlight=False)
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    print(dump_config(config_from(args)), end="")
    return 0


def register(sub, common) -> None:
    """``purr research`` and ``purr config``."""
    p = sub.add_parser("research", help="generate questions about a passage and gather evidence")
    p.add_argument("text")
    p.add_argument("--context", default=None, help="the dialogue the passage answers")
    p.add_argument(
        "--querygen",
        choices=["sentence", "entity", "llm", "passage"],
        default=None,
        help="query generator (overrides querygen.type)",
    )
    p.add_argument("--json", action="store_true")
    common(p)
    p.set_defaults(handler=cmd_research)

    p = sub.add_parser("config", help="print the resolved configuration")
    common(p, index=False)
    p.set_defaults(handler=cmd_config)
