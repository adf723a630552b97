"""The families of span rows, made from one parsed sentence inside its evidence window.

A ``Context`` is a claim sentence, the window of its document's sentences that holds it (the
evidence) and banks of values from other documents. Each family returns one ``SpanRow`` or
None when the sentence offers nothing for it. Standard library only.

Families (label, what the claim is):
- ``sup-copy``: supported; a sentence of the window as it stands.
- ``sup-reword``: supported; the sentence reworded by its parse (fronted, passive, inverted),
  a parenthesis or a modifier dropped, or a name replaced by the alias the evidence gives.
- ``con-same``: contradicted; a value swapped for another value of the same kind that the same
  evidence states (another date, person, place or number of the window).
- ``con-other``: contradicted; a value swapped for one of the same kind from another document.
- ``con-closed``: contradicted; a word swapped within a closed class or for its antonym.
- ``con-number``: contradicted; a number changed, its unit kept.
- ``con-negation``: contradicted; the sentence negated (no evidence words state the fix).
- ``nei-modifier``: not supported; an adjective from another document put before a noun.
- ``nei-clause``: not supported; "in <place or year>" from another document added.
- ``nei-specific``: not supported, never contradicted; the evidence names only the country
  (or only the year) where the claim names the city (or the month).
- ``nei-dropped``: not supported; the claim's own sentence taken out of the evidence.
- ``multi``: two sentences of the window fused into one claim, one of them changed
  (contradicted) or neither (supported).
- ``qa-wrong``, ``qa-right``, ``qa-unanswered``: with a question as context
  (``training.data.spans.questions``).
- ``sup-restated``, ``con-restated``: the sentence restated as a user's text says it
  (``training.data.spans.restate``).
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import replace

from editor.verdicts import CONTRADICTED, NOT_SUPPORTED, SUPPORTED
from training.data.spans import classes
from training.data.spans.context import _WORD, STOP, Context, Sentence, make_window, words
from training.data.spans.questions import QUESTION_FAMILIES
from training.data.spans.restate import con_restated, sup_restated
from training.data.spans.rows import Span, SpanRow

__all__ = ["FAMILIES", "Context", "Sentence", "make_window"]

SWAP_LABELS = frozenset("PERSON ORG GPE LOC NORP EVENT WORK_OF_ART FAC LANGUAGE PRODUCT".split())
NUMBER_LABELS = frozenset("DATE CARDINAL QUANTITY MONEY PERCENT ORDINAL TIME".split())
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_AUX = re.compile(r"\b(is|was|are|were|has|have|had|can|will|could|would)\b(?= [a-z])")
_PAREN = re.compile(r"\s*\([^()]{1,80}\)")
_ALIAS = re.compile(
    r"^(?P<name>[A-Z][^,]{1,60}), (?:also |commonly |better |more commonly )?(?:known|called) "
    r"as (?:the )?(?P<alias>[A-Z][\w .'-]{1,40}?),"
)


def _swap(ctx: Context, family: str, start: int, end: int, new: str, fix: tuple[int, int]):
    s = ctx.sentence.text
    claim = s[:start] + new + s[end:]
    if claim == s:
        return None
    span = Span(start, start + len(new), "C", *fix)
    return ctx.row(family, CONTRADICTED, claim, [span])


def _in_evidence(ctx: Context, start: int, end: int) -> tuple[int, int]:
    base = ctx.offsets[ctx.at]
    return base + start, base + end


def sup_copy(ctx: Context) -> SpanRow | None:
    return ctx.row("sup-copy", SUPPORTED, ctx.sentence.text)


def sup_reword(ctx: Context) -> SpanRow | None:
    s = ctx.sentence
    options = []
    if s.para:
        options.append(s.para)
    if (m := _ALIAS.match(s.text)) is not None:
        options.append(m.group("alias") + s.text[m.end() :])
    if (m := _PAREN.search(s.text)) is not None:
        options.append(s.text[: m.start()] + s.text[m.end() :])
    if s.adjs:
        a, b = ctx.rng.choice(s.adjs)
        dropped = s.text[:a] + s.text[b:].lstrip()
        if not classes.matches(s.text[a:b]):  # "largest" is no mere modifier
            options.append(dropped)
    options = [o for o in options if o and o != s.text]
    return ctx.row("sup-reword", SUPPORTED, ctx.rng.choice(options)) if options else None


def _same_kind(ctx: Context, label: str, value: str) -> list[str]:
    """Other values of ``label`` the window states, none inside or around ``value``."""
    out = []
    low = value.lower()
    for w in ctx.window:
        for a, b, lab in w.ents:
            v = w.text[a:b]
            if lab == label and v.lower() not in low and low not in v.lower():
                out.append(v)
    return sorted(set(out))


def con_same(ctx: Context) -> SpanRow | None:
    s = ctx.sentence
    cands = []
    for a, b, lab in s.ents:
        if lab in SWAP_LABELS or lab in NUMBER_LABELS:
            others = [
                v for v in _same_kind(ctx, lab, s.text[a:b]) if v.lower() not in s.text.lower()
            ]
            cands += [(a, b, v) for v in others]
    if not cands:
        return None
    a, b, v = ctx.rng.choice(cands)
    return _swap(ctx, "con-same", a, b, v, _in_evidence(ctx, a, b))


def con_other(ctx: Context) -> SpanRow | None:
    s = ctx.sentence
    ents = [(a, b, lab) for a, b, lab in s.ents if lab in SWAP_LABELS and ctx.bank.get(lab)]
    if not ents:
        return None
    a, b, lab = ctx.rng.choice(ents)
    ev = ctx.evidence.lower()
    for _ in range(5):
        v = ctx.rng.choice(ctx.bank[lab])
        if v.lower() not in ev and s.text[a:b].lower() not in v.lower():
            return _swap(ctx, "con-other", a, b, v, _in_evidence(ctx, a, b))
    return None


def con_closed(ctx: Context) -> SpanRow | None:
    s = ctx.sentence
    found = []
    for a, b, name in classes.matches(s.text):
        word, pool = s.text[a:b], classes.members(name)
        if pool[0][:1].isupper() and not word[:1].isupper():  # "may" is no month
            continue
        others = [m for m in pool if m.lower() != word.lower()]
        found.append((a, b, word, others))
    if not found:
        return None
    a, b, word, others = ctx.rng.choice(found)
    ev = ctx.evidence.lower()
    stated = [m for m in others if re.search(rf"(?<![\w-]){re.escape(m.lower())}(?![\w-])", ev)]
    new = ctx.rng.choice(stated or others)
    return _swap(ctx, "con-closed", a, b, classes.in_case_of(new, word), _in_evidence(ctx, a, b))


def perturb(raw: str, rng: random.Random) -> str | None:
    """Another number for ``raw`` (years by 1-30, others scaled), or None."""
    digits = raw.replace(",", "")
    try:
        value = float(digits)
    except ValueError:
        return None
    if "." not in digits and 1000 <= value <= 2100:
        new = str(int(value) + rng.choice([-1, 1]) * rng.randint(1, 30))
    elif "." in digits:
        decimals = len(digits.split(".")[1])
        new = f"{value * rng.choice([0.5, 0.7, 1.3, 1.5, 2.0]):.{decimals}f}"
    else:
        n = int(value)
        new = str(max(0, n + rng.choice([-1, 1]) * max(1, round(n * rng.uniform(0.2, 0.8)))))
        if new == str(n):
            new = str(n + rng.randint(2, 9))
        if "," in raw and len(new) > 3:
            new = f"{int(new):,}"
    return None if new == raw else new


def con_number(ctx: Context) -> SpanRow | None:
    s = ctx.sentence
    nums = [
        (a + m.start(), a + m.end(), m.group())
        for a, b, lab in s.ents
        if lab in NUMBER_LABELS
        for m in _NUMBER.finditer(s.text[a:b])
    ]
    if not nums:
        return None
    a, b, raw = ctx.rng.choice(nums)
    new = perturb(raw, ctx.rng)
    if new is None or new in ctx.evidence:
        return None
    return _swap(ctx, "con-number", a, b, new, _in_evidence(ctx, a, b))


def con_negation(ctx: Context) -> SpanRow | None:
    s = ctx.sentence.text
    m = _AUX.search(s)
    if m is None or re.search(r"\b(not|never|no)\b|n't", s):
        return None
    claim = s[: m.end()] + " not" + s[m.end() :]
    return ctx.row("con-negation", CONTRADICTED, claim, [Span(m.end() + 1, m.end() + 4, "C")])


def nei_modifier(ctx: Context) -> SpanRow | None:
    s = ctx.sentence.text
    nouns = [n for n in ctx.sentence.nouns if n > 0 and s[n].islower()]
    if not nouns or not ctx.bank.get("ADJ"):
        return None
    n = ctx.rng.choice(nouns)
    adj = ctx.rng.choice(ctx.bank["ADJ"]).lower()
    if adj in words(ctx.evidence) or classes.matches(adj):
        return None
    claim = s[:n] + adj + " " + s[n:]
    return ctx.row("nei-modifier", NOT_SUPPORTED, claim, [Span(n, n + len(adj), "U")])


def nei_clause(ctx: Context) -> SpanRow | None:
    s = ctx.sentence.text
    if not s.endswith(".") or not ctx.bank.get("GPE") or not ctx.bank.get("YEAR"):
        return None
    value = ctx.rng.choice(ctx.bank["GPE" if ctx.rng.random() < 0.5 else "YEAR"])
    if value.lower() in ctx.evidence.lower():
        return None
    phrase = f"in {value}"
    claim = s[:-1] + " " + phrase + "."
    start = len(s)
    return ctx.row("nei-clause", NOT_SUPPORTED, claim, [Span(start, start + len(phrase), "U")])


_YEAR = re.compile(r"\b(in|In) (1[0-9]{3}|20[0-9]{2})\b")


def nei_specific(ctx: Context) -> SpanRow | None:
    s = ctx.sentence
    base = ctx.offsets[ctx.at]
    for a, b, lab in s.ents:
        if lab != "GPE":
            continue
        parents = ctx.parents.get(s.text[a:b].lower())
        if not parents:
            continue
        parent = " ".join(
            w.capitalize() if w not in ("of", "and") else w for w in parents[0].split()
        )
        if parent.lower() in ctx.evidence.lower():
            continue
        ev = ctx.evidence[: base + a] + parent + ctx.evidence[base + b :]
        return ctx.row("nei-specific", NOT_SUPPORTED, s.text, [Span(a, b, "U")], evidence=ev)
    if (m := _YEAR.search(s.text)) is not None:  # "in 1990" -> "in March 1990"
        month = ctx.rng.choice(classes.members("month"))
        claim = s.text[: m.start(2)] + month + " " + s.text[m.start(2) :]
        span = Span(m.start(2), m.start(2) + len(month), "U")
        return ctx.row("nei-specific", NOT_SUPPORTED, claim, [span])
    return None


def unsupported_runs(claim: str, evidence: str) -> list[tuple[int, int]]:
    """Character runs of the claim's content words the evidence never uses (stop words
    between two such words join them).

    >>> unsupported_runs("Rome fell in 476 to the Goths.", "Rome is in Italy.")
    [(5, 29)]
    """
    have = words(evidence)
    runs: list[list[int]] = []
    last_bad = False
    for m in _WORD.finditer(claim):
        w = m.group().lower()
        if w in STOP:
            continue
        bad = w not in have
        if bad and last_bad and not re.search(r"[,.;:()]", claim[runs[-1][1] : m.start()]):
            runs[-1][1] = m.end()
        elif bad:
            runs.append([m.start(), m.end()])
        last_bad = bad
    return [(a, b) for a, b in runs]


def nei_dropped(ctx: Context) -> SpanRow | None:
    if len(ctx.window) < 2:
        return None
    rest = " ".join(w.text for k, w in enumerate(ctx.window) if k != ctx.at)
    runs = unsupported_runs(ctx.sentence.text, rest)
    if not runs:  # the rest may state it all
        return None
    spans = [Span(a, b, "U") for a, b in runs]
    return ctx.row("nei-dropped", NOT_SUPPORTED, ctx.sentence.text, spans, evidence=rest)


CHANGES = (con_same, con_other, con_closed, con_number)


def multi(ctx: Context) -> SpanRow | None:
    if len(ctx.window) < 2:
        return None
    other = ctx.rng.choice([k for k in range(len(ctx.window)) if k != ctx.at])
    first, second = sorted((ctx.at, other))
    a, b = ctx.window[first].text, ctx.window[second].text
    joint = ctx.rng.random() < 0.5 and a.endswith(".") and b[:1].isupper()
    glue = "; " if joint else " "
    left = a[:-1] if joint else a
    changed = None
    if ctx.rng.random() < 0.7:
        fam = ctx.rng.choice(CHANGES)
        changed = fam(ctx)
    if changed is None:
        return ctx.row("multi", SUPPORTED, left + glue + b)
    # the changed sentence is ctx.at: rebuild the claim with it in place
    new = changed.claim
    if ctx.at == first:
        new_left = new[:-1] if joint and new.endswith(".") else new
        if joint and not new.endswith("."):
            return None
        claim, shift = new_left + glue + b, 0
    else:
        claim, shift = left + glue + new, len(left) + len(glue)
    spans = [replace(sp, start=sp.start + shift, end=sp.end + shift) for sp in changed.spans]
    return ctx.row("multi", CONTRADICTED, claim, spans)


FAMILIES = {
    "sup-copy": sup_copy,
    "sup-reword": sup_reword,
    "con-same": con_same,
    "con-other": con_other,
    "con-closed": con_closed,
    "con-number": con_number,
    "con-negation": con_negation,
    "nei-modifier": nei_modifier,
    "nei-clause": nei_clause,
    "nei-specific": nei_specific,
    "nei-dropped": nei_dropped,
    "multi": multi,
    **QUESTION_FAMILIES,
    "sup-restated": sup_restated,
    "con-restated": functools.partial(con_restated, changes=CHANGES),
}
