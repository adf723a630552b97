"""Where a causal LM's files are: packaged GGUF models are dequantised once into a cache.

``transformers`` can read a GGUF file, but dequantising it takes 20-70 s on a CPU. So a GGUF
model (a packaged one, or a local ``.gguf`` file) is converted once into
``<cache_dir>/models/<name>/`` as safetensors plus tokenizer files, and later loads come from
there in seconds. The conversion is written to a temporary folder and renamed into place, so an
interrupted conversion is never mistaken for a finished one.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from editor.llm.base import LLMError
from retrieval.assets import PACKAGED, resolve

logger = logging.getLogger(__name__)

_STALE_TMP_S = 6 * 3600
_PROVENANCE = "purr-conversion.json"


@dataclass(frozen=True)
class ModelLocation:
    """What to hand to ``from_pretrained`` for a model reference.

    ``load_id`` is a local folder or a hub id; ``source`` is packaged | path | hub;
    ``converted`` says the folder is a GGUF conversion in the cache.
    """

    ref: str
    load_id: str
    source: str
    converted: bool = False


def _conversion_target(ref: str, resolved, cache_dir: Path) -> Path | None:
    """Where ``ref``'s GGUF conversion lives in the cache; None when ``ref`` is not GGUF."""
    models_dir = Path(cache_dir).expanduser() / "models"
    if resolved.source == "packaged" and resolved.kind in {"gguf", "gguf-parts"}:
        return models_dir / ref.removeprefix("packaged:")
    path = resolved.path
    if resolved.source == "path" and path is not None and path.is_file() and path.suffix == ".gguf":
        return models_dir / _gguf_cache_name(path)
    return None


def locate_model(ref: str, cache_dir: Path) -> ModelLocation:
    """Resolve ``ref`` (``packaged:NAME``, a folder, a ``.gguf`` file or a hub id) to files.

    GGUF models are converted on the first call (slow) and found in ``cache_dir`` afterwards.
    """
    resolved = resolve(ref)
    target = _conversion_target(ref, resolved, cache_dir)
    if resolved.source == "packaged":
        name = ref.removeprefix("packaged:")
        if target is None:
            raise ValueError(
                f"packaged model '{name}' is a {resolved.kind} model, not a causal LM; use "
                "packaged:gemma-3-270m, packaged:smollm2-135m-instruct, a local path or a hub id"
            )
        if not is_complete(target):
            _convert_packaged(name, resolved.kind, resolved.path, target)
        return ModelLocation(ref, str(target), "packaged", converted=True)
    if resolved.source == "path":
        assert resolved.path is not None
        if target is not None:
            if not is_complete(target):
                convert_gguf(resolved.path, target)
            return ModelLocation(ref, str(target), "path", converted=True)
        if not (resolved.path / "config.json").exists():
            raise ValueError(
                f"model folder {resolved.path} has no config.json; point llm.model at a folder "
                "written by save_pretrained, or at a .gguf file"
            )
        return ModelLocation(ref, str(resolved.path), "path")
    return ModelLocation(ref, ref, "hub")


def needs_conversion(ref: str, cache_dir: Path) -> bool:
    """Whether ``locate_model(ref, cache_dir)`` would first convert a GGUF model (slow, once).

    >>> needs_conversion("some-org/some-model", Path("/nonexistent"))
    False
    """
    try:
        resolved = resolve(ref)
    except Exception:  # noqa: BLE001 - an unresolvable reference fails later, with its own message
        return False
    target = _conversion_target(ref, resolved, cache_dir)
    return target is not None and not is_complete(target)


def save_into_cache(target: Path, write: Callable[[Path], dict[str, Any]]) -> bool:
    """Run ``write(tmp)`` in a temporary sibling of ``target``, record what it returns as the
    folder's provenance, and rename the folder into place, so that an interrupted write is never
    mistaken for a finished one. Returns False when a concurrent writer got there first."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(target.parent):
        if is_complete(target):  # another process converted it while this one waited
            logger.info("%s was written by another process; keeping that copy", target)
            return False
        return _write_and_rename(target, write)


@contextmanager
def _exclusive(folder: Path) -> Iterator[None]:
    """One process at a time in the block (an advisory lock on ``folder`` itself, so no lock
    file is left behind): two purr processes starting together convert a model once, not twice
    side by side."""
    try:
        import fcntl
    except ImportError:  # not POSIX: the rename below still keeps one whole copy
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _write_and_rename(target: Path, write: Callable[[Path], dict[str, Any]]) -> bool:
    _remove_stale_tmp(target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        provenance = write(tmp)
        (tmp / _PROVENANCE).write_text(json.dumps(provenance, indent=2), "utf-8")
        try:
            os.rename(tmp, target)
        except OSError:
            if not is_complete(target):
                raise LLMError(
                    f"cannot move the finished model into {target}; it exists but is incomplete: "
                    "delete that folder and retry"
                ) from None
            logger.info("%s was written concurrently; keeping that copy", target)
            return False
        return True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def convert_gguf(gguf_file: Path, target: Path) -> Path:
    """Dequantise ``gguf_file`` into ``target`` (safetensors + tokenizer); returns ``target``.

    Safe against interruption and against a concurrent conversion of the same model.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    started = time.perf_counter()
    logger.warning(
        "converting %s to safetensors in %s (once; this takes a while)", gguf_file, target
    )

    def write(tmp: Path) -> dict[str, Any]:
        folder, name = str(gguf_file.parent), gguf_file.name
        with _one_gguf_parse():
            tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
            kwargs = _dequantize_kwargs()
            model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, **kwargs)
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        seconds = time.perf_counter() - started
        return {"source": str(gguf_file), "bytes": gguf_file.stat().st_size, "seconds": seconds}

    save_into_cache(target, write)
    logger.info("converted %s in %.1f s", gguf_file.name, time.perf_counter() - started)
    return target


