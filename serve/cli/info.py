"""``purr info``: what this install has: purr's version, Python, each extra (installed, or the
modules it lacks and the command that adds it), and what the chosen config leaves out here.

A fact of the install is said here (and by ``purr edit --verbose``), never in every result.
"""

from __future__ import annotations

import argparse
import json
import platform
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from training.args import switch

FEATURES = {
    "train": "purr train, purr data jobs with a model",
    "llm": "the causal, prompted and FiD editors on local weights; purr serve-llm",
    "hub": "models by hub id (verifiers, rerankers, encoders on PyTorch)",
    "mcp": "purr mcp: tools for agents over the Model Context Protocol",
    "milvus": "corpora in Milvus (Lite files or a server)",
    "ray": "batch jobs on a Ray cluster (--ray)",
    "langchain": "PurrEdit, a LangChain runnable",
    "llamaindex": "PurrQueryEngine, a LlamaIndex query engine",
}
"""What each extra brings, in the order ``purr info`` lists them."""


def install_info(cfg) -> dict[str, Any]:
    """The install as JSON: version, Python, each extra's missing modules, what ``cfg`` skips."""
    from editor.installed import skipped
    from retrieval.extras import hint, missing

    try:
        purr = version("purr-edit")
    except PackageNotFoundError:  # run from a checkout that was never installed
        purr = "not installed"
    extras = {}
    for name, what in FEATURES.items():
        lacks = missing(name)
        extras[name] = {
            "installed": not lacks,
            "brings": what,
            "missing": lacks,
            "install": None if not lacks else hint(name),
        }
    return {
        "purr": purr,
        "python": platform.python_version(),
        "extras": extras,
        "skipped": skipped(cfg),
    }


def cmd_info(args: argparse.Namespace) -> int:
    from serve.cli.common import config_from

    info = install_info(config_from(args))
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"purr {info['purr']} on Python {info['python']}")
    print("\nextras")
    for name, e in info["extras"].items():
        state = "installed" if e["installed"] else f"missing {', '.join(e['missing'])}"
        print(f"  {name:<11}{state}: {e['brings']}")
        if e["install"]:
            print(f"  {'':<11}add with: {e['install']}")
    print(f"\nthe '{args.config}' config on this install")
    for part in info["skipped"] or ["runs whole: nothing is left out"]:
        print(f"  {part}")
    return 0


def register(sub: argparse._SubParsersAction, common) -> None:
    p = sub.add_parser("info", help="what this install has: the extras and what a config skips")
    switch(p, "--json", "print it as JSON")
    common(p, index=False)
    p.set_defaults(handler=cmd_info)
