"""What the LangChain and LlamaIndex integrations share: one pipeline built on first use, an
answer checked against the app's own documents, and the result as plain metadata.

An answer that cites its documents (``[1]``, ``[2]``: the n-th document, counting from 1) has its
citations checked and repaired against them (``Pipeline.edit(sources=...)``). An answer that
cites nothing is checked against the documents as evidence (the verifier reads a long one
window by window), and comes back byte for byte unless they contradict it. Without documents, purr
researches its own corpus.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from editor.citations.document import parse_markers
from editor.config import load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from editor.result import EditResult
from editor.verdicts import SUPPORTED

OnError = Literal["degrade", "raise"]


@dataclass(frozen=True)
class AppDocument:
    """A document the app retrieved: its text, and what the app knows it by."""

    text: str
    id: str | None = None
    title: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Checked:
    """An answer after purr: the result, and which app document each evidence id is."""

    result: EditResult
    documents: tuple[AppDocument, ...] = ()
    document_of: Mapping[str, int] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        """The JSON-ready ``purr`` metadata: status, findings (the words, the suggestion, the
        document that flags them), citations to the documents, warnings and the report."""
        r = self.result
        data = r.to_json()
        return {
            "status": r.status,
            "original": r.original,
            "revised": r.revised,
            "findings": [
                {**asdict(f), "document": self.document_of.get(f.evidence_id)} for f in r.findings
            ],
            "citations": self.citations(),
            "warnings": list(r.warnings),
            "report": data["report"],
            "citation_changes": data["citations"],
        }

    def citations(self) -> list[dict[str, Any]]:
        """Each sentence of the revision the report calls supported (the judge's verdict where
        it judged the sentence), with the document (its index in the app's list, its id and
        metadata) or, without documents, the corpus evidence."""
        report = self.result.report
        if report is None:
            return []
        by_id = {e.id: e for e in self.result.evidence}
        out = []
        for s in report.sentences:
            if s.evidence_id is None or s.verdict != SUPPORTED:
                continue
            cite: dict[str, Any] = {
                "sentence": s.text,
                "attribution": None if s.attribution is None else round(s.attribution, 4),
                "evidence_id": s.evidence_id,
            }
            n = self.document_of.get(s.evidence_id)
            if n is not None:
                doc = self.documents[n]
                cite.update(document=n, id=doc.id, title=doc.title, metadata=dict(doc.metadata))
            elif s.evidence_id in by_id:
                e = by_id[s.evidence_id]
                cite.update(document=None, title=e.title or None, url=e.url, text=e.text)
            out.append(cite)
        return out


class PurrChecker:
    """Checks answers with one ``Pipeline``, built on first use from ``config`` (a name or a
    YAML path), ``overrides`` (``key=value``) and ``index`` unless one is given.

    ``on_error="degrade"`` (the default) returns the answer unchanged with the reason when
    purr fails (bad input, a missing index, a model that will not load); ``"raise"`` raises.
    """

    def __init__(
        self,
        pipeline: Pipeline | None = None,
        config: str = "default",
        overrides: Sequence[str] = (),
        index: str | None = None,
        on_error: OnError = "degrade",
    ) -> None:
        if on_error not in ("degrade", "raise"):
            raise ValueError(f"on_error must be 'degrade' or 'raise', got {on_error!r}")
        self._pipeline = pipeline
        self.config, self.overrides, self.index = config, list(overrides), index
        self.on_error: OnError = on_error
        self._lock = threading.Lock()

    @property
    def pipeline(self) -> Pipeline:
        with self._lock:
            if self._pipeline is None:
                cfg = load_config(self.config, self.overrides)
                self._pipeline = Pipeline(Components(cfg, index_path=self.index))
            return self._pipeline

    def check(
        self,
        answer: str,
        documents: Sequence[AppDocument] | None = None,
        question: str | None = None,
        on_error: OnError | None = None,
    ) -> Checked:
        """``answer`` checked against ``documents`` (or purr's corpus when None), with the
        question as context; never raises unless ``on_error`` (or the checker's) is ``raise``."""
        docs = tuple(documents or ())
        if isinstance(answer, str) and not answer.strip():  # a tool call, an empty reply
            reason = "nothing to check: the answer has no text"
            return Checked(EditResult.untouched(answer, question, reason, "unchanged"), docs)
        try:
            return self._check(answer, docs, question)
        except Exception as e:  # noqa: BLE001 - the user's chain keeps its answer
            if (on_error or self.on_error) == "raise":
                raise
            text = answer if isinstance(answer, str) else str(answer)
            reason = f"purr failed, the answer is unchanged: {type(e).__name__}: {e}"
            return Checked(EditResult.untouched(text, question, reason), docs)

    def _check(self, answer: str, docs: tuple[AppDocument, ...], question: str | None) -> Checked:
        pipeline = self.pipeline
        if not docs:
            return Checked(pipeline.edit(answer, question))
        ids = [str(n) for n in range(1, len(docs) + 1)]
        if parse_markers(answer, ids):  # it cites them: check and repair its citations
            sources = [
                {"id": i, "text": d.text, "title": d.title} for i, d in zip(ids, docs, strict=True)
            ]
            result = pipeline.edit(answer, question, sources=sources)
            return Checked(result, docs, {i: n for n, i in enumerate(ids)})
        kept = [n for n, d in enumerate(docs) if d.text.strip()]
        texts = [docs[n].text for n in kept]
        result = pipeline.edit(answer, question, evidence=texts)
        return Checked(result, docs, {f"given-{i}": n for i, n in enumerate(kept)})
