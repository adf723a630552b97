"""Pipeline configuration: one pydantic model per component (``components.py``; the revision
stage's in ``revision.py``), composed into ``PipelineConfig``.

Loaded from ``configs/NAME.yaml`` or a YAML path, with ``a.b=c`` overrides (``loading.py``).
Runtime settings (URLs, keys, cache paths) come from ``retrieval.settings.Settings``
(``PURR_*``), not from here.
"""

from __future__ import annotations

from editor.config.components import (
    AgreementConfig,
    AttributionConfig,
    EditorConfig,
    JudgeConfig,
    LimitsConfig,
    LLMConfig,
    PipelineConfig,
    QueryGenConfig,
    ResearchConfig,
    RevisionConfig,
)
from editor.config.loading import (
    CONFIG_DIR,
    ConfigError,
    apply_overrides,
    dump_config,
    editor_name,
    editor_overrides,
    load_config,
    resolve_config_path,
)

__all__ = [
    "CONFIG_DIR",
    "AgreementConfig",
    "AttributionConfig",
    "ConfigError",
    "EditorConfig",
    "JudgeConfig",
    "LLMConfig",
    "LimitsConfig",
    "PipelineConfig",
    "QueryGenConfig",
    "ResearchConfig",
    "RevisionConfig",
    "apply_overrides",
    "dump_config",
    "editor_name",
    "editor_overrides",
    "load_config",
    "resolve_config_path",
]
