"""What the MCP tools take and return, beside the HTTP API's own models (``serve.edit.protocol``:
``ResearchResponse``, ``CheckResponse``, the error shape), which the tools return as they are.

An answer is checked against ``documents`` (an app's own, in the order its markers count them:
``[1]`` is the first) or, without them, against what purr researches.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from serve.edit.protocol import NON_BLANK


class Document(BaseModel):
    """A document the answer was written from (or should agree with)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: str = Field(pattern=NON_BLANK, description="The document's text.")
    title: str | None = Field(None, description="Its title, shown with the evidence.")


class Change(BaseModel):
    start: int = Field(description="First character of the changed words in the original.")
    end: int
    old: str = Field(description="The original's words, original[start:end].")
    new: str = Field(description="What the revision writes instead.")


class FoundWords(BaseModel):
    """Words the judge flagged in the answer: fixed (``safe``), or a suggestion it is unsure of
    (``unsafe``), or only named (``display``)."""

    start: int | None = Field(description="First character in the answer (None: not found).")
    end: int | None
    text: str = Field(description="The flagged words.")
    kind: str = Field(description="contradicted or not_supported")
    applicability: str = Field(description="safe (applied), unsafe (suggested) or display")
    fixed: bool
    fix: str | None = Field(description="The evidence's words for the slot.")
    suggestion: str | None = Field(description="The words an unsure fix would write.")
    reason: str
    evidence_id: str
    document: int | None = Field(description="The given document that flags it (0-based).")


class Citation(BaseModel):
    """A sentence the report calls supported, and what supports it."""

    sentence: str
    evidence_id: str
    attribution: float | None
    document: int | None = Field(description="The given document (0-based; None: researched).")
    title: str | None = None
    url: str | None = None


class Scores(BaseModel):
    attribution_before: float | None = Field(description="auto-AIS of the answer as given.")
    attribution_after: float | None = Field(description="auto-AIS of the revision.")
    preservation: float | None = Field(description="Levenshtein preservation of the revision.")
    f1_ap: float | None


class EvidenceOut(BaseModel):
    id: str
    title: str | None
    url: str | None
    text: str
    document: int | None = Field(description="The given document it comes from (0-based).")


class AnswerEdit(BaseModel):
    """What ``edit_answer`` returns."""

    status: str = Field(description="edited, unchanged or degraded (the answer as given)")
    original: str
    revised: str
    diff: str = Field(description="The changes as a word diff: [-old-]{+new+}.")
    changes: list[Change]
    findings: list[FoundWords]
    citations: list[Citation]
    evidence: list[EvidenceOut] = Field(description="The evidence the report cites.")
    scores: Scores
    warnings: list[str] = Field(description="About this result only.")


class SentenceVerdict(BaseModel):
    text: str
    start: int | None = Field(description="First character in the answer (None: not found).")
    end: int | None
    verdict: str | None = Field(
        description="supported, contradicted or unverified (None: nothing to check in it)"
    )
    evidence_id: str | None
    document: int | None


class AnswerCheck(BaseModel):
    """What ``check_answer`` returns: the answer is never changed."""

    status: str = Field(description="checked, or degraded (the reason in warnings)")
    text: str
    sentences: list[SentenceVerdict]
    findings: list[FoundWords]
    citations: list[Citation]
    evidence: list[EvidenceOut]
    attribution: float | None = Field(description="auto-AIS of the answer as given.")
    warnings: list[str]
