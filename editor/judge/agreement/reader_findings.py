"""The findings the reader's signal makes (``editor.judge.agreement.reader``): a sentence that
gives no answer the evidence surely gives, a doubt (the evidence may answer otherwise), and a
finding that names the text's answer and proposes the evidence's."""

from __future__ import annotations

import re
from typing import Any

from editor.claims.slot_values import bare_name
from editor.judge.base import Decision, Finding, Proposal
from editor.reader.base import Answer
from editor.result import Flag
from editor.text.words import trimmed


def unanswered(
    text: str, question: str, best: Answer | None, verdict: Finding, sure: float
) -> Finding | None:
    """The judged sentence, where the text gives no answer the reader can find but the evidence
    surely does and the text never states it: named whole, the evidence's answer as its fix
    (a rewrite that states it is for the proposers to write; ``not_stated``, not proven wrong)."""
    if best is None or best.probability < sure or verdict.span is None:
        return None
    if f" {bare_name(best.text)} " in f" {bare_name(text)} ":
        return None
    a, b = verdict.span
    reason = (
        f"the evidence answers {question!r} with {best.text!r} (P {best.probability:.2f}); "
        "the text states no answer to it"
    )
    return _read(
        "not_stated",
        reason,
        verdict.span,
        verdict,
        Flag(a, b, "not_supported", fix=best.text),
        True,
    )


def doubted(
    question: str, sentence: tuple[int, int], said: Answer, other: Answer, verdict: Finding
) -> Finding:
    """The evidence may answer the question otherwise (``doubt_min``), too unsure to name the
    text's answer wrong: the sentence is not stated by it (unverified, never supported), the
    text's words named and the evidence's answer their suggested fix; nothing is edited."""
    reason = (
        f"the evidence may answer {question!r} with {other.text!r} (P {other.probability:.2f}), "
        f"not as the text does with {said.text!r}"
    )
    flag = Flag(said.start, said.end, "not_supported", fix=other.text)
    return _read("not_stated", reason, sentence, verdict, flag, False)


def finding(
    text: str,
    question: str,
    sentence: tuple[int, int],
    said: Answer,
    best: Answer,
    verdict: Finding,
    sure: bool,
    proves: bool,
    right: float | None = None,
) -> Finding:
    """The reader's finding: the text's answer named, the evidence's proposed in its place;
    applied (``safe``) where ``sure``, and its own proof (``proof`` ``reader``: it stands where
    the verifier only lacks proof) where ``proves``; ``right``: the head's P(the fix is right)."""
    a, b = sentence
    reason = (
        f"the evidence answers {question!r} with {best.text!r} (P {best.probability:.2f}), "
        f"the text with {said.text!r} (P {said.probability:.2f})"
    )
    if right is not None:
        reason += f"; P(the fix is right) {right:.2f}"
    words = trimmed(text, said.start, said.end, best.text)  # the evidence's, none doubled
    other = elsewhere(text, sentence, said, words)
    flags: tuple[Flag, ...] = (Flag(said.start, said.end, "contradicted", fix=words),)
    if other is not None:  # "X won, beating Y" where Y won: the two swapped, suggested only
        (x, y), (i, j) = sorted([(said.start, said.end), other])
        put = {said.start: words, other[0]: said.text}
        revised = text[a:x] + put[x] + text[y:i] + put[i] + text[j:b]
        reason += f"; {words!r} stands elsewhere in the sentence: the two swapped"
        decision = Decision("unsafe", f"reader: {reason}")
        flags += (Flag(other[0], other[1], "contradicted", fix=said.text),)
    else:
        revised = text[a : said.start] + words + text[said.end : b]
        decision = Decision(
            "safe" if sure else "unsafe", f"reader: {reason}", "reader" if proves else None
        )
    proposal = Proposal(revised, reason, decision)
    return _read("contradicted", reason, sentence, verdict, flags, True, proposal)


def elsewhere(
    text: str, sentence: tuple[int, int], said: Answer, words: str
) -> tuple[int, int] | None:
    """Where the name ``words`` (the evidence's answer) already stands in ``text``'s
    ``sentence`` outside the text's answer ``said``: put in ``said``'s place it would stand
    twice ("Federer won, beating Nadal" for "Who won?" answered "Nadal")."""
    if not words[:1].isupper():
        return None
    a, b = sentence
    for m in re.finditer(rf"(?<![\w-]){re.escape(words)}(?![\w-])", text[a:b]):
        start, end = a + m.start(), a + m.end()
        if end <= said.start or start >= said.end:
            return start, end
    return None


def _read(
    kind: Any,
    reason: str,
    span: tuple[int, int],
    verdict: Finding,
    flag: Flag | tuple[Flag, ...],
    opens: bool,
    proposal: Proposal | None = None,
) -> Finding:
    """The reader's finding on ``span`` naming ``flag``'s words, the gate's probabilities
    kept; ``opens``: it asks the proposers for an edit (a doubt does not)."""
    return Finding(
        kind,
        reason,
        span,
        verdict.supported,
        verdict.contradicted,
        rule="reader",
        flags=flag if isinstance(flag, tuple) else (flag,),
        opens=opens,
        proposal=proposal,
    )
