"""The ``rules`` judge: the question-guided NLI gate with its slot checks decides, the editor
proposes, and ``EditAcceptance`` (the verifier, the form rules and the proofs) accepts.

Any agreement model (``agreement.type``: ``nli``, ``llm``, with a question the answer
comparison too) serves as its gate and says its ``Finding``. An edit the
acceptance rejects only for want of proof is ``unsafe`` (suggested); one it refutes, or whose
form it refuses, is ``display`` (the words stay named). The reader's own fix, where the
reader's policy lets it prove it (the decision's proof ``reader``: ``judge.reader.proves``,
``prove_min``), stands where the verifier only lacks proof: the verifier reads word overlap,
and a wrong value that stands elsewhere in the evidence keeps the original as well supported
as the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from editor.judge.acceptance import EditAcceptance
from editor.judge.agreement.base import AgreementModel
from editor.judge.base import Decision, Finding, Judge, Rewrite
from editor.types import Evidence


class RulesJudge(Judge):
    """An agreement gate and an edit acceptance behind the ``Judge`` interface."""

    name = "rules"

    def __init__(
        self, gate: AgreementModel | None, acceptance: EditAcceptance | None = None
    ) -> None:
        self.gate = gate
        self.acceptance = acceptance

    def assess_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Finding]:
        if self.gate is None:
            raise ValueError("this rules judge has no gate (revision.gate=false): it accepts only")
        verdicts = self.gate.check_batch(items, context)
        return [replace(f, evidence=e) for f, (_, _, e) in zip(verdicts, items, strict=True)]

    def accept(self, edit: Rewrite, finding: Finding, context: str | None = None) -> Decision:
        if self.acceptance is None:  # judge.verify_edits off: the size limits alone
            return Decision("safe", "")
        span = finding.span or (0, len(edit.before))
        j = self.acceptance.judge(
            edit.before,
            edit.after,
            span,
            edit.span_after,
            finding.evidence_text,
            context,
            finding.rule,
        )
        p = finding.proposal if finding.rule == "reader" else None
        if j.accepted and p is not None and not p.decision.accepted:  # the reader is unsure
            return Decision("unsafe", f"{j.reason}; {p.decision.reason}")
        if j.accepted and finding.unsure:
            return Decision("unsafe", f"{j.reason}; {finding.unsure}")
        if j.accepted:
            return Decision("safe", j.reason, j.proof)
        new = edit.new
        if (
            j.unsure
            and p is not None
            and p.decision.accepted
            and p.decision.proof == "reader"
            and new.strip() == p.text.strip()
        ):  # the verifier lacks proof; the sure reader's own fix is proved by the reader
            return Decision("safe", f"{j.reason}; proved by the reader instead", "reader")
        return Decision("unsafe" if j.unsure else "display", j.reason)
