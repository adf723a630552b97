"""Extractive fixes by the span judge: find the words the evidence contradicts, copy the words
the evidence states in their place, and keep the result only when the judge accepts it.

For one sentence and an evidence text (cut into windows of consecutive sentences that fit the
judge's input), each window is judged. A window decides only when it states the claim's slot:
a contradiction counts when the pair head calls the sentence contradicted there *and* the
pointer finds the evidence words for a flagged span in that window; support from another
window does not overturn it. The edit replaces the span with the pointed words (a capital
kept at the sentence's start), and is accepted when the judge, reading the revised sentence
against the same window, calls it supported and flags nothing contradicted.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from editor.attribution.span_judge import FlaggedSpan, SpanJudge
from editor.judge.base import Decision
from editor.scope import current
from editor.text.words import changed_run
from editor.verdicts import Verdict
from retrieval.sentences import split

WINDOW_CHARS = 520
"""Evidence characters per window (the shipped judge was trained on windows of this size)."""


@dataclass(frozen=True)
class SpanFix:
    """What the judge found in one sentence and what became of it.

    ``verdict``: the judge's (``editor.verdicts``): supported | contradicted | not_stated;
    ``spans`` the flagged claim spans (with their fixes where the evidence states one);
    ``revised`` the accepted revision or the sentence unchanged; ``window`` the evidence window
    that decided; ``reason`` in words."""

    sentence: str
    verdict: Verdict
    spans: tuple[FlaggedSpan, ...]
    revised: str
    window: str
    reason: str
    supported: float = 0.0
    contradicted: float = 0.0
    proposed: str | None = None
    """the judge's revision, accepted or not (None: it proposes none)"""
    stated: str = ""
    """what the judge found and what the evidence states, without the acceptance"""
    decision: Decision | None = None
    """the judge's decision on ``proposed`` (``unsafe``: it only cannot confirm it)"""

    @property
    def edited(self) -> bool:
        return self.revised != self.sentence


def windows(evidence: str, max_chars: int = WINDOW_CHARS) -> list[str]:
    """Windows of consecutive sentences of ``evidence``, each at most ``max_chars`` (a longer
    sentence alone), a window starting at every sentence (stride 1).

    >>> windows("Rome is old. Oslo is cold. Paris is big.", max_chars=27)
    ['Rome is old. Oslo is cold.', 'Oslo is cold. Paris is big.']
    """
    sents = split(evidence) or [evidence]
    out: list[str] = []
    for i in range(len(sents)):
        w = sents[i]
        for s in sents[i + 1 :]:
            if len(w) + 1 + len(s) > max_chars:
                break
            w += " " + s
        if not out or w not in out[-1]:
            out.append(w)
    return out


_JOINERS = frozenset(
    "who whom whose which that and or but of in on at to for by with from as the a an".split()
)


def fitted(sentence: str, span: tuple[int, int], value: str) -> str:
    """``sentence`` with ``span`` replaced by ``value``, a capital kept at the start, and the
    words that join the value to the evidence's next clause ("who", "and", "of", a comma) left
    at the evidence's end of the value unless the replaced words end the same way.

    >>> fitted("Spielberg created it.", (0, 9), "George Lucas")
    'George Lucas created it.'
    >>> fitted("It was a French naturalist.", (9, 15), "English")
    'It was a English naturalist.'
    >>> fitted("He was an activist and Catholic priest.", (23, 38), "Baptist minister who")
    'He was an activist and Baptist minister.'
    >>> fitted("Its parent company is Microsoft.", (22, 31), "Alphabet Inc.")
    'Its parent company is Alphabet Inc.'
    """
    a, b = span
    words = value.split()
    old_last = sentence[a:b].split()[-1:] or [""]
    while (
        len(words) > 1
        and words[-1].strip(",;").lower() in _JOINERS
        and (words[-1].lower() != old_last[0].lower())
    ):
        words.pop()
    value = " ".join(words).rstrip(",;") if words else value
    if value.endswith(".") and sentence[b : b + 1] == ".":  # "Inc." ends the sentence too
        value = value[:-1]
    if a == 0 and value[:1].islower():
        value = value[:1].upper() + value[1:]
    return sentence[:a] + value + sentence[b:]


