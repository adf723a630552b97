"""A named registry of factories, one per pipeline stage (LLM backends, query generators,
attribution models): ``register`` refuses duplicates, ``get`` names the choices on a miss."""

from __future__ import annotations

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
