"""A named registry of factories, one per pipeline stage (LLM backends, query generators,
attribution models): ``register`` refuses duplicates, ``get`` names the choices on a miss."""

from __future__ import annotations

import importlib
from typing import Generic, TypeVar

F = TypeVar("F")


class Registry(Generic[F]):
    """Factories by name.

    >>> r = Registry[int]("widget", "widget.type")
    >>> r.register("a", 1)
    >>> r.get("a"), r.available()
    (1, ['a'])
    >>> r.get("b")
    Traceback (most recent call last):
    ...
    ValueError: unknown widget 'b'; set widget.type to one of: a (or register() your own)
    """

    def __init__(self, kind: str, setting: str) -> None:
        self.kind = kind
        self.setting = setting
        self._factories: dict[str, F] = {}

    def register(self, name: str, factory: F) -> None:
        if not name or not name.strip():
            raise ValueError(
                f"{self.kind} name is empty; pass a name such as 'my-{self.kind.split()[-1]}'"
            )
        if name in self._factories:
            raise ValueError(
                f"{self.kind} '{name}' is already registered; pick another name "
                f"(registered: {', '.join(self.available())})"
            )
        self._factories[name] = factory

    def available(self) -> list[str]:
        return sorted(self._factories)

    def get(self, name: str) -> F:
        if name not in self._factories:
            raise ValueError(
                f"unknown {self.kind} '{name}'; set {self.setting} to one of: "
                f"{', '.join(self.available())} (or register() your own)"
            )
        return self._factories[name]


# The registry behind each stage's ``type`` setting: a name registered with the module's
# ``register()`` is valid here too. Read when a config is validated (the modules are light).
_REGISTRIES = {
    "llm.backend": ("editor.llm.registry", "_BACKENDS"),
    "querygen.type": ("editor.research.querygen.base", "_GENERATORS"),
    "attribution.type": ("editor.attribution.base", "_MODELS"),
    "agreement.type": ("editor.judge.agreement.base", "_AGREEMENT"),
    "judge.type": ("editor.judge.base", "_JUDGES"),
    "editor.type": ("editor.revision.editors.base", "_EDITORS"),
    "editor.fallback": ("editor.revision.editors.base", "_EDITORS"),
}


def registered(setting: str, name: str) -> str:
    """``name`` if it is registered for ``setting``, else a ValueError naming the choices.

    >>> registered("editor.type", "substitute")
    'substitute'
    >>> registered("editor.type", "magic")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: editor.type 'magic' is not registered; use one of: causal, ...identity, ...
    """
    module, attr = _REGISTRIES[setting]
    available = getattr(importlib.import_module(module), attr).available()
    if name not in available:
        raise ValueError(
            f"{setting} '{name}' is not registered; use one of: {', '.join(available)} "
            f"(or register() your own with {module.removesuffix('.base')}.register)"
        )
    return name
