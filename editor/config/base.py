"""What every component configuration shares: unknown keys refused, assignments validated,
a stage's ``type`` checked against that stage's registry."""

from __future__ import annotations

from functools import partial

from pydantic import AfterValidator, BaseModel, ConfigDict

from editor.registry import registered


class _Cfg(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def _registered(setting: str) -> AfterValidator:
    """Checks that a field names an implementation registered for ``setting`` (``editor.type``)."""
    return AfterValidator(partial(registered, setting))
