"""The ``learned`` and ``union`` judges: both judges assess each sentence, each proposes its
edit, and one decision is made from all of it.

For a (text, query, evidence): the rules judge's gate and the span judge assess the sentence;
the span judge's own revision is one candidate, the rules editors' revision another. The judge
asks no editor: the revision loop's proposers write the rules editors' candidates, in order,
where the rules gate finds a contradiction in the sentence, and ``choose`` has the rules judge
pick among them (the first it applies) before the union or the head decides between the two.

- ``union`` (the baseline): the span judge's edit where it makes one (it accepts it), else the
  rules judge's where that one accepts it; each judge's own decision stands.
- ``learned``: a head (``editor.judge.signals``) reads both judges' signals and gives P(the
  sentence is wrong) and, for each candidate, P(the edit is right). The best candidate is
  applied when P(right) reaches the head's operating point (chosen on dev so that applied edits
  are right at least nine times in ten), suggested (``unsafe``) from its lower point, else only
  its words are named. The report's verdict is the head's: contradicted from ``wrong_min``
  where a judge found evidence against the sentence, or where an edit is applied or
  suggested; never supported where words are named against the evidence (``not_stated``).
  The reason opens with that verdict (``editor.verdicts.DECIDED``), then the readings weighed.
  Words researched evidence only does not state are not named (on real answers most words of
  most right sentences are unstated in what research finds, and naming them buries the few
  that matter): the sentence's verdict, ``not_stated``, says so. Evidence the caller gave
  (``source`` ``given``: the text's own sources) is what the text claims to rest on, so there
  a word it does not state is named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from editor.judge.base import (
    Candidate,
    Choice,
    Decision,
    Finding,
    Judge,
    Proposal,
    Rewrite,
)
from editor.judge.signals import DecidedEdit, Head, edit_signals, sentence_signals
from editor.result import Flag
from editor.text.words import changed_run
from editor.types import Evidence
from editor.verdicts import DECIDED


@dataclass(frozen=True)
class Assessed:
    """Both judges' findings on one item and the candidate edits of its sentence."""

    text: str
    evidence: Evidence
    rules: Finding
    span: Finding
    candidates: tuple[DecidedEdit, ...]

    @property
    def sentence_span(self) -> tuple[int, int] | None:
        return self.span.span or self.rules.span

    @property
    def sentence(self) -> str:
        s = self.sentence_span
        return self.text[s[0] : s[1]] if s else ""


