"""Request and response models of ``/v1/edit``, ``/v1/edit/batch`` and ``/v1/score``.

The response of ``/v1/edit`` is the result contract of DESIGN.md, field for field what
``purr edit --json`` prints.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from serve.llm_protocol import ErrorInfo


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class EditOptions(_Strict):
    deadline_s: float | None = Field(
        None,
        gt=0,
        description="Seconds after which the original text comes back `degraded` (capped by the "
        "server's PURR_DEADLINE_S).",
    )


NON_BLANK = r"\S"  # at least one non-space character (JSON Schema patterns search)


class EditRequest(_Strict):
    text: str = Field(pattern=NON_BLANK, description="The passage to check and revise.")
    context: str | None = Field(None, description="The conversation the passage answers.")
    evidence: list[str] | None = Field(
        None, description="Evidence to check against instead of researching the index."
    )
    options: EditOptions = Field(default_factory=EditOptions)


class BatchRequest(_Strict):
    items: list[EditRequest] = Field(min_length=1, description="Passages, edited in order.")
    options: EditOptions = Field(
        default_factory=EditOptions, description="Deadline for the whole batch."
    )


class ScoreRequest(_Strict):
    text: str = Field(pattern=NON_BLANK, description="The passage to score.")
    evidence: list[str] = Field(min_length=1, description="Evidence texts to attribute it to.")
    context: str | None = Field(None, description="The conversation the passage answers.")


# -- responses: the result contract ------------------------------------------------------------


class EvidenceOut(BaseModel):
    id: str
    text: str
    title: str
    source: str
    url: str | None
    query: str
    relevance: float


class StepOut(BaseModel):
    query: str
    evidence_id: str
    agrees: bool | None
    reason: str
    before: str
    after: str
    accepted: bool


class SentenceOut(BaseModel):
    text: str
    decontextualized: str
    attribution: float | None
    evidence_id: str | None
    applicable: bool


class ReportOut(BaseModel):
    evidence_ids: list[str]
    sentences: list[SentenceOut]
    attribution_before: float | None
    attribution_after: float | None
    preservation: float
    f1_ap: float | None


class EditResponse(BaseModel):
    """The result contract: the revised passage, its evidence and the attribution report."""

    original: str
    revised: str
    context: str | None
    queries: list[str]
    evidence: list[EvidenceOut]
    steps: list[StepOut]
    report: ReportOut | None
    status: Literal["edited", "unchanged", "degraded"]
    warnings: list[str]
    timings_ms: dict[str, float]


class BatchItem(BaseModel):
    """One passage of a batch: its result, or the error that kept it from being edited."""

    index: int
    result: EditResponse | None = None
    error: ErrorInfo | None = None


class BatchResponse(BaseModel):
    results: list[BatchItem]


class ScoredSentence(BaseModel):
    text: str
    decontextualized: str
    applicable: bool
    attribution: float | None
    evidence_index: int | None
    attributable: bool | None
    evidence: str | None


class ScoreResponse(BaseModel):
    attribution: float | None = Field(
        description="auto-AIS of the passage (None: nothing to check)"
    )
    threshold: float
    applicable_sentences: int
    attributable_sentences: int
    sentences: list[ScoredSentence]


class Readiness(BaseModel):
    ready: bool
    reason: str | None = None
    index: str | None = None
    editor: str
    attribution: str
