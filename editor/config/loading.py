"""Loading a configuration: a preset name or YAML path, with ``--set KEY=VALUE`` overrides."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    BaseModel,
    ValidationError,
)

from editor.config.components import EditorConfig, PipelineConfig

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"


class ConfigError(ValueError):
    """A config file or override is invalid; the message says which and how to fix it."""


MOVED = {
    "agreement.contradiction_threshold": "judge.contradicted_min",
    "agreement.support_threshold": "judge.supported_min",
    "editor.min_gain": "judge.min_gain",
    "revision.max_edit_chars": "judge.max_edit_chars",
    "revision.max_edit_ratio": "judge.max_edit_ratio",
    "revision.verify_edits": "judge.verify_edits",
    "revision.accept_min_supported": "judge.accept_min_supported",
    "revision.outranked": "judge.outranked",
    "revision.apply_unsure": "judge.apply_unsure",
    "attribution.threshold": "judge.attributed_min",
    "citations.remove_below": "judge.remove_citation_below",
}
"""Keys that moved into the judge's policy (``judge:``): the old name still reads, with a
warning that names the new one."""


def moved(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with each key of ``MOVED`` under its new name (a warning says so).

    >>> import warnings
    >>> with warnings.catch_warnings(record=True):
    ...     moved({"revision": {"apply_unsure": True, "mode": "iterative"}})
    {'revision': {'mode': 'iterative'}, 'judge': {'apply_unsure': True}}
    """
    for old, new in MOVED.items():
        section, key = old.split(".")
        node = data.get(section)
        if not isinstance(node, dict) or key not in node:
            continue
        value = node.pop(key)
        to_section, to_key = new.split(".")
        target = data.setdefault(to_section, {})
        if isinstance(target, dict):
            target.setdefault(to_key, value)
        warnings.warn(f"config key {old} is now {new}; reading it as that", stacklevel=3)
    return data


def _parse_value(raw: str) -> Any:
    value = yaml.safe_load(raw) if raw.strip() else raw
    return (
        raw if isinstance(value, dict | list) and not raw.strip().startswith(("[", "{")) else value
    )


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``a.b=c`` overrides to a nested dict (values parsed as YAML scalars).

    >>> apply_overrides({"search": {"mode": "hybrid"}}, ["search.mode=bm25", "research.k_documents=3"])
    {'search': {'mode': 'bm25'}, 'research': {'k_documents': 3}}
    """
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override '{item}' is not KEY=VALUE (e.g. --set search.mode=bm25)")
        key, raw = item.split("=", 1)
        parts = key.strip().split(".")
        node = data
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"override '{item}': '{part}' is a value, not a section")
            node = child
        node[parts[-1]] = _parse_value(raw)
    return data


def _renamed(override: str) -> str:
    """``override`` with its key under its new name (``MOVED``; a warning says so)."""
    key, eq, value = override.partition("=")
    new = MOVED.get(key.strip())
    if new is None:
        return override
    warnings.warn(f"config key {key.strip()} is now {new}; reading it as that", stacklevel=3)
    return f"{new}{eq}{value}"


def resolve_config_path(name_or_path: str) -> Path:
    """``default`` -> configs/default.yaml; anything with a suffix or separator is a path."""
    path = Path(name_or_path)
    if path.suffix in {".yaml", ".yml", ".json"} or path.exists():
        if not path.exists():
            raise ConfigError(f"config file {path} does not exist")
        return path
    candidate = CONFIG_DIR / f"{name_or_path}.yaml"
    if not candidate.exists():
        names = sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))
        raise ConfigError(
            f"no config preset '{name_or_path}'; presets: {', '.join(names)}; or pass a YAML path"
        )
    return candidate


def editor_overrides(choice: str) -> list[str]:
    """Overrides selecting an editor: ``X`` alone (no fallback) or ``X+Y`` (X, then Y where
    the judge applies none of X's revisions).

    >>> editor_overrides("substitute")
    ['editor.type=substitute', 'editor.fallback=null']
    >>> editor_overrides("causal+substitute")
    ['editor.type=causal', 'editor.fallback=substitute']
    """
    first, _, second = choice.partition("+")
    return [f"editor.type={first}", f"editor.fallback={second or 'null'}"]


def editor_name(cfg: EditorConfig) -> str:
    """The editor as ``editor_overrides`` names it (``causal+substitute``)."""
    return f"{cfg.type}+{cfg.fallback}" if cfg.fallback else cfg.type


def load_config(
    name_or_path: str | None = "default", overrides: list[str] | None = None
) -> PipelineConfig:
    """Load a preset or YAML file, apply overrides, validate."""
    data: dict[str, Any] = {}
    if name_or_path:
        path = resolve_config_path(name_or_path)
        try:
            loaded = yaml.safe_load(path.read_text("utf-8")) or {}
        except yaml.YAMLError as e:
            raise ConfigError(f"{path}: not valid YAML ({e})") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: top level must be a mapping of sections")
        data = loaded
    data = apply_overrides(moved(data), [_renamed(o) for o in overrides or []])
    try:
        return PipelineConfig.model_validate(data)
    except ValidationError as e:
        lines = [f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors()]
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines)) from None


def dump_config(cfg: BaseModel) -> str:
    """YAML text of a resolved config (round-trips through ``load_config``)."""
    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)
