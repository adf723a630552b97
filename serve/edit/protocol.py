"""Request and response models of ``/v1/edit``, ``/v1/edit/batch`` and ``/v1/score``.

The response of ``/v1/edit`` is the result contract (``editor.result``), field for field what
``purr edit --json`` prints.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from editor.result import EditResult
from serve.llm_protocol import ErrorInfo

# the response of /v1/edit is the pipeline's own frozen dataclass (pydantic builds its schema)
EditResponse = EditResult


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class EditOptions(_Strict):
    deadline_s: float | None = Field(
        None,
        gt=0,
        description="Seconds after which the original text comes back `degraded` (capped by the "
        "server's PURR_DEADLINE_S).",
    )
    apply_unsure: bool = Field(
        False,
        description="Also apply the fixes the judge is unsure of (its `unsafe` findings), as "
        "`purr edit --apply-unsure` does; by default they are only suggested.",
    )
    wait_for_ready: bool = Field(
        False,
        description="While the server is still loading its models and index, wait for it "
        "(within the deadline) instead of getting 503 with Retry-After at once.",
    )


NON_BLANK = r"\S"  # at least one non-space character (JSON Schema patterns search)


class CheckSource(_Strict):
    id: str | int = Field(description="What the text's markers call it: [1] is id 1.")
    text: str = Field(pattern=NON_BLANK, description="The source's text.")
    title: str | None = None
    url: str | None = None


class EditRequest(_Strict):
    text: str = Field(pattern=NON_BLANK, description="The passage to check and revise.")
    context: str | None = Field(None, description="The conversation the passage answers.")
    evidence: list[str] | None = Field(
        None, description="Evidence to check against instead of researching the index."
    )
    sources: list[CheckSource] | None = Field(
        None,
        description="The sources a cited text cites ([1] is id 1): its citations are checked "
        "and repaired against them; the result's `citations` says what changed.",
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


class CheckRequest(_Strict):
    text: str = Field(pattern=NON_BLANK, description="The cited text: [1], [1, 3], [1][2], [^1].")
    sources: list[CheckSource] = Field(
        min_length=1, description="The sources the markers point at, by id."
    )
    qa: bool = Field(False, description="Also score QA-based factuality (MAFE) against them.")
    reference: str | None = Field(
        None, pattern=NON_BLANK, description="A reference answer: MAFE's recall of it."
    )


# -- responses: the result contract ------------------------------------------------------------


class BatchItem(BaseModel):
    """One passage of a batch: its result, or the error that kept it from being edited."""

    index: int
    result: EditResult | None = None
    error: ErrorInfo | None = None


class BatchResponse(BaseModel):
    results: list[BatchItem]


class ScoredPart(BaseModel):
    text: str = Field(description="the atomic part, stated on its own")
    start: int = Field(description="start of the words it asserts in the sentence")
    end: int
    kind: str = Field(description="main, conjunct, apposition or relative")
    attribution: float
    evidence_index: int | None
    verdict: str


class ScoredSentence(BaseModel):
    text: str
    decontextualized: str
    applicable: bool
    attribution: float | None
    evidence_index: int | None
    attributable: bool | None
    verdict: str | None = Field(
        None, description="supported, contradicted or unverified (None: not applicable)"
    )
    evidence: str | None
    parts: list[ScoredPart] = Field(
        default_factory=list,
        description="with attribution.decompose, the atomic parts of a sentence of several",
    )


class ScoreResponse(BaseModel):
    attribution: float | None = Field(
        description="auto-AIS of the passage (None: nothing to check)"
    )
    threshold: float
    applicable_sentences: int
    attributable_sentences: int
    sentences: list[ScoredSentence]


class SourceLabelOut(BaseModel):
    source_id: str
    label: str = Field(description="supports, contradicts or not_enough")
    p_supported: float
    span: str = Field(description="The source sentence the verdict rests on.")
    reason: str


class CheckedSentence(BaseModel):
    text: str
    citations: list[str]
    outcome: str = Field(
        description="supported, citation_not_supporting, needs_citation, needs_none (unchecked "
        "when degraded)"
    )
    supported: bool
    verdicts: list[SourceLabelOut]


class CheckFinding(BaseModel):
    start: int | None = Field(description="First character in the text (None: not found).")
    end: int | None
    text: str = Field(description="The flagged words, or the whole sentence.")
    kind: str = Field(description="contradicted or not_supported")
    source_id: str | None = Field(description="The cited source that flags it (None: uncited).")
    fix: str | None = Field(description="The source's value for the slot, where it names one.")
    reason: str


class CheckResponse(BaseModel):
    """What ``purr check --json`` prints."""

    text: str
    sentences: list[CheckedSentence]
    citation_precision: float | None
    citation_recall: float | None
    unknown_markers: list[str]
    outcomes: dict[str, int]
    status: str = Field(description="checked, or degraded when the verifier failed")
    warnings: list[str]
    mafe: dict[str, Any] | None = Field(
        None,
        description="With qa: QA-based factuality (MAFE) against the sources: precision, "
        "recall (of the reference), f1 and each question with its answer.",
    )
    findings: list[CheckFinding] = Field(
        default_factory=list,
        description="What the sources flag, with character offsets of the text (see "
        "CheckResult.findings).",
    )


class Readiness(BaseModel):
    ready: bool
    reason: str | None = None
    index: str | None = None
    editor: str
    attribution: str


class ResearchRequest(_Strict):
    query: str = Field(pattern=NON_BLANK, description="What to look up, as a question or keywords.")
    k: int = Field(5, ge=1, le=50, description="How many snippets to return, best first.")


class Snippet(BaseModel):
    id: str
    title: str | None
    url: str | None
    text: str
    relevance: float | None = Field(description="The reranker's relevance (None: not reranked).")
    retriever: str = Field(description="Which retriever found it (bm25, dense, hybrid, web).")


class ResearchResponse(BaseModel):
    """What ``POST /v1/research`` and the MCP tool ``research`` return."""

    query: str
    snippets: list[Snippet]
    warnings: list[str] = Field(
        default_factory=list,
        description="What research could not do (a page refused, a search "
        "that failed), with the reason.",
    )


class ExtractRequest(_Strict):
    html: str = Field(pattern=NON_BLANK, description="An HTML page, as a file or a fetch has it.")


class ExtractResponse(BaseModel):
    """The page's main text, as web research extracts it (trafilatura)."""

    title: str
    text: str