@contextmanager
def _one_gguf_parse() -> Iterator[None]:
    """Within the block, every ``gguf.GGUFReader(path)`` of one file is the same reader.

    transformers reads a GGUF file three times to load one model (the config, the tokenizer,
    the weights), and each read parses the whole metadata, a 262k-entry vocabulary for Gemma 3:
    about 15 s of a 50 s conversion on 2 cores. The readers only read (the file is memory-mapped),
    so one parse serves all three."""
    try:
        import gguf
    except ImportError:  # transformers raises its own message for a missing gguf
        yield
        return
    original = gguf.GGUFReader
    readers: dict[tuple[str, str], Any] = {}

    def shared(path: Any, mode: str = "r") -> Any:
        key = (os.fspath(path), mode)
        if key not in readers:
            readers[key] = original(path, mode)
        return readers[key]

    gguf.GGUFReader = shared
    try:
        yield
    finally:
        gguf.GGUFReader = original


def _convert_packaged(name: str, kind: str | None, path: Path | None, target: Path) -> None:
    if kind == "gguf":
        assert path is not None
        convert_gguf(path, target)
        return
    # gguf-parts: the package assembles the file from its part packages; assemble next to the
    # cache and delete the (large) assembled file once converted.
    module = importlib.import_module(PACKAGED[name].package)
    file_name = getattr(module, "MODEL_NAME", f"{name}.gguf")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{name}.gguf-", dir=target.parent) as tmp:
        gguf_file = Path(module.assemble(Path(tmp) / file_name))
        convert_gguf(gguf_file, target)


def _dequantize_kwargs() -> dict[str, object]:
    """Ask recent transformers for plain dense weights (older versions always dequantise)."""
    try:
        from transformers import GgufConfig
    except ImportError:
        return {}
    return {"quantization_config": GgufConfig(dequantize=True)}


def is_complete(folder: Path) -> bool:
    return (folder / "config.json").exists() and any(folder.glob("*.safetensors"))


def _gguf_cache_name(path: Path) -> str:
    stat = path.stat()
    key = f"{path.resolve()}:{stat.st_size}:{int(stat.st_mtime)}"
    return f"{path.stem}-{hashlib.sha1(key.encode()).hexdigest()[:10]}"


def _remove_stale_tmp(target: Path) -> None:
    """Delete temporary folders left by conversions interrupted long ago."""
    now = time.time()
    for stale in target.parent.glob(f".{target.name}.tmp-*"):
        if now - stale.stat().st_mtime > _STALE_TMP_S:
            logger.info("removing %s left by an interrupted conversion", stale)
            shutil.rmtree(stale, ignore_errors=True)


MERGED_FORMAT = 1
_ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors", "adapter_model.bin")


def adapter_digest(adapter: str | Path, base: str) -> str:
    """A key of a LoRA adapter's files and the base it is merged into (changes when either does)."""
    h = hashlib.sha256(f"{MERGED_FORMAT}:{base}".encode())
    for name in _ADAPTER_FILES:
        file = Path(adapter) / name
        if file.is_file():
            h.update(name.encode())
            h.update(file.read_bytes())
    return h.hexdigest()[:16]


def merged_model(
    adapter: str | Path,
    base: str,
    cache_dir: Path,
    merge: Callable[[], Any],
    model_class: Any,
) -> Any:
    """The base model with a LoRA adapter merged in, read from ``<cache_dir>/merged/``.

    Merging needs peft and takes seconds (2 s for the 270M causal editor on 2 cores, plus 2 s to
    import peft), so the first call runs ``merge()`` and saves the result; later calls load the
    saved weights with ``model_class.from_pretrained`` alone. The folder's name carries
    ``adapter_digest``, so a changed adapter or base is merged anew."""
    target = (
        Path(cache_dir).expanduser()
        / "merged"
        / f"{Path(adapter).name}-{adapter_digest(adapter, base)}"
    )
    if (target / _PROVENANCE).is_file() and is_complete(target):
        from transformers.utils import logging as hf_logging

        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # a load of a second or less needs no progress bar
        try:
            return model_class.from_pretrained(str(target), local_files_only=True)
        except (OSError, ValueError) as e:
            logger.warning("cannot read the merged model in %s (%s); merging again", target, e)
            shutil.rmtree(target, ignore_errors=True)
        finally:
            if bars:
                hf_logging.enable_progress_bar()
    model = merge()

    def write(tmp: Path) -> dict[str, Any]:
        model.save_pretrained(tmp)
        return {"adapter": str(Path(adapter).resolve()), "base": base}

    try:
        save_into_cache(target, write)
    except (OSError, LLMError) as e:  # a read-only or full cache only costs the next run the merge
        logger.warning(
            "cannot save the merged model to %s (%s); it is merged on each load", target, e
        )
    return model
