"""The ``span`` judge: one cross-encoder decides, names the words, points at the evidence's
words for them, writes the revision and accepts it (``editor.judge.span_fix``).

The sentence of the text the query is about, decontextualised ("It" resolved), is judged
against the evidence in windows: ``contradicted`` when a window calls it so; the judge asks for
an edit where its pointer also finds the evidence words for a flagged span, and proposes the
sentence with those words in (its own decision on it made while proposing: accepted when the
judge reads the revision as supported and no longer flags the words it wrote, and the form
guards allow it). ``supported`` when a window supports it, else ``not_stated``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from editor.judge.base import Decision, Finding, Judge, Proposal, Rewrite
from editor.judge.span_fix import SpanFixer, asked, windows
from editor.result import Flag
from editor.text.document import TextParser
from editor.text.words import answering_sentences, changed_run
from editor.types import Evidence, evidence_text


class SpanJudgeOfFixes(Judge):
    """A ``SpanFixer`` behind the ``Judge`` interface (see the module doc)."""

    name = "span"

    def __init__(
        self, fixer: SpanFixer, sentences_per_query: int = 1, parser: TextParser | None = None
    ) -> None:
        self.fixer = fixer
        self.sentences_per_query = sentences_per_query
        self.parser = parser or TextParser()

    def assess_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Finding]:
        return [self._assess(text, query, ev, context) for text, query, ev in items]

    def _assess(self, text: str, query: str, ev: Evidence, context: str | None) -> Finding:
        spans = answering_sentences(text, query, self.sentences_per_query)
        if not spans:
            return Finding(
                "not_checkable", "no sentence of the text answers the query", evidence=ev
            )
        parsed = self.parser.parse(text, context)
        question = asked(context)
        fixes = []
        for span in spans:
            sentence = text[span[0] : span[1]]
            alone = parsed.standalone(sentence)
            ev_text = [evidence_text(ev)]
            fixes.append((span, self.fixer.fix_in_context(sentence, alone, ev_text, question)))
        span, f = max(fixes, key=lambda x: (x[1].verdict == "contradicted", x[1].supported))
        sentence = text[span[0] : span[1]]
        flags = tuple(
            Flag(
                span[0] + s.start,
                span[0] + s.end,
                s.kind,
                f.window[s.fix[0] : s.fix[1]] if s.fix else None,
            )
            for s in f.spans
            if f.verdict != "supported"
        )
        scores = (f.supported, f.contradicted)
        if f.verdict == "contradicted" and any(s.fix for s in f.spans):
            flagged = ", ".join(
                repr(sentence[s.start : s.end]) for s in f.spans if s.kind == "contradicted"
            )
            proposal = None
            if f.proposed is not None and f.decision is not None:
                proposal = Proposal(f.proposed, f.stated, f.decision)
            return Finding(
                "contradicted",
                f"the evidence contradicts {flagged}",
                span,
                *scores,
                "span",
                flags,
                opens=True,
                proposal=proposal,
                evidence=ev,
            )
        if f.verdict == "supported":
            why = f"the evidence supports {sentence!r} (P(supported) {f.supported:.2f})"
            return Finding("supported", why, span, *scores, evidence=ev)
        verdict = "contradicted" if f.verdict == "contradicted" else "not_stated"
        return Finding(
            verdict, f"{f.reason}: {sentence!r}", span, *scores, flags=flags, evidence=ev
        )

    def accept(self, edit: Rewrite, finding: Finding, context: str | None = None) -> Decision:
        """The decision made with the proposal when ``edit`` writes it; another revision is
        read against the same evidence's windows as the proposal was."""
        before, new = edit.before, edit.new
        p = finding.proposal
        if p is not None and new.strip() == p.text.strip():
            return p.decision
        wins = windows(finding.evidence_text)
        if not wins or not new.strip():
            return Decision("display", "rejected: nothing to judge the revision against")
        old = before[finding.span[0] : finding.span[1]] if finding.span else before
        a, _, c = changed_run(old, new)
        return self.fixer.accept(new, wins[0], (a, c), wins, asked(context))


class AskedToo(Judge):
    """The span judge with a question's answer compared too (``editor.answers``): where the
    span judge asks for no edit and the text answers the question the context asks otherwise
    than the evidence does (``QuestionAgreement``), the finding asks for an edit (the answer
    proposer writes the evidence's answer in); every edit is the span judge's to accept."""

    name = "span"

    def __init__(self, span: SpanJudgeOfFixes) -> None:
        self.span = span
        self.fixer = span.fixer  # the span judge's own (the citation locator shares it)
        self.accept = span.accept

    def assess_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Finding]:
        found = self.span.assess_batch(items, context)
        if not context:
            return found
        from editor.judge.agreement.question import QuestionAgreement

        asked_too = QuestionAgreement(_Given(found)).check_batch(items, context)
        return [
            replace(q, evidence=ev, supported=f.supported, contradicted=f.contradicted)
            if q.opens and not f.opens and q.span is not None
            else f
            for (_, _, ev), f, q in zip(items, found, asked_too, strict=True)
        ]


class _Given:
    """Findings already made, read as a gate's (``QuestionAgreement`` compares the answers where
    they ask for no edit)."""

    def __init__(self, found: list[Finding]) -> None:
        self.found = found

    def check_batch(self, items: object, context: object = None) -> list[Finding]:
        return self.found
