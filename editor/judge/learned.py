"""The ``learned`` and ``union`` judges: both judges assess each sentence, each proposes its
edit, and one decision is made from all of it.

For a (text, query, evidence): the rules judge's gate and the span judge assess the sentence;
the span judge's own revision is one candidate, the rules editors' revision (asked in order
where the rules gate finds a contradiction, the rules judge choosing among them) another.

- ``union`` (the baseline): the span judge's edit where it makes one (it accepts it), else the
  rules judge's where that one accepts it; each judge's own decision stands.
- ``learned``: a head (``editor.judge.signals``) reads both judges' signals and gives P(the
  sentence is wrong) and, for each candidate, P(the edit is right). The best candidate is
  applied when P(right) reaches the head's operating point (chosen on dev so that applied edits
  are right at least nine times in ten), suggested (``unsafe``) from its lower point, else only
  its words are named. The report's verdict is the head's: contradicted from ``wrong_min``
  where a judge found evidence against the sentence. Words researched evidence only does not
  state are not named (on real answers most words of most right sentences are unstated in what
  research finds, and naming them buries the few that matter): the sentence's verdict,
  ``not_stated``, says so. Evidence the caller gave (``source`` ``given``: the text's own
  sources) is what the text claims to rest on, so there a word it does not state is named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from editor.judge.base import Candidate, Decision, Finding, FirstSure, Judge, Proposal
from editor.judge.signals import DecidedEdit, Head, edit_signals, sentence_signals
from editor.result import Flag
from editor.text.words import changed_run, keep_spacing
from editor.types import Evidence


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


class CombinedJudge(FirstSure):
    """The rules and span judges read together (see the module doc)."""

    def __init__(
        self, rules: Judge, editors: Sequence[Any], span: Judge, head: Head | None = None
    ) -> None:
        self.rules = rules
        self.editors = list(editors or ())
        self.span = span
        self.head = head
        self.name = "learned" if head is not None else "union"
        self.cross = head is not None
        """whether each edit is read by the other judge too (the head's signal; the union
        does not need it, ``purr train judge`` turns it on to collect it)"""

    # -- both judges and their candidates ---------------------------------------------------

    def candidates_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Assessed]:
        """Both findings and the candidate edits of each item's sentence."""
        rules = self.rules.assess_batch(items, context)
        spans = self.span.assess_batch(items, context)
        out = []
        for (text, _, ev), r, s in zip(items, rules, spans, strict=True):
            cands: list[DecidedEdit] = []
            if s.proposal is not None and s.span is not None:
                p = s.proposal
                cands.append(DecidedEdit("span", p.text, p.reason, p.decision))
            if r.opens and r.span is not None and (s.span is None or s.span == r.span):
                c = self._rules_edit(text, replace(r, evidence=ev), context)
                if c is not None:
                    cands.append(c)
            if self.cross:
                cands = [self._cross(c, text, r, s, context) for c in cands]
            out.append(Assessed(text, ev, r, s, tuple(cands)))
        return out

    def _rules_edit(self, text: str, r: Finding, context: str | None) -> DecidedEdit | None:
        """The rules editors' edit of ``r``'s sentence, asked in order until the rules judge
        applies one, with the rules judge's choice among them."""
        assert r.span is not None
        a, b = r.span
        sentence = text[a:b]
        cands: list[Candidate] = []
        choice = None
        for ed in self.editors:
            rev = ed.edit(sentence, [r.evidence], context)
            new = keep_spacing(sentence, rev.text)
            if new.strip() != sentence.strip():
                cands.append(Candidate(new, rev.reason, rev.editor or ed.name))
                known = choice.decisions if choice else ()
                choice = self.rules.choose(text, r, cands, context, known)
                if choice.decision.accepted:
                    break
        if choice is None or choice.index is None:
            return None
        c = cands[choice.index]
        return DecidedEdit("rules", c.text, c.reason, choice.decision)

    def _cross(
        self, c: DecidedEdit, text: str, r: Finding, s: Finding, context: str | None
    ) -> DecidedEdit:
        """``c`` with the other judge's decision on it (read against that judge's finding, on
        the sentence ``c`` revises)."""
        judge, of, mine = (self.rules, r, s) if c.source == "span" else (self.span, s, r)
        if mine.span is None:
            return c
        a, b = mine.span
        after = text[:a] + c.text + text[b:]
        try:
            d = judge.accept(text, after, replace(of, span=(a, b)), (a, a + len(c.text)), context)
        except ValueError:  # a judge that cannot read it decides nothing
            return c
        return replace(c, cross=d)

    # -- the Judge interface ----------------------------------------------------------------

    def assess_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Finding]:
        return [self.decide(a) for a in self.candidates_batch(items, context)]

    def decide(self, a: Assessed) -> Finding:
        """The finding on an assessed item: the union's or the head's (see the module doc)."""
        if self.head is None:
            return self._union(a)
        return self._learned(a, self.head)

    def accept(
        self,
        before: str,
        after: str,
        finding: Finding,
        span_after: tuple[int, int],
        context: str | None = None,
    ) -> Decision:
        p = finding.proposal
        if p is not None and after[span_after[0] : span_after[1]].strip() == p.text.strip():
            return p.decision
        return Decision("display", "rejected: not the revision the judge proposed")

    # -- decisions --------------------------------------------------------------------------

    def _union(self, a: Assessed) -> Finding:
        by = {c.source: c for c in a.candidates}
        chosen = next(
            (by[s] for s in ("span", "rules") if s in by and by[s].decision.accepted), None
        )
        chosen = chosen or by.get("span") or by.get("rules")
        base = a.span if a.span.opens or not a.rules.opens else a.rules
        if chosen is None:
            return replace(base, evidence=a.evidence)
        first = a.span if chosen.source == "span" else a.rules
        return self._finding(a, first, chosen, chosen.decision)

    def _learned(self, a: Assessed, head: Head) -> Finding:
        sig = sentence_signals(a.rules, a.span)
        p_wrong = head.wrong(sig)
        scored = [
            (head.right({**sig, **edit_signals(a.sentence, c, a.evidence.text, a.candidates)}), c)
            for c in a.candidates
        ]
        found = a.span if a.span.opens or not a.rules.opens else a.rules
        probs = {"supported": 1.0 - p_wrong, "contradicted": p_wrong}
        said = "supported" if "supported" in (a.rules.verdict, a.span.verdict) else "not_stated"
        if found.verdict == "not_checkable":
            said = "not_checkable"
        if not scored:
            against = _named(found.flags) or a.rules.opens or a.span.opens
            verdict = "contradicted" if p_wrong >= head.wrong_min and against else said
            why = f"{found.reason} (P(wrong) {p_wrong:.2f})"
            return replace(
                found,
                verdict=verdict,
                reason=why,
                **probs,
                flags=_named(found.flags, a.evidence),
                opens=False,
                evidence=a.evidence,
            )
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
        verdict = "contradicted" if p_wrong >= head.wrong_min or d.accepted else said
        return replace(f, verdict=verdict, reason=f"{f.reason} (P(wrong) {p_wrong:.2f})", **probs)

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


def _named(flags: tuple[Flag, ...], evidence: Evidence | None = None) -> tuple[Flag, ...]:
    """The flags naming words the evidence contradicts, and, where the caller gave the
    evidence, the words it does not state (see the module doc)."""
    given = evidence is not None and evidence.source == "given"
    return tuple(f for f in flags if given or f.kind != "not_supported")