class CombinedJudge(Judge):
    """The rules and span judges read together (see the module doc). It calls no editor: the
    rules editors' candidates come from the revision loop's proposers, and ``choose`` weighs
    them with the span judge's own."""

    def __init__(self, rules: Judge, span: Judge, head: Head | None = None) -> None:
        self.rules = rules
        self.span = span
        self.head = head
        self.name = "learned" if head is not None else "union"
        self.cross = head is not None
        """whether each edit is read by the other judge too (the head's signal; the union
        does not need it, ``purr train judge`` turns it on to collect it)"""

    # -- both judges and their candidates ---------------------------------------------------

    def pairs_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Assessed]:
        """Both judges' findings on each item, before any candidate is written."""
        rules = self.rules.assess_batch(items, context)
        spans = self.span.assess_batch(items, context)
        return [
            Assessed(text, ev, r, s, ())
            for (text, _, ev), r, s in zip(items, rules, spans, strict=True)
        ]

    def choose(
        self,
        before: str,
        finding: Finding,
        candidates: Sequence[Candidate],
        context: str | None = None,
        known: Sequence[Decision] = (),
    ) -> Choice:
        """The choice among ``candidates`` for ``finding`` (one ``assess_batch`` opened), with
        the item they leave as ``Choice.weighed``; a finding this judge did not open (no parts)
        is chosen from its own ``accept``. The first candidate is the span judge's where it
        writes the span judge's proposal; the rest are the rules editors', which the rules judge
        reads in order (``Judge.choose`` on its ``accept``) where its gate opened the same sentence; each judge's
        pick is one candidate of the union's or the head's decision. ``Choice.more``: whether
        later proposers can still change it (the rules judge has applied none of theirs yet)."""
        if len(finding.parts) != 2:
            return Judge.choose(self, before, finding, candidates, context, known)
        r, s = finding.parts
        ev = finding.evidence
        assert ev is not None and finding.span is not None
        picked: list[tuple[int, DecidedEdit]] = []
        decisions: list[Decision] = []
        k = 0
        p = _span_proposal(s)
        if p is not None and candidates and candidates[0].text.strip() == p.text.strip():
            picked.append((0, DecidedEdit("span", p.text, p.reason, p.decision)))
            decisions.append(p.decision)
            k = 1
        done = not _rules_open(r, s)
        rest = candidates[k:]
        if rest and not done:
            ch = Judge.choose(self.rules, before, replace(r, evidence=ev), rest, context, known[k:])
            decisions += ch.decisions
            if ch.index is not None:
                c = rest[ch.index]
                new = Rewrite.of(before, finding.span, c.text).new
                picked.append((k + ch.index, DecidedEdit("rules", new, c.reason, ch.decision)))
            done = ch.decision.accepted
        if self.cross:
            picked = [(i, self._cross(c, before, r, s, context)) for i, c in picked]
        a = Assessed(before, ev, r, s, tuple(c for _, c in picked))
        f, chosen = self._decided(a)
        if chosen is None or f.proposal is None:
            none = Decision("display", "rejected: no candidate")
            return Choice(None, none, tuple(decisions), f, not done, a)
        index = next(i for i, c in picked if c is chosen)
        d = f.proposal.decision
        more = not done and (self.head is not None or not d.accepted)
        return Choice(index, d, tuple(decisions), f, more, a)

    def opened(self, a: Assessed) -> Finding:
        """The finding of an item before its candidates: the decision without any where no
        candidate can come, else one that asks for them (with the span judge's proposal, and
        both findings as its parts for ``choose``)."""
        decided = self.decide(a)
        proposal = _span_proposal(a.span)
        if proposal is None and not _rules_open(a.rules, a.span):
            return decided
        return replace(
            decided,
            span=a.sentence_span,
            rule="span" if proposal is not None else decided.rule,
            opens=True,
            proposal=proposal,
            evidence=a.evidence,
            parts=(a.rules, a.span),
        )

    def _cross(
        self, c: DecidedEdit, text: str, r: Finding, s: Finding, context: str | None
    ) -> DecidedEdit:
        """``c`` with the other judge's decision on it (read against that judge's finding, on
        the sentence ``c`` revises)."""
        judge, of, mine = (self.rules, r, s) if c.source == "span" else (self.span, s, r)
        if mine.span is None:
            return c
        a, b = mine.span
        edit = Rewrite(text, text[:a] + c.text + text[b:], (a, a + len(c.text)))
        try:
            d = judge.accept(edit, replace(of, span=(a, b)), context)
        except ValueError:  # a judge that cannot read it decides nothing
            return c
        return replace(c, cross=d)

    # -- the Judge interface ----------------------------------------------------------------

    def assess_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Finding]:
        return [self.opened(a) for a in self.pairs_batch(items, context)]

    def decide(self, a: Assessed) -> Finding:
        """The finding on an assessed item: the union's or the head's (see the module doc)."""
        return self._decided(a)[0]

    def _decided(self, a: Assessed) -> tuple[Finding, DecidedEdit | None]:
        if self.head is None:
            return self._union(a)
        return self._learned(a, self.head)

    def accept(self, edit: Rewrite, finding: Finding, context: str | None = None) -> Decision:
        p = finding.proposal
        if p is not None and edit.new.strip() == p.text.strip():
            return p.decision
        return Decision("display", "rejected: not the revision the judge proposed")

    # -- decisions --------------------------------------------------------------------------

    def _union(self, a: Assessed) -> tuple[Finding, DecidedEdit | None]:
        by = {c.source: c for c in a.candidates}
        chosen = next(
            (by[s] for s in ("span", "rules") if s in by and by[s].decision.accepted), None
        )
        chosen = chosen or by.get("span") or by.get("rules")
        base = a.span if a.span.opens or not a.rules.opens else a.rules
        if chosen is None:
            return replace(base, evidence=a.evidence), None
        first = a.span if chosen.source == "span" else a.rules
        return self._finding(a, first, chosen, chosen.decision), chosen

    def _learned(self, a: Assessed, head: Head) -> tuple[Finding, DecidedEdit | None]:
        sig = sentence_signals(a.rules, a.span)
        p_wrong = head.wrong(sig)
        scored = [
            (head.right({**sig, **edit_signals(a.sentence, c, a.evidence.text, a.candidates)}), c)
            for c in a.candidates
        ]
        found = a.span if a.span.opens or not a.rules.opens else a.rules
        said = "supported" if "supported" in (a.rules.verdict, a.span.verdict) else "not_stated"
        if found.verdict == "not_checkable":
            said = "not_checkable"
        if not scored:
            against = _named(found.flags) or a.rules.opens or a.span.opens
            verdict = "contradicted" if p_wrong >= head.wrong_min and against else said
            f = replace(found, flags=_named(found.flags, a.evidence), opens=False)
            return _said(f, verdict, p_wrong, a), None
        p_right, best = max(scored, key=lambda x: x[0])
        why = f"P(edit right) {p_right:.2f}"
        if p_right >= head.apply_min:
            d = Decision("safe", f"verified: {why} >= {head.apply_min:.2f}", best.source)
        elif p_right >= head.suggest_min:
            d = Decision("unsafe", f"rejected: not sure, {why} < {head.apply_min:.2f}")
        else:
            d = Decision("display", f"rejected: {why} < {head.suggest_min:.2f}")
        first = a.span if best.source == "span" else a.rules
        f = self._finding(a, first, best, d)
        doubted = p_wrong >= head.wrong_min or d.applicability != "display"
        return _said(f, "contradicted" if doubted else said, p_wrong, a), best

    def _finding(self, a: Assessed, first: Finding, c: DecidedEdit, d: Decision) -> Finding:
        """The finding of ``first`` (the judge that wrote ``c``) with ``c`` as its proposal and
        the words ``c`` replaces named (with its words as their fix) where ``first`` named
        none against the evidence."""
        span = a.sentence_span
        flags = _named(first.flags, a.evidence)
        if span is not None and not flags:
            s, e, f = changed_run(a.sentence, c.text)
            flags = (Flag(span[0] + s, span[0] + e, "contradicted", c.text[s:f] or None),)
        return replace(
            first,
            verdict="contradicted",
            span=span,
            flags=flags,
            opens=True,
            proposal=Proposal(c.text, f"{c.source}: {c.reason}", d),
            evidence=a.evidence,
        )


