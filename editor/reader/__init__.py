"""The extractive reader: ``read(question, evidence) -> Reading`` (contract: ``base.py``; the
trained cross-encoder: ``extractive.py``). The judge reads its answers as a signal
(``editor.judge.agreement.reader``); ``purr train reader`` and ``purr eval reader`` make and
measure it.
"""

from __future__ import annotations

import functools
from typing import Any

from editor.reader.base import Answer, Reader, Reading
from editor.reader.extractive import ExtractiveReader

__all__ = ["Answer", "ExtractiveReader", "Reader", "Reading", "shared_reader"]


@functools.cache
def shared_reader(path: str | None = None, quantize: str = "int8") -> ExtractiveReader:
    """One reader per (folder, quantisation) in a process, loaded on first use and shared by
    every pipeline (read-only once loaded; its calls are thread-safe)."""
    return ExtractiveReader(path, quantize=quantize)


def wanted(cfg: Any) -> bool:
    """Whether ``cfg``'s judge asks the reader (``judge.reader``: the rules gate's signal, under
    every judge type but ``span``): the one condition the judge and the loader read."""
    policy = cfg.judge.reader
    return bool(
        cfg.judge.type != "span"
        and policy.enabled
        and cfg.revision.gate
        and "reader" not in cfg.judge.rules_off
    )


def load_for(cfg: Any) -> None:
    """Load the reader where ``cfg``'s judge asks it (``wanted``)."""
    if wanted(cfg):
        policy = cfg.judge.reader
        shared_reader(policy.model, policy.quantize).load()