class SpanFixer:
    """Judge, point and verify with one span judge (see the module doc)."""

    def __init__(
        self,
        judge: SpanJudge,
        contradicted_min: float = 0.5,
        supported_min: float = 0.5,
        guard: Callable[[str, str, str], str | None] | None = None,
    ) -> None:
        self.guard = guard
        self.judge = judge
        self.contradicted_min = contradicted_min
        self.supported_min = supported_min

    def fix(self, sentence: str, evidence: Sequence[str], question: str = "") -> SpanFix:
        """The fix of ``sentence`` against the evidence texts (each cut into windows), read as
        an answer to ``question`` when one is given and the judge reads questions; within one
        edit each answer is kept (``editor.scope``: the gate and the editor ask the same)."""
        question = question if question and self.judge.reads_questions else ""
        scope = current()
        if scope is None:
            return self._fix(sentence, evidence, question)
        key = (id(self), sentence, tuple(evidence), question)
        with scope.lock:
            kept = scope.fixes.get(key)
        if kept is None:
            kept = self._fix(sentence, evidence, question)
            with scope.lock:
                kept = scope.fixes.setdefault(key, kept)
        return kept

    def fix_in_context(
        self, sentence: str, standalone: str, evidence: Sequence[str], question: str = ""
    ) -> SpanFix:
        """The fix of ``sentence`` judged as ``standalone`` (decontextualised: "It" resolved):
        an edit of the standalone form is made in ``sentence`` where the words it replaces
        occur there exactly once."""
        if standalone == sentence:
            return self.fix(sentence, evidence, question)
        f = self.fix(standalone, evidence, question)

        def mapped(revision: str | None) -> str | None:
            if revision is None or revision == f.sentence:
                return None if revision is None else sentence
            a, b, c = changed_run(f.sentence, revision)
            old, new = f.sentence[a:b], revision[a:c]
            return sentence.replace(old, new, 1) if old and sentence.count(old) == 1 else sentence

        proposed = mapped(f.proposed)
        revised = sentence if not f.edited else mapped(f.revised) or sentence
        spans = tuple(
            replace(s, start=at, end=at + (s.end - s.start))
            for s in f.spans
            if (at := sentence.find(standalone[s.start : s.end])) >= 0
        )
        return replace(f, sentence=sentence, spans=spans, revised=revised, proposed=proposed)

    def _fix(self, sentence: str, evidence: Sequence[str], question: str = "") -> SpanFix:
        wins = [w for e in evidence for w in windows(e)]
        if not sentence.strip() or not wins:
            return SpanFix(sentence, "not_stated", (), sentence, "", "nothing to judge")
        js = self.judge.judge_batch([(sentence, w) for w in wins], question)
        cands = [
            (j, w, s)
            for j, w in zip(js, wins, strict=True)
            if j.scores.contradicted >= self.contradicted_min
            and j.scores.contradicted > j.scores.supported
            for s in j.contradicted_spans()
        ]
        points = self.judge.point_batch(
            [(sentence, (s.start, s.end), w) for _, w, s in cands], question
        )
        found = [
            (j, w, FlaggedSpan(s.start, s.end, s.kind, s.score, p))
            for (j, w, s), p in zip(cands, points, strict=True)
            if p is not None
        ]
        best_sup = max(js, key=lambda j: j.scores.supported)
        if not found:
            verdict = "supported" if best_sup.scores.supported >= self.supported_min else None
            top = max(js, key=lambda j: j.scores.contradicted)
            if verdict is None:
                verdict = (
                    "contradicted"
                    if top.scores.contradicted >= self.contradicted_min and top.spans
                    else "not_stated"
                )
            shown = best_sup if verdict == "supported" else top
            why = {
                "supported": "the evidence supports it",
                "contradicted": "the evidence disagrees, but states no replacement",
                "not_stated": "the evidence does not state it",
            }[verdict]
            win = wins[js.index(shown)]
            return SpanFix(
                sentence,
                verdict,
                shown.spans,
                sentence,
                win,
                why,
                shown.scores.supported,
                shown.scores.contradicted,
            )
        j, win, span = max(found, key=lambda f: f[0].scores.contradicted)
        value = win[span.fix[0] : span.fix[1]]
        spans = tuple(s if (s.start, s.end) != (span.start, span.end) else span for s in j.spans)
        if not spans:
            spans = (span,)
        revised = fitted(sentence, (span.start, span.end), value)
        problem = self.guard(sentence, revised, win) if self.guard else None
        if problem:
            d = Decision("display", f"rejected: {problem}")
        else:
            edited = (span.start, span.end + len(revised) - len(sentence))
            d = self.accept(revised, win, edited, wins, question)
        stated = (
            f"'{sentence[span.start : span.end]}' contradicted (P {j.scores.contradicted:.2f}); "
            f"the evidence states '{value}'"
        )
        return SpanFix(
            sentence,
            "contradicted",
            spans,
            revised if d.accepted else sentence,
            win,
            f"{stated}; {d.reason}",
            j.scores.supported,
            j.scores.contradicted,
            proposed=revised,
            stated=stated,
            decision=d,
        )

    def accept(
        self,
        revised: str,
        window: str,
        edited: tuple[int, int],
        wins: Sequence[str] = (),
        question: str = "",
    ) -> Decision:
        """Whether the judge accepts the revision (``safe``): read against the window that
        flagged the original, it flags nothing contradicted in the words the edit wrote
        (``edited``), and in the same evidence (that window or another of ``wins``) the pair
        head calls it supported, at least ``supported_min`` and above contradicted. Support
        alone too low is ``unsafe`` (the judge is unsure); a flag or a contradiction
        ``display``."""
        others = [w for w in wins if w != window]
        js = self.judge.judge_batch([(revised, w) for w in [window, *others]], question)
        still = [s for s in js[0].contradicted_spans() if s.start < edited[1] and s.end > edited[0]]
        if still:
            words = revised[still[0].start : still[0].end]
            return Decision("display", f"rejected: the judge still flags '{words}'")
        j = max(js, key=lambda x: x.scores.supported - x.scores.contradicted)
        sup, con = j.scores.supported, j.scores.contradicted
        if sup < self.supported_min:
            why = f"rejected: the revision is not supported (P {sup:.2f} < {self.supported_min:g})"
            return Decision("unsafe", why)
        if con >= sup:
            return Decision("display", f"rejected: the revision is contradicted too (P {con:.2f})")
        return Decision("safe", f"verified: P(supported) {sup:.2f}", "span")


def asked(context: str | None) -> str:
    """The question the text answers, where the context is one (else "": read it alone): a
    question, or a prompt to complete (at most 20 words, no closing stop).

    >>> asked("who bought the old london bridge"), asked("Reply briefly.")
    ('who bought the old london bridge', '')
    >>> asked("swan lake and the nutcracker are three famous ballets by")
    'swan lake and the nutcracker are three famous ballets by'
    """
    from editor.text.words import is_question

    if not context or not context.strip():
        return ""
    c = context.strip()
    prompt = len(c.split()) <= 20 and c[-1] not in ".!;:)\"'"
    return c if is_question(c) or prompt else ""


def shared_fixer(
    path: str | None = None, guards: bool = True, device: str = "cpu", quantize: str = "none"
) -> SpanFixer:
    """One fixer (and judge) per model folder and form, shared by the span agreement, editor
    and citation locator (however each passes its arguments)."""
    return _shared_fixer(path, guards, device, quantize)


@functools.cache
def _shared_fixer(path: str | None, guards: bool, device: str, quantize: str) -> SpanFixer:
    from editor.judge.span_guard import edit_guard

    judge = SpanJudge(path, device=device, quantize=quantize)
    return SpanFixer(judge, guard=edit_guard if guards else None)
