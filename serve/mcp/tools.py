"""``AgentTools``: what the MCP tools do, as calls into the HTTP API's ``EditService`` (its
limits, deadlines, worker threads and error codes), with no MCP imports.

An answer with documents is checked against them: an answer that cites them (``[1]`` is the
first document) has its citations checked and repaired, as ``sources``; one that cites nothing
reads them as ``evidence``. Without documents purr researches its index or the web.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from editor.citations.document import parse_markers
from editor.verdicts import CONTRADICTED, FOUND, SUPPORTED, UNVERIFIED
from serve.diff import changes, diff_markup, word_changes
from serve.edit.protocol import (
    CheckRequest,
    CheckResponse,
    CheckSource,
    EditOptions,
    EditRequest,
    ResearchRequest,
    ResearchResponse,
)
from serve.edit.research import research
from serve.edit.service import EditService
from serve.integrations.common import AppDocument, Checked
from serve.mcp.protocol import (
    AnswerCheck,
    AnswerEdit,
    Change,
    Citation,
    Document,
    EvidenceOut,
    FoundWords,
    Scores,
    SentenceVerdict,
)

Progress = Callable[[str], None]


class AgentTools:
    """The tools' work over one ``EditService`` (built and warmed by the server's lifespan)."""

    def __init__(self, service: EditService) -> None:
        self.service = service

    async def _checked(
        self,
        text: str,
        question: str | None,
        documents: Sequence[Document] | None,
        apply_unsure: bool,
        progress: Progress | None,
        tenant: str,
    ) -> Checked:
        docs = tuple(AppDocument(d.text, str(n), d.title) for n, d in enumerate(documents or (), 1))
        evidence: list[str] | None = None
        sources: list[CheckSource] | None = None
        document_of: dict[str, int] = {}
        if docs:
            ids = [d.id for d in docs if d.id is not None]
            if parse_markers(text, ids):  # it cites them: its citations are checked and repaired
                sources = [CheckSource(id=d.id or "", text=d.text, title=d.title) for d in docs]
                document_of = {str(n): n - 1 for n in range(1, len(docs) + 1)}
            else:
                evidence = [d.text for d in docs]
                document_of = {f"given-{i}": i for i in range(len(docs))}
        options = EditOptions(apply_unsure=apply_unsure, wait_for_ready=True)
        req = EditRequest(
            text=text, context=question, evidence=evidence, sources=sources, options=options
        )
        result = await self.service.edit_result(req, tenant=tenant, progress=progress)
        return Checked(result, docs, document_of)

    async def edit_answer(
        self,
        text: str,
        question: str | None = None,
        documents: Sequence[Document] | None = None,
        apply_unsure: bool = False,
        progress: Progress | None = None,
        tenant: str = "anonymous",
    ) -> AnswerEdit:
        """The answer revised where its evidence proves it wrong, with what changed and why."""
        checked = await self._checked(text, question, documents, apply_unsure, progress, tenant)
        r = checked.result
        report = r.report
        return AnswerEdit(
            status=r.status,
            original=r.original,
            revised=r.revised,
            diff=diff_markup(r.original, r.revised, plain=True),
            changes=[
                Change(start=c.start, end=c.end, old=c.old, new=c.new)
                for c in changes(r.original, r.revised)
            ],
            findings=_found(checked),
            citations=[Citation(**_cite(c)) for c in checked.citations()],
            evidence=_evidence(checked),
            scores=Scores(
                attribution_before=None if report is None else report.attribution_before,
                attribution_after=None if report is None else report.attribution_after,
                preservation=None if report is None else report.preservation,
                f1_ap=None if report is None else report.f1_ap,
            ),
            warnings=list(r.warnings),
        )

    async def check_answer(
        self,
        text: str,
        question: str | None = None,
        documents: Sequence[Document] | None = None,
        progress: Progress | None = None,
        tenant: str = "anonymous",
    ) -> AnswerCheck:
        """The verdict of each sentence of the answer as given, the words the judge names and
        the fixes it suggests; nothing is changed."""
        checked = await self._checked(text, question, documents, False, progress, tenant)
        r = checked.result
        found = _found(checked)
        sentences = _sentences(checked, found)
        return AnswerCheck(
            status="degraded" if r.status == "degraded" else "checked",
            text=r.original,
            sentences=sentences,
            findings=found,
            citations=[
                Citation(**_cite(c))
                for c in checked.citations()
                if any(s.text == c["sentence"] and s.verdict == SUPPORTED for s in sentences)
            ],
            evidence=_evidence(checked),
            attribution=None if r.report is None else r.report.attribution_before,
            warnings=list(r.warnings),
        )

    async def research(self, query: str, k: int = 5) -> ResearchResponse:
        return await research(self.service, ResearchRequest(query=query, k=k))

    async def check_citations(self, text: str, sources: Sequence[CheckSource]) -> CheckResponse:
        return await self.service.check_citations(CheckRequest(text=text, sources=list(sources)))


def _cite(c: dict[str, Any]) -> dict[str, Any]:
    keys = ("sentence", "evidence_id", "attribution", "document", "title", "url")
    return {k: c.get(k) for k in keys}


def _found(checked: Checked) -> list[FoundWords]:
    return [
        FoundWords(
            start=f.start,
            end=f.end,
            text=f.text,
            kind=f.kind,
            applicability=f.applicability,
            fixed=f.fixed,
            fix=f.fix,
            suggestion=f.suggestion,
            reason=f.reason,
            evidence_id=f.evidence_id,
            document=checked.document_of.get(f.evidence_id),
        )
        for f in checked.result.findings
    ]


def _evidence(checked: Checked) -> list[EvidenceOut]:
    r = checked.result
    cited = set(r.report.evidence_ids) if r.report is not None else set()
    return [
        EvidenceOut(
            id=e.id,
            title=e.title or None,
            url=e.url or None,
            text=e.text,
            document=checked.document_of.get(e.id),
        )
        for e in r.evidence
        if e.id in cited or e.id in checked.document_of
    ]


def _to_original(original: str, revised: str) -> Callable[[int, bool], int]:
    """Maps an offset of ``revised`` to ``original`` (inside a change: its start, or its end
    where ``end``)."""
    pieces, i, j = [], 0, 0
    for old, new in word_changes(original, revised):
        pieces.append((i, len(old), j, len(new), old != new))
        i, j = i + len(old), j + len(new)

    def at(r: int, end: bool) -> int:
        for o, olen, n, nlen, changed in pieces:
            if n <= r < n + nlen or (end and r == n + nlen):
                return (o + olen if end else o) if changed else o + (r - n)
        return len(original) if end else min(r, len(original))

    return at


def _sentences(checked: Checked, found: list[FoundWords]) -> list[SentenceVerdict]:
    """The report's sentences, placed in the answer as given; a sentence an edit changed holds
    a finding, and the report's word for that finding is its verdict."""
    r = checked.result
    if r.report is None:
        return []
    at = _to_original(r.original, r.revised)
    out, cursor = [], 0
    for s in r.report.sentences:
        where = r.revised.find(s.text, cursor)
        start = end = None
        text, verdict, eid = s.text, s.verdict, s.evidence_id
        if where >= 0:
            cursor = where + len(s.text)
            start, end = at(where, False), at(cursor, True)
            text = r.original[start:end]
        if text != s.text:  # changed by a fix: the finding speaks for the answer as given
            lo, hi = start or 0, end or 0
            inside = [f for f in found if f.start is not None and lo <= f.start < hi]
            inside.sort(key=lambda f: f.kind != CONTRADICTED)  # a contradiction speaks first
            kind = inside[0].kind if inside else ""
            verdict = FOUND.get(kind, UNVERIFIED)
            eid = inside[0].evidence_id if inside else None
        out.append(
            SentenceVerdict(
                text=text,
                start=start,
                end=end,
                verdict=verdict if s.applicable else None,
                evidence_id=eid,
                document=None if eid is None else checked.document_of.get(eid),
            )
        )
    return out
