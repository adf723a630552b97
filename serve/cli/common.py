"""What every command shares: ``--config/--set/-v``, the resolved config, the errors shown as a
one-line message (exit 2) instead of a traceback.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import sys

from editor.config import ConfigError, PipelineConfig, load_config
from retrieval.assets import AssetNotFoundError
from retrieval.corpus import CorpusError
from retrieval.extras import MissingExtraError
from retrieval.files import OutputError
from retrieval.index import IndexNotFoundError
from training.args import option

log = logging.getLogger("purr")

USER_ERRORS = (
    ConfigError,
    CorpusError,
    IndexNotFoundError,
    MissingExtraError,
    AssetNotFoundError,
    FileExistsError,
    FileNotFoundError,
    OutputError,
    ValueError,
)

MAX_QUERY_CHARS = 10_000


def web_cache_overrides(args: argparse.Namespace) -> None:
    """``--web-cache DIR`` and ``--web-cache-mode`` as config overrides."""
    overrides = getattr(args, "overrides", None)
    if overrides is None:
        return
    if getattr(args, "web_cache", None):
        overrides.append(f"web.cache_dir={args.web_cache}")
    if getattr(args, "web_cache_mode", None):
        overrides.append(f"web.cache_mode={args.web_cache_mode}")


def add_common(p: argparse.ArgumentParser, index: bool = True) -> None:
    p.add_argument(
        "--config", default="default", help="preset name (configs/NAME.yaml) or a YAML path"
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field, e.g. --set search.mode=bm25 (repeatable)",
    )
    if index:
        p.add_argument(
            "--index",
            default=None,
            help="index: a folder, a Milvus Lite FILE.db or a Milvus http(s):// URI (default: the "
            "packaged Wikipedia index, built on first use)",
        )
        p.add_argument(
            "--web-cache",
            default=None,
            metavar="DIR",
            help="with research.source=web|both: cache search responses and pages in DIR "
            "(web.cache_dir)",
        )
        p.add_argument(
            "--web-cache-mode",
            choices=("rw", "ro", "refresh"),
            default=None,
            help="rw: read and fill (default); ro: read only, send no request; refresh",
        )
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")


def config_from(args: argparse.Namespace) -> PipelineConfig:
    overrides = list(args.overrides)
    if getattr(args, "mode", None):
        overrides.append(f"search.mode={args.mode}")
    if getattr(args, "no_rerank", False):
        overrides.append("rerank.enabled=false")
    if getattr(args, "querygen", None):
        overrides.append(f"querygen.type={args.querygen}")
    if getattr(args, "no_dense", False):
        overrides.append("index.dense_enabled=false")
    return load_config(args.config, overrides)


def check_query(text: str, what: str = "query") -> str:
    if not text.strip():
        raise ValueError(
            f'the {what} is empty; pass some text, e.g. purr search "who built the Eiffel Tower"'
        )
    if len(text) > MAX_QUERY_CHARS:
        log.warning(
            "%s is %d characters; only the first %d are used", what, len(text), MAX_QUERY_CHARS
        )
        return text[:MAX_QUERY_CHARS]
    return text


def interrupted(stop, written: int) -> int:
    """Say that a batch job stopped on a signal and how to resume; the exit code (128 + signal)."""
    return resume_hint(stop.name, stop.exit_code, written)


def resume_hint(signal: str, exit_code: int, written: int) -> int:
    """Say that a job stopped on ``signal`` after ``written`` rows and how to resume it; the
    exit code to end with."""
    command = " ".join(shlex.quote(a) for a in ["purr", *sys.argv[1:]])
    print(
        f"purr: interrupted by {signal} after writing {written} new row(s); everything "
        f"written is kept. Resume with:\n  {command}",
        file=sys.stderr,
    )
    return exit_code


def limit_threads() -> None:
    """Apply ``PURR_THREADS`` to torch (ONNX Runtime reads it per session). Torch is not
    imported for it: where it is not loaded yet, ``OMP_NUM_THREADS`` (unless set) carries the
    count to its import, so the default path stays free of it."""
    import os
    import sys

    from retrieval.settings import Settings

    threads = Settings().threads
    if not threads:
        return
    torch = sys.modules.get("torch")
    if torch is None:
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        return
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(threads)
    except RuntimeError:  # set once per process, or too late: the pool it has stays
        pass


def share_cores(workers: int) -> int:
    """``purr serve``'s inference threads per model call: ``PURR_THREADS`` when set, else the
    cores shared out between the edit ``workers`` (at least one each), so that edit workers x
    threads is the machine's cores (the cheap lane's thread, mostly idle, is not counted).

    On 2 cores, 2 workers of 1 thread served 4.96 requests/s under ``purr bench serve --mix``
    where 2 workers of 2 threads served 2.45 (one run, the same build): two requests whose
    model calls each spread over every core only get in each other's way."""
    import os

    from retrieval.settings import Settings

    if Settings().threads:
        return Settings().threads
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = max(1, (cores or 1) // max(1, workers))
    os.environ["PURR_THREADS"] = str(threads)  # read by every ONNX session made from here on
    limit_threads()
    return threads


def add_ray_args(p: argparse.ArgumentParser, batch_size: bool = False) -> None:
    """``--ray [ADDRESS]``, ``--ray-workers`` (and ``--ray-batch-size``) of the batch commands."""
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="with --input: run the rows on a pool of Ray actors, each loading the pipeline "
        "once (HOST:PORT or ray://HOST:10001 of a cluster; none: a local cluster). "
        "pip install 'purr-edit[ray]'",
    )
    option(p, "--ray-workers", int, 2, "actors in the pool (with --ray)")
    if batch_size:
        option(p, "--ray-batch-size", int, 4, "rows per actor call (with --ray)")


def ray_job(args: argparse.Namespace):
    """The ``RayJob`` of ``--ray`` (None without it)."""
    if getattr(args, "ray", None) is None:
        return None
    from retrieval.milvus_client import MilvusTarget, is_milvus
    from training.jobs.ray_pool import RayJob

    index = getattr(args, "index", None)
    if is_milvus(index) and not MilvusTarget.parse(index).server:
        raise ValueError(
            f"--ray starts several processes, and the Milvus Lite file {index} serves one; serve "
            f"it with `milvus-lite server --data-dir {index.split('#')[0]} --port 19530` and pass "
            "--index http://HOST:19530, or use a Milvus server"
        )
    return RayJob(args.ray or None, args.ray_workers, getattr(args, "ray_batch_size", 1))