def _said(f: Finding, verdict: str, p_wrong: float, a: Assessed) -> Finding:
    """``f`` under the head's ``verdict``, its reason opening with it (the readings weighed
    follow). A sentence with words named against its evidence is not supported, whatever the
    head reads (it is not stated: doubted, its words named); a wrong one that names no words
    names the whole sentence."""
    flags = f.flags
    if verdict == "supported" and flags:
        verdict = "not_stated"
    span = f.span or a.sentence_span  # the sentence this finding judged
    if verdict == "contradicted" and not flags and span is not None:
        flags = (Flag(span[0], span[1], "contradicted"),)
    reason = f"{DECIDED[verdict]} (P(wrong) {p_wrong:.2f}); {f.reason}"
    return replace(
        f,
        verdict=verdict,  # type: ignore[arg-type]
        reason=reason,
        supported=1.0 - p_wrong,
        contradicted=p_wrong,
        flags=flags,
        opens=f.opens and verdict != "supported",
        evidence=a.evidence,
    )


def _span_proposal(s: Finding) -> Proposal | None:
    """The span judge's own revision, where it read a sentence and wrote one."""
    return s.proposal if s.span is not None else None


def _rules_open(r: Finding, s: Finding) -> bool:
    """Whether the rules editors write candidates for the item: the rules gate asks for an edit
    of the sentence the span judge read (or the span judge read none)."""
    return r.opens and r.span is not None and (s.span is None or s.span == r.span)


def _named(flags: tuple[Flag, ...], evidence: Evidence | None = None) -> tuple[Flag, ...]:
    """The flags naming words the evidence contradicts, and, where the caller gave the
    evidence, the words it does not state (see the module doc)."""
    given = evidence is not None and evidence.source == "given"
    return tuple(f for f in flags if given or f.kind != "not_supported")
