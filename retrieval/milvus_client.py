"""Where a Milvus index lives and how to reach it: ``FILE.db`` (embedded Milvus Lite) or a
server URI, an optional ``#COLLECTION``, the token from ``PURR_MILVUS_TOKEN``, and Milvus's
failures turned into one-line errors that name the fix. pymilvus is imported lazily: it is the
optional extra ``purr-edit[milvus]``."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from retrieval.extras import MissingExtraError
from retrieval.index import CONFIG_FILE, IndexNotFoundError

DEFAULT_COLLECTION = "purr"
INSTALL = "pip install 'purr-edit[milvus]'"
_SERVER = re.compile(r"^(https?|tcp|grpc)://", re.IGNORECASE)
_AUTH = re.compile(r"\bauth|unauthenticated|credential|password|permission|\btoken\b")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,200}$")


class MilvusUnavailableError(IndexNotFoundError):
    """Milvus could not be reached, refused the token, or failed a request."""


def is_milvus(ref: str | Path | None) -> bool:
    """Whether an ``--index``/``--out`` value names a Milvus index (a ``.db`` file or a URI).

    >>> is_milvus("http://10.0.0.5:19530"), is_milvus("corpus.db#news"), is_milvus("runs/index")
    (True, True, False)
    """
    if ref is None:
        return False
    text = str(ref)
    if _SERVER.match(text):
        return True
    path = text.split("#", 1)[0]
    # a local index folder that happens to be named *.db stays local
    return path.endswith(".db") and not (Path(path) / CONFIG_FILE).exists()


@dataclass(frozen=True)
class MilvusTarget:
    """A parsed ``FILE.db[#COLLECTION]`` or ``URI[#COLLECTION]``."""

    ref: str
    uri: str
    collection: str
    server: bool

    @classmethod
    def parse(cls, ref: str | Path) -> MilvusTarget:
        text = str(ref)
        uri, _, name = text.partition("#")
        name = name or DEFAULT_COLLECTION
        if not _NAME.match(name):
            raise ValueError(
                f"'{name}' is not a Milvus collection name (letters, digits and _, starting with "
                f"a letter or _); write {uri}#my_corpus"
            )
        if not uri:
            raise ValueError("the Milvus index is empty; pass FILE.db or http://HOST:19530")
        server = bool(_SERVER.match(uri))
        if not server:
            uri = str(Path(uri).expanduser().resolve())
        return cls(text, uri, name, server)

    @property
    def where(self) -> str:
        return self.uri if self.server else f"the Milvus Lite file {self.uri}"


def _pymilvus():
    try:
        import pymilvus
    except ImportError as e:
        raise MissingExtraError(
            f"a Milvus index needs the pymilvus and milvus-lite packages ({e.name} is missing): "
            f"{INSTALL}"
        ) from None
    return pymilvus


def connect(target: MilvusTarget, token: str | None = None):
    """A ``MilvusClient`` for ``target``; the token defaults to ``PURR_MILVUS_TOKEN``."""
    from retrieval.settings import Settings

    pymilvus = _pymilvus()
    settings = Settings()
    if target.server:
        token = token if token is not None else settings.milvus_token
        with milvus_errors(target):
            return pymilvus.MilvusClient(
                uri=target.uri, token=token or "", timeout=settings.milvus_timeout_s
            )
    if not target.server:
        try:
            import milvus_lite  # noqa: F401 - the embedded engine behind FILE.db
        except ImportError:
            raise MissingExtraError(
                f"a Milvus Lite file ({target.uri}) needs the milvus-lite package: {INSTALL}"
            ) from None
    # Milvus Lite answers in this process; pymilvus asks it for a timestamp it does not serve
    # (and then goes on), which its in-process gRPC server would log as an error each time
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    path = Path(target.uri)
    if path.exists() and path.is_file():
        raise IndexNotFoundError(
            f"{path} is a file, not a Milvus Lite database; pass a new path ending in .db"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return pymilvus.MilvusClient(uri=target.uri)
    except Exception as e:
        if "open local milvus failed" in str(e).lower():
            raise MilvusUnavailableError(
                f"{target.uri} is open in another process, and Milvus Lite serves a file to one "
                "process at a time; stop that process, or serve the file to many with "
                f"`milvus-lite server --data-dir {target.uri}` and pass --index http://HOST:19530"
            ) from None
        with milvus_errors(target):
            raise


@contextlib.contextmanager
def milvus_errors(target: MilvusTarget) -> Iterator[None]:
    """Turn pymilvus and gRPC failures into a ``MilvusUnavailableError`` naming the fix."""
    try:
        yield
    except IndexNotFoundError:
        raise
    except Exception as e:  # noqa: BLE001 - classified below; anything else is re-raised
        kind = type(e).__name__
        if kind not in {"MilvusException", "_InactiveRpcError", "RpcError", "ConnectionError"} and (
            "pymilvus" not in type(e).__module__ and "grpc" not in type(e).__module__
        ):
            raise
        message = " ".join(str(getattr(e, "message", None) or e).split())[:300]
        cause = e.__cause__
        code = getattr(cause, "code", None)
        if callable(code) and getattr(code(), "name", "") in (
            "UNAUTHENTICATED",
            "PERMISSION_DENIED",
        ):
            message = f"{code().name}: {getattr(cause, 'details', lambda: '')()}"
        low = message.lower()
        if _AUTH.search(low):
            raise MilvusUnavailableError(
                f"Milvus at {target.where} refused the token ({message}); set PURR_MILVUS_TOKEN "
                "to 'user:password' or the cluster's API key"
            ) from None
        if any(
            w in low for w in ("fail connecting", "unavailable", "timeout", "deadline", "connect")
        ):
            raise MilvusUnavailableError(
                f"cannot reach Milvus at {target.where} ({message}); check the URI and that the "
                "server is running, or index into a local file with --out FILE.db"
            ) from None
        raise MilvusUnavailableError(f"Milvus at {target.where} failed: {message}") from None
