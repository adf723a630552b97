"""purr's models and pipeline: ``Pipeline(Components(load_config("default"))).edit(text)``
returns an ``EditResult``. The names below load on first use, so importing one stage does not
import them all."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from editor.config import PipelineConfig, load_config
    from editor.factory import Components
    from editor.inputs import InputError
    from editor.pipeline import Pipeline
    from editor.result import EditResult

_EXPORTS = {
    "Pipeline": "editor.pipeline",
    "InputError": "editor.inputs",
    "Components": "editor.factory",
    "EditResult": "editor.result",
    "PipelineConfig": "editor.config",
    "load_config": "editor.config",
}
__all__ = ["Components", "EditResult", "InputError", "Pipeline", "PipelineConfig", "load_config"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'editor' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
