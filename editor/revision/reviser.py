"""The revision loop: agreement gate, then edit, both ways the papers run it.

- ``iterative`` (RARR): for each (query, evidence) in research order, the agreement model
  judges the *current* text; only on ``disagrees`` is the editor called, with that one evidence,
  and an accepted edit becomes the text the next evidence is judged against.
- ``one-pass`` (PURR): every evidence is judged against the original text (when the gate is
  on); the editor then sees each disagreeing sentence with all of its evidence at once
  (disagreeing first, up to the editor's limit) and writes its revision in one call.

With ``scope=sentence`` the editor gets only the sentence the agreement model judged and the
result is spliced back, so nothing else in the passage can change. Every edit is checked
against RARR's size limits (Levenshtein distance at most ``max_edit_chars`` and at most
``max_edit_ratio`` of the text) and rejected, with the reason, when larger.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from editor.config import RevisionConfig
from editor.result import Step
from editor.revision.acceptance import EditAcceptance
from editor.revision.agreement.base import Agreement, AgreementModel, flags_of
from editor.revision.base import edit_allowed, keep_spacing
from editor.revision.editors.base import Editor, edits
from editor.text.words import answering_sentences, word_changes
from editor.types import Evidence, evidence_text


def _agrees(a: Agreement) -> bool | None:
    return None if a.verdict == "irrelevant" else a.verdict == "agrees"


class Reviser:
    """Agreement gate + editor, in the configured mode (see the module doc)."""

    def __init__(
        self,
        editor: Editor,
        agreement: AgreementModel | None,
        cfg: RevisionConfig | None = None,
        acceptance: EditAcceptance | None = None,
    ) -> None:
        self.editor = editor
        self.agreement = agreement
        self.cfg = cfg or RevisionConfig()
        self.acceptance = acceptance
        if self.cfg.gate and agreement is None:
            raise ValueError(
                "revision.gate=true needs an agreement model; pass one or set gate off"
            )

    @property
    def name(self) -> str:
        return self.editor.name

    def revise(
        self, text: str, evidence: Sequence[Evidence], context: str | None = None
    ) -> tuple[str, list[Step]]:
        """The revised text and one ``Step`` per (query, evidence) considered."""
        if not evidence or not edits(self.editor):
            return text, []
        evidence = list(evidence)[: self.cfg.max_steps]
        if self.cfg.mode == "iterative":
            return self._iterative(text, evidence, context)
        return self._one_pass(text, evidence, context)

    # -- helpers ---------------------------------------------------------------------------

    def _judge(self, text: str, evidence: Sequence[Evidence], context) -> list[Agreement]:
        if self.cfg.gate:
            assert self.agreement is not None
            return self.agreement.check_batch(
                [(text, _query(e, text), e) for e in evidence], context
            )
        out = []
        for e in evidence:
            spans = answering_sentences(text, _query(e, text), 1)
            out.append(
                Agreement(
                    "disagrees",
                    "gate off: edit without checking",
                    spans[0] if spans else None,
                    rule="gate-off",
                )
            )
        return out

    def _target(self, text: str, a: Agreement) -> tuple[int, int]:
        if self.cfg.scope == "sentence" and a.span is not None:
            return a.span
        return 0, len(text)

    def _splice(
        self,
        current: str,
        span: tuple[int, int],
        rev,
        query: str,
        e: Evidence,
        a: Agreement,
        context: str | None = None,
    ) -> Step:
        """The step of putting ``rev`` in place of ``current[span]``; ``after`` is the new
        text when the edit is within the limits (and, with an ``acceptance``, verified), else
        ``current``."""
        revised = keep_spacing(current[span[0] : span[1]], rev.text)  # only changed words change
        new = current[: span[0]] + revised + current[span[1] :]
        ok, why = edit_allowed(current, new, self.cfg.max_edit_chars, self.cfg.max_edit_ratio)
        proof = None
        if ok and self.acceptance is not None:
            span_new = (span[0], span[0] + len(revised))
            j = self.acceptance.judge(
                current, new, span, span_new, evidence_text(e), context, a.rule
            )
            ok, why, proof = j.accepted, f"{why}; {j.reason}", j.proof
        reason = f"{a.reason}; {rev.reason}; {why}"
        editor = rev.editor or self.editor.name
        after = new if ok else current
        return Step(
            query, e.id, _agrees(a), reason, current, after, ok, a.rule, editor, proof, flags_of(a)
        )

    # -- RARR ------------------------------------------------------------------------------

    def _iterative(self, text, evidence, context) -> tuple[str, list[Step]]:
        current = text
        steps: list[Step] = []
        written: set[str] = set()  # words earlier accepted edits put in
        verdicts = self._judge(current, evidence, context)
        i = 0
        while i < len(evidence):
            e, a = evidence[i], verdicts[i]
            query = _query(e, current)
            if not a.disagrees:
                steps.append(
                    Step(
                        query,
                        e.id,
                        _agrees(a),
                        a.reason,
                        current,
                        current,
                        False,
                        flags=flags_of(a),
                    )
                )
                i += 1
                continue
            span = self._target(current, a)
            rev = self.editor.edit(current[span[0] : span[1]], [e], context)
            step = self._splice(current, span, rev, query, e, a, context)
            undone = step.accepted and _undoes(step.before, step.after, written)
            if undone:  # evidence disagrees with evidence: the first (most relevant) stands
                why = f"{step.reason}; rejected: it undoes {undone!r}, an earlier evidence's edit"
                step = replace(
                    step, reason=why, after=step.before, accepted=False, verified_by=None
                )
            steps.append(step)
            i += 1
            if step.accepted:
                written |= _changed_words(step.before, step.after)
                current = step.after
                if i < len(evidence):  # the rest is judged against the edited text
                    verdicts[i:] = self._judge(current, evidence[i:], context)
        return current, steps

    # -- PURR ------------------------------------------------------------------------------

    def _one_pass(self, text, evidence, context) -> tuple[str, list[Step]]:
        verdicts = self._judge(text, evidence, context)
        steps: list[Step] = []
        groups: dict[tuple[int, int], list[int]] = {}
        for i, (e, a) in enumerate(zip(evidence, verdicts, strict=True)):
            if a.disagrees:
                groups.setdefault(self._target(text, a), []).append(i)
            else:
                q = _query(e, text)
                steps.append(
                    Step(q, e.id, _agrees(a), a.reason, text, text, False, flags=flags_of(a))
                )
        if not groups:
            return text, steps
        whole = (0, len(text))
        if whole in groups and len(groups) > 1:  # a passage-wide edit absorbs the sentence ones
            groups = {whole: sorted(i for g in groups.values() for i in g)}
        spans = sorted(groups)
        items = []
        for span in spans:
            first = groups[span]
            rest = [i for i in range(len(evidence)) if i not in first]
            items.append((text[span[0] : span[1]], [evidence[i] for i in first + rest]))
        revisions = self.editor.edit_batch(items, context)
        current = text
        # splice right to left so earlier spans keep their offsets
        for span, rev in sorted(zip(spans, revisions, strict=True), key=lambda x: -x[0][0]):
            lead = groups[span][0]
            e, a = evidence[lead], verdicts[lead]
            step = self._splice(current, span, rev, _query(e, text), e, a, context)
            steps.append(step)
            current = step.after
        return current, steps


def _changed_words(before: str, after: str) -> set[str]:
    """Lower-cased words of ``after`` that replace or add to words of ``before``.

    >>> sorted(_changed_words("Directed by Steven Spielberg.", "Directed by Robert Zemeckis."))
    ['robert', 'zemeckis']
    """
    return {w.lower() for _, new in word_changes(before, after, ("replace", "insert")) for w in new}


def _undoes(before: str, after: str, written: set[str]) -> str | None:
    """The first word an edit of ``before`` into ``after`` removes that an earlier accepted edit
    wrote (``written``), or None.

    >>> _undoes("Directed by Robert Zemeckis.", "Directed by Steven Spielberg.", {"robert", "zemeckis"})
    'robert'
    """
    removed = [
        w.lower() for old, _ in word_changes(before, after, ("replace", "delete")) for w in old
    ]
    return next((w for w in removed if w in written), None)


def _query(e: Evidence, text: str) -> str:
    return e.query or text
