"""``Pipeline.check``: a cited text's citations against its sources, with graceful degradation."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from editor.citations.mafe import mafe
from editor.citations.markers import protect
from editor.citations.results import CheckResult
from editor.citations.sources import premise_of
from editor.factory import citation_checker
from editor.inputs import InputError, given_sources

log = logging.getLogger(__name__)


def check_citations(
    pipeline: Any, text: str, sources: Sequence[Any], qa: bool, reference: str | None
) -> CheckResult:
    """What ``Pipeline.check`` returns (its docstring), with ``pipeline``'s models and judge."""
    pipeline.check_input(text)
    if reference is not None and (not isinstance(reference, str) or not reference.strip()):
        raise InputError("reference must be a non-empty string")
    given = given_sources(sources)
    try:
        pipeline.prepare(research=False)
        judge = getattr(pipeline.editor, "judge", None)
        result = citation_checker(pipeline.cfg, pipeline.attribution, judge).check(text, given)
        if qa or reference is not None:
            clean = protect(text, [s.id for s in given]).clean
            result = replace(result, mafe=mafe(clean, [premise_of(s) for s in given], reference))
        return result
    except Exception as e:  # noqa: BLE001 - a failing verifier degrades, never raises
        log.warning("check failed: %s", e)
        return CheckResult.degraded(text, given, f"checking failed: {type(e).__name__}: {e}")
