"""The ``purr`` command line: one table of commands (``COMMANDS``). Each module here registers
its subcommands with ``register(sub, common)``, where ``common`` adds the shared
``--config/--set/-v`` (and ``--index``); printing happens only in this package.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import sys

from serve.cli.common import USER_ERRORS, add_common, limit_threads, web_cache_overrides
from training.eval import EVALUATIONS

log = logging.getLogger("purr")

COMMANDS = (
    "index",
    "research",
    "edit",
    "check",
    "score",
    "eval",
    "train",
    "data",
    "bench",
    "serve",
    "info",
)
"""The modules of ``serve.cli`` that register commands, in the order ``purr --help`` lists them."""

DEPRECATED = {
    "eval-attribution": ["eval", "attribution"],
    "eval-retrieval": ["eval", "retrieval"],
}
"""Old spellings that still work for one release, with a warning: ``purr eval FILE`` is
``purr eval edits FILE``."""

_EVAL = {*EVALUATIONS, "-h", "--help"}


def _modern(argv: list[str]) -> list[str]:
    """``argv`` with a deprecated spelling replaced by the current one (and a warning)."""
    if argv and argv[0] in DEPRECATED:
        new = DEPRECATED[argv[0]]
    elif len(argv) > 1 and argv[0] == "eval" and argv[1] not in _EVAL:
        new = ["eval", "edits"]
    else:
        return argv
    print(
        f"purr: '{argv[0]}' is deprecated and goes in the next release; use 'purr {' '.join(new)}'",
        file=sys.stderr,
    )
    return new + argv[1:]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="purr", description="Research and revise LLM outputs against evidence."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"serve.cli.{name}").register(sub, add_common)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = _modern(sys.argv[1:] if argv is None else list(argv))
    args = parser.parse_args(argv)
    args.argv = tuple(argv)  # what the user typed: folders record the command that made them
    level = logging.DEBUG if getattr(args, "verbose", False) else logging.WARNING
    stream = logging.StreamHandler()
    stream.setLevel(level)  # some libraries force their own loggers to DEBUG on import
    logging.basicConfig(
        level=level, format="%(levelname)s %(name)s: %(message)s", handlers=[stream]
    )
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.error(f"no handler for '{args.command}'")
    try:
        limit_threads()
        web_cache_overrides(args)
        return handler(args)
    except USER_ERRORS as e:
        print(f"purr {args.command}: error: {e}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:  # a feature of an extra the core install leaves out
        from retrieval.extras import extra_of, message

        extra = extra_of(e.name or "")
        if extra is None:
            raise
        what = message(extra, f"purr {args.command}", [e.name])
        print(f"purr {args.command}: error: {what}", file=sys.stderr)
        return 2
    except OSError as e:  # a full disk, a file-size limit, a read-only or forbidden path
        from retrieval.files.errors import WRITE_ERRNOS, output_error

        if e.errno not in WRITE_ERRNOS:
            raise
        print(f"purr {args.command}: error: {output_error(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        # The process ends next: move every object out of the collector's reach, so that
        # interpreter shutdown does not walk the model graphs (about 0.9 s after an edit).
        gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
