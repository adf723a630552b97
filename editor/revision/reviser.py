"""The revision loop: the judge's finding, the proposers' candidates, the judge's choice, both
ways the papers run it.

- ``iterative`` (RARR): for each (query, evidence) in research order, the judge assesses the
  *current* text; only where its finding asks for an edit are candidates written, with that one
  evidence, and an applied edit becomes the text the next evidence is judged against.
- ``one-pass`` (PURR): every evidence is judged against the original text (when the gate is
  on); the proposers then see each disagreeing sentence with all of its evidence at once
  (disagreeing first, up to the editor's limit).

Editors propose, the judge decides: the proposers (``editor.revision.proposers``: the judge's
own signal's proposal first, then the configured editors in order) write candidates, each asked
only where the judge has applied none of the earlier ones and no settling proposer (the judge's
own fix, the question's answer) has written one; the judge's ``choose`` picks the
candidate applied (``safe``), suggested (``unsafe``: the text stays, unless ``apply_unsure``)
or none. With ``scope=sentence`` a candidate covers only the sentence the judge assessed,
spliced back, so nothing else in the passage can change; every candidate must first pass RARR's
size limits (Levenshtein distance at most ``max_edit_chars`` and ``max_edit_ratio`` of the
text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from editor.config import JudgeConfig, RevisionConfig
from editor.judge.base import (
    Candidate,
    Choice,
    Decision,
    Finding,
    Judge,
    outranked,
    unjudged,
)
from editor.policy import edit_allowed
from editor.result import Step
from editor.revision.editors.base import Editor
from editor.revision.proposers import OwnProposal, Proposer, proposers_of
from editor.text.words import answering_sentences, changed_words, splice, undoes
from editor.types import Evidence


@dataclass(frozen=True)
class Target:
    """A sentence the judge asked to edit: its span, the finding, the evidence to revise it
    with, and the query and evidence of the step it makes."""

    span: tuple[int, int]
    finding: Finding
    evidence: Sequence[Evidence]
    query: str
    lead: Evidence


class Reviser:
    """A judge and its proposers, in the configured mode (see the module doc)."""

    def __init__(
        self,
        editors: Editor | Sequence[Editor | Proposer],
        judge: Judge | None,
        cfg: RevisionConfig | None = None,
        policy: JudgeConfig | None = None,
    ) -> None:
        listed = list(editors) if isinstance(editors, Sequence) else [editors]
        given = [p for p in listed if hasattr(p, "propose_batch")]
        self.proposers: list[Proposer] = [OwnProposal()] if judge is not None else []
        self.proposers += given + proposers_of([e for e in listed if e not in given], own=False)  # type: ignore[list-item]
        self.judge = judge
        self.cfg = cfg or RevisionConfig()
        self.policy = policy or JudgeConfig()
        """the judge's policy: edit size limits, outranked, apply_unsure"""
        if self.cfg.gate and judge is None:
            raise ValueError("revision.gate=true needs a judge; pass one or set gate off")

    @property
    def name(self) -> str:
        """The first editor's name, or the judge's where only its own signal proposes."""
        named = [p.name for p in self.proposers if not isinstance(p, OwnProposal)]
        return named[0] if named else self.judge.name if self.judge is not None else "identity"

    def revise(
        self, text: str, evidence: Sequence[Evidence], context: str | None = None
    ) -> tuple[str, list[Step]]:
        """The revised text and one ``Step`` per (query, evidence) considered."""
        if not evidence or not self.proposers:
            return text, []
        evidence = list(evidence)[: self.cfg.max_steps]
        if self.cfg.mode == "iterative":
            return self._iterative(text, evidence, context)
        return self._one_pass(text, evidence, context)

    def settle(self, text: str, targets: Sequence[Target], context: str | None) -> list[Step]:
        """One step per target of ``text``: the proposers asked in turn, each where the judge
        has applied no candidate yet, and the judge's choice spliced in (not into ``text``:
        each step's ``after`` is ``text`` with its own target revised)."""
        cands: list[list[Candidate]] = [[] for _ in targets]
        known: list[tuple[Decision, ...]] = [() for _ in targets]
        notes: list[list[str]] = [[] for _ in targets]
        choices: list[Choice | None] = [None for _ in targets]
        settled: set[int] = set()
        tried: list[str | None] = [None for _ in targets]  # the last proposer asked
        for p in self.proposers:
            open_ = [i for i, c in enumerate(choices) if _asks(c, i in settled)]
            if not open_:
                break
            items = [
                (text[t.span[0] : t.span[1]], t.finding, t.evidence)
                for t in (targets[i] for i in open_)
            ]
            written_all = p.propose_batch(items, context)
            for i, item, written in zip(open_, items, written_all, strict=True):
                if not written and p.applies(item, context):
                    notes[i].append(f"{p.name}: no change")
                    tried[i] = p.name
                if written and p.settles:
                    settled.add(i)
                for c in written:
                    ok, why = self._limits(text, targets[i].span, c)
                    if ok:
                        cands[i].append(replace(c, reason=f"{c.reason}; {why}"))
                    else:
                        notes[i].append(f"{c.source}: {why}")
                        tried[i] = c.source
                added = len(cands[i]) > len(known[i])
                if self.judge is not None and (added or (written and choices[i] is None)):
                    choices[i] = self.judge.choose(
                        text,
                        replace(targets[i].finding, span=targets[i].span),
                        cands[i],
                        context,
                        known[i],
                    )
                    known[i] = choices[i].decisions  # type: ignore[union-attr]
                elif cands[i] and self.judge is None:  # gate off: the first candidate
                    choices[i] = Choice(0, Decision("safe", ""))
        for i, t in enumerate(targets):  # the judge's say where no candidate came
            if choices[i] is None and self.judge is not None:
                choices[i] = self.judge.choose(
                    text, replace(t.finding, span=t.span), [], context, ()
                )
        return [
            self._step(text, t, cands[i], choices[i], notes[i], tried[i])
            for i, t in enumerate(targets)
        ]

    # -- helpers ---------------------------------------------------------------------------

    def _judge(self, text: str, evidence: Sequence[Evidence], context) -> list[Finding]:
        if self.cfg.gate:
            assert self.judge is not None
            found = self.judge.assess_batch([(text, _query(e, text), e) for e in evidence], context)
            return outranked(found) if self.policy.outranked else found
        out = []
        for e in evidence:
            spans = answering_sentences(text, _query(e, text), 1)
            out.append(unjudged(spans[0] if spans else None, e))
        return out

    def _target(self, text: str, f: Finding) -> tuple[int, int]:
        if self.cfg.scope == "sentence" and f.span is not None:
            return f.span
        return 0, len(text)

    def _limits(self, text: str, span: tuple[int, int], c: Candidate) -> tuple[bool, str]:
        new, _ = splice(text, span, c.text)
        return edit_allowed(text, new, self.policy.max_edit_chars, self.policy.max_edit_ratio)

    def _noted(self, query: str, e: Evidence, f: Finding, text: str) -> Step:
        """The step of a finding that asks for no edit."""
        return Step.of(f, query, e.id, f.reason, text, rule=None)

    def _step(
        self,
        current: str,
        t: Target,
        cands: list[Candidate],
        choice: Choice | None,
        notes: list[str],
        tried: str | None = None,
    ) -> Step:
        """The step of a target: ``after`` is ``current`` with the chosen candidate in when the
        judge applies it (or is unsure of it, with ``apply_unsure``), else ``current``, an
        unsure candidate kept as ``suggested``."""
        f = choice.finding if choice is not None and choice.finding is not None else t.finding
        reason = "; ".join([f.reason, *notes])
        if choice is None or choice.index is None:
            editor = cands[0].source if cands else tried
            return Step.of(f, t.query, t.lead.id, reason, current, editor=editor, span=t.span)
        c, d = cands[choice.index], choice.decision
        passed = [
            f"{cands[k].source}: {e.reason}"
            for k, e in enumerate(choice.decisions)
            if k != choice.index and e.reason
        ]
        reason = "; ".join([reason, *passed])
        new, _ = splice(current, t.span, c.text)
        ok, why, suggested = d.accepted, c.reason, None
        why = f"{why}; {d.reason}" if d.reason else why
        if d.applicability == "unsafe" and self.policy.apply_unsure:
            ok, why = True, f"{why}; applied as asked (apply_unsure)"
        elif d.applicability == "unsafe":
            suggested = new
        return Step.of(
            f,
            t.query,
            t.lead.id,
            f"{reason}; {why}",
            current,
            new if ok else current,
            ok,
            editor=c.source,
            verified_by=d.proof,
            suggested=suggested,
            span=t.span,
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
                steps.append(self._noted(query, e, f, current))
                i += 1
                continue
            target = Target(self._target(current, f), f, [e], query, e)
            (step,) = self.settle(current, [target], context)
            proposed = step.after if step.accepted else step.suggested
            undone = proposed is not None and undoes(step.before, proposed, written)
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
                written |= changed_words(step.before, step.after)
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
                steps.append(self._noted(_query(e, text), e, f, text))
        if not groups:
            return text, steps
        whole = (0, len(text))
        if whole in groups and len(groups) > 1:  # a passage-wide edit absorbs the sentence ones
            groups = {whole: sorted(i for g in groups.values() for i in g)}
        targets = []
        for span in sorted(groups):
            first = groups[span]
            rest = [i for i in range(len(evidence)) if i not in first]
            e, f = evidence[first[0]], verdicts[first[0]]
            ordered = [evidence[i] for i in first + rest]
            targets.append(Target(span, f, ordered, _query(e, text), e))
        settled = self.settle(text, targets, context)
        current = text
        # splice right to left so earlier spans keep their offsets
        for t, step in sorted(zip(targets, settled, strict=True), key=lambda x: -x[0].span[0]):
            before = current
            if step.accepted or step.suggested:
                tail = len(text) - t.span[1]
                new = (step.after if step.accepted else step.suggested or "")[
                    t.span[0] : -tail or None
                ]
                revised = current[: t.span[0]] + new + current[t.span[1] :]
                if step.accepted:
                    current = revised
                step = replace(step, suggested=None if step.accepted else revised)
            steps.append(replace(step, before=before, after=current))
        return current, steps


def _asks(choice: Choice | None, settled: bool) -> bool:
    """Whether the next proposer is asked for a target: while the judge's last choice says so
    (``Choice.more``), else until a settling proposer wrote or a candidate was applied."""
    if choice is not None and choice.more is not None:
        return choice.more
    return not settled and (choice is None or not choice.decision.accepted)


def _query(e: Evidence, text: str) -> str:
    return e.query or text
