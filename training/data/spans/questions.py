"""Span rows with a question as context: the judge as a reader of answers.

A chatbot's answer to a question is judged against evidence that answers the question. The
answer's value is wrong when the evidence answers with another value, even where the evidence
never names the wrong one ("who bought the old London Bridge" against "McCulloch bought it":
"a British company" is contradicted, and the pointer finds "McCulloch"). Each family asks about
one entity of the sentence (the answer) and writes the chatbot's answer in one of three forms:
the sentence itself, the sentence cut after the answer ("... are three ballets by Lully."),
or the bare answer ("Lully.").

- ``qa-wrong``: contradicted; the answer replaced by another value of its kind (from another
  document, or another one the window states); in half of them the answer makes things up
  around it too (another entity swapped, an adjective put in, "in <year>" added: tagged U).
- ``qa-right``: supported; the right answer in one of the forms (not supported, tagged U,
  where words are made up around it).
- ``qa-unanswered``: not supported; the sentence that answers is taken out of the evidence, so
  the evidence cannot say whether the answer (right or wrong) is.

Questions are written from the sentence by its entity (no parser): the words before the answer
("swan lake and the nutcracker are ballets by"), or a wh-word and the sentence without it ("who
bought the london bridge in 1968"), lower-cased as search queries are, or as a sentence with a
question mark. Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import replace

from editor.verdicts import CONTRADICTED, NOT_SUPPORTED, SUPPORTED
from training.data.spans.context import Context
from training.data.spans.rows import Span, SpanRow

ASKED = {
    "PERSON": "who",
    "ORG": "what",
    "GPE": "where",
    "LOC": "where",
    "FAC": "where",
    "NORP": "what nationality",
    "EVENT": "what",
    "WORK_OF_ART": "what",
    "PRODUCT": "what",
    "LANGUAGE": "what language",
    "DATE": "when",
    "CARDINAL": "how many",
    "QUANTITY": "how much",
    "MONEY": "how much",
    "PERCENT": "what percentage",
}
_PREP = re.compile(r"(?:\b(?:in|at|on|near|from|to|by|of|since|during)\s+(?:the\s+)?)$", re.I)
_PUNCT = re.compile(r"[^\w\s'-]")
_MAX_WORDS = 12


def _query_case(text: str) -> str:
    return " ".join(_PUNCT.sub(" ", text).lower().split()[:_MAX_WORDS])


def question_of(sentence: str, a: int, b: int, label: str, style: float) -> str | None:
    """A question whose answer is ``sentence[a:b]`` (an entity of ``label``), or None.

    >>> question_of("Robert McCulloch bought the London Bridge in 1968.", 0, 16, "PERSON", 0.5)
    'who bought the london bridge in 1968'
    >>> question_of("Swan Lake is a ballet by Tchaikovsky.", 25, 36, "PERSON", 0.1)
    'swan lake is a ballet by'
    >>> question_of("The first session was held in Guwahati in 1905.", 30, 38, "GPE", 0.9)
    'Where the first session was held in 1905?'
    """
    wh = ASKED.get(label)
    if wh is None:
        return None
    before, after = sentence[:a], sentence[b:].rstrip(" .")
    if style < 0.3 and len(before.split()) >= 3:  # the words before the answer
        return _query_case(before)
    prep = _PREP.search(before)
    if label in ("DATE", "GPE", "LOC", "FAC") and prep is not None:
        before = before[: prep.start()]  # "held in 1905" -> "when ... held"
    elif wh in ("where", "when"):
        wh = "what"
    rest = (before + after).strip(" ,;")
    if len(rest.split()) < 3:
        return None
    q = _query_case(f"{wh} {rest}")
    if style > 0.8:
        return q[:1].upper() + q[1:] + "?"
    return q


def _answer(ctx: Context):
    """(start, end, label, question) of an entity of the sentence to ask about, or None."""
    s = ctx.sentence
    ents = [(a, b, lab) for a, b, lab in s.ents if lab in ASKED and b - a > 1]
    if not ents:
        return None
    a, b, lab = ctx.rng.choice(ents)
    q = question_of(s.text, a, b, lab, ctx.rng.random())
    return None if q is None else (a, b, lab, q)


def _noise(ctx: Context, a: int, b: int) -> list[tuple[int, int, str]]:
    """Edits ``(start, end, new)`` of the sentence outside ``[a, b)`` that the evidence does
    not support, as a chatbot's answer adds them: another entity swapped for one from another
    document, an adjective put before a noun."""
    s, ev = ctx.sentence, ctx.evidence.lower()
    edits = []
    for x, y, lab in s.ents:
        if (y <= a or x >= b) and ctx.bank.get(lab) and ctx.rng.random() < 0.5:
            v = ctx.rng.choice(ctx.bank[lab])
            if v.lower() not in ev:
                edits.append((x, y, v))
    for n in s.nouns:
        if (n < a or n >= b) and n > 0 and ctx.bank.get("ADJ") and ctx.rng.random() < 0.3:
            adj = ctx.rng.choice(ctx.bank["ADJ"]).lower()
            if adj not in ev:
                edits.append((n, n, adj + " "))
    edits.sort()
    out, last = [], -1
    for e in edits:  # no two edits overlap
        if e[0] > last or (e[0] == e[1] and e[0] >= last):
            out.append(e)
            last = e[1]
    return out[:3]


def compose(sentence: str, edits, cut: int | None = None):
    """The sentence with ``edits`` ``(start, end, new, tag, fix)`` made (sorted, apart), cut
    after character ``cut`` of the original when given, and the spans of what they wrote.

    >>> compose("Bob met Ann in Rome.", [(0, 3, "Tom", "C", (1, 2)), (15, 19, "Oslo", "U", None)])
    ('Tom met Ann in Oslo.', [Span(start=0, end=3, tag='C', fix_start=1, fix_end=2), \
Span(start=15, end=19, tag='U', fix_start=-1, fix_end=-1)])
    """
    parts, spans, pos, at = [], [], 0, 0
    for x, y, new, tag, fix in edits:
        if cut is not None and x >= cut:
            break
        parts.append(sentence[pos:x])
        at += x - pos
        word = new.rstrip()
        spans.append(Span(at, at + len(word), tag, *(fix or (-1, -1))))
        parts.append(new)
        at += len(new)
        pos = y
    if cut is not None:
        parts.append(sentence[pos:cut] + ".")
    else:
        parts.append(sentence[pos:])
    return "".join(parts), spans


def _form(ctx: Context, a: int, b: int, value: str, tag: str = "C", fix=None, noisy=False):
    """The chatbot's answer with ``value`` in the answer slot (tagged ``tag`` when it is not
    the right value), and with ``noisy`` unsupported words elsewhere too: the claim and its
    spans. Forms: the bare answer, the sentence cut after it, the whole sentence."""
    s = ctx.sentence.text
    r = ctx.rng.random()
    if r < 0.2:  # the bare answer
        return value + ".", ([Span(0, len(value), tag, *(fix or (-1, -1)))] if tag else [])
    noise = [(x, y, v, "U", None) for x, y, v in _noise(ctx, a, b)] if noisy else []
    edits = sorted([*noise, (a, b, value, tag, fix)], key=lambda e: e[0])
    claim, spans = compose(s, edits, b if r < 0.45 and b < len(s) - 2 else None)
    return claim, [sp for sp in spans if sp.tag]


def _wrong_value(ctx: Context, a: int, b: int, lab: str) -> str | None:
    s = ctx.sentence.text
    right = s[a:b].lower()
    same = [
        w.text[x:y]
        for w in ctx.window
        for x, y, wl in w.ents
        if wl == lab and w.text[x:y].lower() not in right and right not in w.text[x:y].lower()
    ]
    same = [v for v in same if v.lower() not in s.lower()]
    if same and ctx.rng.random() < 0.4:
        return ctx.rng.choice(same)
    bank = ctx.bank.get(lab) or []
    ev = ctx.evidence.lower()
    for _ in range(5):
        if not bank:
            return None
        v = ctx.rng.choice(bank)
        if v.lower() not in ev and right not in v.lower() and v.lower() not in right:
            return v
    return None


def qa_wrong(ctx: Context) -> SpanRow | None:
    found = _answer(ctx)
    if found is None:
        return None
    a, b, lab, q = found
    wrong = _wrong_value(ctx, a, b, lab)
    if wrong is None:
        return None
    base = ctx.offsets[ctx.at]
    noisy = ctx.rng.random() < 0.5
    claim, spans = _form(ctx, a, b, wrong, "C", (base + a, base + b), noisy)
    years = ctx.bank.get("YEAR") or []
    if claim.endswith(".") and years and ctx.rng.random() < 0.25:  # and a detail made up
        year = ctx.rng.choice(years)
        if year not in ctx.evidence and year not in claim:
            tail, at_tail = f"in {year}", len(claim)  # "X." -> "X in 1990."
            spans.append(Span(at_tail, at_tail + len(tail), "U"))
            claim = claim[:-1] + " " + tail + "."
    row = ctx.row("qa-wrong", CONTRADICTED, claim, spans)
    return _asked(row, q)


def qa_right(ctx: Context) -> SpanRow | None:
    found = _answer(ctx)
    if found is None:
        return None
    a, b, _, q = found
    claim, spans = _form(ctx, a, b, ctx.sentence.text[a:b], "", None, ctx.rng.random() < 0.3)
    label = NOT_SUPPORTED if spans else SUPPORTED  # the right answer, words made up around
    return _asked(ctx.row("qa-right", label, claim, spans), q)


def qa_unanswered(ctx: Context) -> SpanRow | None:
    if len(ctx.window) < 2:
        return None
    found = _answer(ctx)
    if found is None:
        return None
    a, b, lab, q = found
    rest = " ".join(w.text for k, w in enumerate(ctx.window) if k != ctx.at)
    value = ctx.sentence.text[a:b]
    if ctx.rng.random() < 0.5:
        value = _wrong_value(ctx, a, b, lab) or value
    if value.lower() in rest.lower():
        return None
    claim, spans = _form(ctx, a, b, value, "U", None, ctx.rng.random() < 0.3)
    row = ctx.row("qa-unanswered", NOT_SUPPORTED, claim, spans, rest)
    return _asked(row, q)


def _asked(row: SpanRow, question: str) -> SpanRow:
    return replace(row, question=question)


QUESTION_FAMILIES = {
    "qa-wrong": qa_wrong,
    "qa-right": qa_right,
    "qa-unanswered": qa_unanswered,
}
