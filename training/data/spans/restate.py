"""Span rows whose claim restates the evidence sentence the way a user's text (or purr's
decontextualised sentence) says it, rather than copying it: the families the judge needs so
that a restatement is read for its meaning, not for the words it shares.

The restatements, each a set of edits of the sentence:
- a pronoun subject ("It", "He", "She") resolved to the name an earlier sentence of the window
  opens with (what decontextualisation writes: "It is a symbol of Cambodia." judged as "Angkor
  Wat is a symbol of Cambodia.");
- a name as another sentence of the window writes it in full (the first and last word, or all
  of it: "Edison" -> "Thomas Edison"), or a full name cut to its last word;
- a copular sentence's relative clause lifted onto its subject ("X is an American politician
  who served as ..." -> "X served as ...").

Families:
- ``sup-restated``: supported; the sentence restated.
- ``con-restated``: contradicted; the sentence restated with a value swapped (by one of the
  ``con-*`` families, the fix still pointing at the evidence's value).
Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from editor.verdicts import CONTRADICTED, SUPPORTED
from training.data.spans.context import Context
from training.data.spans.rows import Span, SpanRow

NAME_LABELS = frozenset("PERSON ORG GPE LOC FAC WORK_OF_ART EVENT PRODUCT".split())
_PRONOUN = re.compile(r"^(It|He|She) (?=[a-z])")
_LIFT = re.compile(
    r"^(?P<subj>[^,;()]{2,80}?) (?:is|was|are|were) (?:an?|the) [^,;()]{1,80}? (?:who|which|that) "
    r"(?P<rest>[a-z].*)$"
)

Edit = tuple[int, int, str]


def apply_edits(text: str, edits: list[Edit]) -> str:
    """``text`` with each ``(start, end, new)`` put in place (edits must not overlap).

    >>> apply_edits("It was built in 1887.", [(0, 2, "The tower"), (16, 20, "1889")])
    'The tower was built in 1889.'
    """
    out, at = [], 0
    for a, b, new in sorted(edits):
        out += [text[at:a], new]
        at = b
    return "".join(out) + text[at:]


def moved(pos: int, edits: list[Edit]) -> int:
    """Where character ``pos`` (outside every edit) of the text lies once the edits are made."""
    return pos + sum(len(new) - (b - a) for a, b, new in edits if b <= pos)


def _pronoun(ctx: Context) -> list[Edit]:
    s = ctx.sentence.text
    m = _PRONOUN.match(s)
    if m is None:
        return []
    for w in reversed(ctx.window[: ctx.at]):
        lead = [e for e in w.ents if e[0] == 0 and e[2] in NAME_LABELS]
        if lead and (lead[0][2] == "PERSON") == (m.group(1) != "It"):
            return [(0, m.end(1), w.text[: lead[0][1]])]
    return []


def _names(ctx: Context) -> list[Edit]:
    s = ctx.sentence
    others = [
        w.text[a:b]
        for k, w in enumerate(ctx.window)
        if k != ctx.at
        for a, b, lab in w.ents
        if lab == "PERSON" and len(w.text[a:b].split()) >= 2
    ]
    out: list[Edit] = []
    for a, b, lab in s.ents:
        if lab != "PERSON":
            continue
        name = s.text[a:b].split()
        if len(name) == 1:
            full = [o for o in others if o.split()[-1] == name[0]]
            if full:
                parts = full[0].split()
                new = ctx.rng.choice([f"{parts[0]} {parts[-1]}", full[0]])
                out.append((a, b, new))
        elif len(name) >= 2 and _called_by(ctx.evidence, s.text[a:b], name[-1]):
            out.append((a, b, name[-1]))
    return out[:1]


def _called_by(evidence: str, full: str, last: str) -> bool:
    """Whether the evidence calls ``full`` by ``last`` alone somewhere ("Edison registered"
    beside "Thomas Alva Edison").

    >>> _called_by("Thomas Alva Edison was born. Edison died.", "Thomas Alva Edison", "Edison")
    True
    >>> _called_by("King George III ruled.", "King George III", "III")
    False
    """
    if not last.isalpha() or not last[:1].isupper():
        return False
    alone = len(re.findall(rf"(?<![\w-]){re.escape(last)}(?![\w-])", evidence))
    return alone > evidence.count(full)


def _lift(ctx: Context) -> list[Edit]:
    s = ctx.sentence
    m = _LIFT.match(s.text)
    if m is None or not any(a == 0 and b == m.end("subj") for a, b, _ in s.ents):
        return []
    return [(m.end("subj"), m.start("rest"), " ")]


def restatement(ctx: Context) -> list[Edit]:
    """One restatement of the sentence (its edits), chosen at random among those it has."""
    options = [e for e in (_pronoun(ctx), _names(ctx), _lift(ctx)) if e]
    return ctx.rng.choice(options) if options else []


def sup_restated(ctx: Context) -> SpanRow | None:
    edits = restatement(ctx)
    if not edits:
        return None
    claim = apply_edits(ctx.sentence.text, edits)
    return ctx.row("sup-restated", SUPPORTED, claim) if claim != ctx.sentence.text else None


def con_restated(ctx: Context, changes: Sequence[Callable[[Context], SpanRow | None]]):
    """A restated sentence with a value swapped by one of ``changes`` (the ``con-*``
    families), or None."""
    edits = restatement(ctx)
    if not edits:
        return None
    s = ctx.sentence.text
    changed = ctx.rng.choice(changes)(ctx)
    if changed is None or len(changed.spans) != 1:
        return None
    (span,) = changed.spans
    a = span.start
    b = len(s) - (len(changed.claim) - span.end)
    new = changed.claim[span.start : span.end]
    if any(a < eb and ea < b for ea, eb, _ in edits):  # the value lies in a restated part
        return None
    all_edits = [*edits, (a, b, new)]
    claim = apply_edits(s, all_edits)
    start = moved(a, all_edits)
    out = Span(start, start + len(new), "C", span.fix_start, span.fix_end)
    return ctx.row("con-restated", CONTRADICTED, claim, [out])
