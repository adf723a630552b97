"""The revision loop: the judge's finding, then an edit, both ways the papers run it.

- ``iterative`` (RARR): for each (query, evidence) in research order, the judge assesses the
  *current* text; only where its finding asks for an edit is one made, with that one
  evidence, and an accepted edit becomes the text the next evidence is judged against.
- ``one-pass`` (PURR): every evidence is judged against the original text (when the gate is
  on); the editor then sees each disagreeing sentence with all of its evidence at once
  (disagreeing first, up to the editor's limit) and writes its revision in one call.

A judge that proposes its own revisions (``Judge.proposes``: the span judge) writes the edit
of the sentence it judged; otherwise the editor does. With ``scope=sentence`` the edit covers
only the sentence the judge assessed, spliced back, so nothing else in the passage can change.
Every edit is checked against RARR's size limits (Levenshtein distance at most
``max_edit_chars`` and at most ``max_edit_ratio`` of the text), then the judge decides it:
applied when it is sure (``safe``); when it is unsure (``unsafe``) the step keeps the
suggestion and the text stays, unless ``apply_unsure`` is set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from editor.config import RevisionConfig
from editor.judge.base import Finding, Judge, outranked
from editor.result import Step
from editor.revision.base import edit_allowed
from editor.revision.editors.base import Editor, Revision, edits
from editor.text.words import answering_sentences, keep_spacing, word_changes
from editor.types import Evidence


class Reviser:
    """A judge + an editor, in the configured mode (see the module doc)."""

    def __init__(
        self,
        editor: Editor,
        judge: Judge | None,
        cfg: RevisionConfig | None = None,
    ) -> None:
        self.editor = editor
        self.judge = judge
        self.cfg = cfg or RevisionConfig()
        if self.cfg.gate and judge is None:
            raise ValueError("revision.gate=true needs a judge; pass one or set gate off")

    @property
    def name(self) -> str:
        """The editor's name, or a judge's that writes its own revisions."""
        if self.judge is not None and self.judge.proposes:
            return self.judge.name
        return self.editor.name

    def revise(
        self, text: str, evidence: Sequence[Evidence], context: str | None = None
    ) -> tuple[str, list[Step]]:
        """The revised text and one ``Step`` per (query, evidence) considered."""
        proposes = self.judge is not None and self.judge.proposes
        if not evidence or not (edits(self.editor) or proposes):
            return text, []
        evidence = list(evidence)[: self.cfg.max_steps]
        if self.cfg.mode == "iterative":
            return self._iterative(text, evidence, context)
        return self._one_pass(text, evidence, context)

    # -- helpers ---------------------------------------------------------------------------

    def _judge(self, text: str, evidence: Sequence[Evidence], context) -> list[Finding]:
        if self.cfg.gate:
            assert self.judge is not None
            found = self.judge.assess_batch([(text, _query(e, text), e) for e in evidence], context)
            return outranked(found) if self.cfg.outranked else found
        out = []
        for e in evidence:
            spans = answering_sentences(text, _query(e, text), 1)
            out.append(
                Finding(
                    "not_stated",
                    "gate off: edit without checking",
                    spans[0] if spans else None,
                    rule="gate-off",
                    opens=True,
                    evidence=e,
                )
            )
        return out

    def _target(self, text: str, f: Finding) -> tuple[int, int]:
        if self.cfg.scope == "sentence" and f.span is not None:
            return f.span
        return 0, len(text)

    def _proposed(self, span: tuple[int, int], f: Finding) -> Revision | None:
        """The judge's own revision of the sentence it judged, when it wrote one for it."""
        if f.proposal is None or span != f.span:
            return None
        return Revision(f.proposal.text, f.proposal.reason, self.judge.name if self.judge else None)

    def _step(self, query: str, e: Evidence, f: Finding, text: str) -> Step:
        """The step of a finding that asks for no edit."""
        return Step(
            query,
            e.id,
            f.agrees,
            f.reason,
            text,
            text,
            False,
            flags=f.named(),
            verdict=f.verdict,
            span=f.span,
        )

    def _splice(
        self,
        current: str,
        span: tuple[int, int],
        rev: Revision,
        query: str,
        e: Evidence,
        f: Finding,
        context: str | None = None,
    ) -> Step:
        """The step of putting ``rev`` in place of ``current[span]``; ``after`` is the new
        text when the edit is within the limits and the judge accepts it (or is unsure of it,
        with ``apply_unsure``), else ``current``, the rejected edit kept as ``suggested`` when
        the judge is only unsure of it."""
        revised = keep_spacing(current[span[0] : span[1]], rev.text)  # only changed words change
        new = current[: span[0]] + revised + current[span[1] :]
        ok, why = edit_allowed(current, new, self.cfg.max_edit_chars, self.cfg.max_edit_ratio)
        proof, suggested = None, None
        if ok and self.judge is not None:
            span_new = (span[0], span[0] + len(revised))
            d = self.judge.accept(current, new, replace(f, span=span), span_new, context)
            why = f"{why}; {d.reason}" if d.reason else why
            ok, proof = d.accepted, d.proof
            if d.applicability == "unsafe" and self.cfg.apply_unsure:
                ok, why = True, f"{why}; applied as asked (apply_unsure)"
            elif d.applicability == "unsafe":
                suggested = new
        reason = f"{f.reason}; {rev.reason}; {why}"
        editor = rev.editor or self.editor.name
        after = new if ok else current
        return Step(
            query,
            e.id,
            f.agrees,
            reason,
            current,
            after,
            ok,
            f.rule,
            editor,
            proof,
            f.named(),
            f.verdict,
            suggested,
            span,
        )

    # -- RARR ------------------------------------------------------------------------------

    def _iterative(self, text, evidence, context) -> tuple[str, list[Step]]:
        current = text
        steps: list[Step] = []
        written: set[str] = set()  # words earlier accepted edits put in
        verdicts = self._judge(current, evidence, context)
        i = 0
        while i < len(evidence):
            e, f = evidence[i], verdicts[i]
            query = _query(e, current)
            if not f.opens:
                steps.append(self._step(query, e, f, current))
                i += 1
                continue
            span = self._target(current, f)
            rev = self._proposed(span, f) or self.editor.edit(
                current[span[0] : span[1]], [e], context
            )
            step = self._splice(current, span, rev, query, e, f, context)
            undone = step.accepted and _undoes(step.before, step.after, written)
            if undone:  # evidence disagrees with evidence: the first (most relevant) stands
                why = f"{step.reason}; rejected: it undoes {undone!r}, an earlier evidence's edit"
                step = replace(
                    step,
                    reason=why,
                    after=step.before,
                    accepted=False,
                    verified_by=None,
                    suggested=None,
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
        for i, (e, f) in enumerate(zip(evidence, verdicts, strict=True)):
            if f.opens:
                groups.setdefault(self._target(text, f), []).append(i)
            else:
                steps.append(self._step(_query(e, text), e, f, text))
        if not groups:
            return text, steps
        whole = (0, len(text))
        if whole in groups and len(groups) > 1:  # a passage-wide edit absorbs the sentence ones
            groups = {whole: sorted(i for g in groups.values() for i in g)}
        spans = sorted(groups)
        items, proposed = [], {}
        for span in spans:
            first = groups[span]
            own = self._proposed(span, verdicts[first[0]])
            if own is not None:
                proposed[span] = own
                continue
            rest = [i for i in range(len(evidence)) if i not in first]
            items.append((text[span[0] : span[1]], [evidence[i] for i in first + rest]))
        written = iter(self.editor.edit_batch(items, context) if items else [])
        revisions = [proposed.get(span) or next(written) for span in spans]
        current = text
        # splice right to left so earlier spans keep their offsets
        for span, rev in sorted(zip(spans, revisions, strict=True), key=lambda x: -x[0][0]):
            lead = groups[span][0]
            e, f = evidence[lead], verdicts[lead]
            step = self._splice(current, span, rev, _query(e, text), e, f, context)
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
