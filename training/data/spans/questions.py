"""Span rows with a question as context: the judge as a reader of answers.

A chatbot's answer to a question is judged against evidence that answers the question. The
answer's value is wrong when the evidence answers with another value, even where the evidence
never names the wrong one ("who bought the old London Bridge" against "McCulloch bought it":
"a British company" is contradicted, and the pointer finds "McCulloch"). Each family asks about
one entity of the sentence (the answer) and writes the chatbot's answer in one of three forms:
the sentence itself, the sentence cut after the answer ("... are three ballets by Lully."),
or the bare answer ("Lully.").

- ``qa-wrong``: contradicted; the answer replaced by another value of its kind (from another
  document, or another one the window states), sometimes with an unsupported "in <year>" too.
- ``qa-right``: supported; the right answer in one of the forms.
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


def _form(ctx: Context, a: int, b: int, value: str) -> tuple[str, int]:
    """The chatbot's answer with ``value`` in the answer slot, and where ``value`` starts."""
    s = ctx.sentence.text
    r = ctx.rng.random()
    if r < 0.2:  # the bare answer
        return value + ".", 0
    if r < 0.45 and b < len(s) - 2:  # cut after the answer
        return s[:a] + value + ".", a
    return s[:a] + value + s[b:], a


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
    claim, at = _form(ctx, a, b, wrong)
    base = ctx.offsets[ctx.at]
    spans = [Span(at, at + len(wrong), "C", base + a, base + b)]
    years = ctx.bank.get("YEAR") or []
    if claim.endswith(".") and years and ctx.rng.random() < 0.25:  # and a detail made up
        year = ctx.rng.choice(years)
        if year not in ctx.evidence and year not in claim:
            tail, at_tail = f"in {year}", len(claim)  # "X." -> "X in 1990."
            spans.append(Span(at_tail, at_tail + len(tail), "U"))
            claim = claim[:-1] + " " + tail + "."
    row = ctx.row("qa-wrong", "contradicted", claim, spans)
    return _asked(row, q)


def qa_right(ctx: Context) -> SpanRow | None:
    found = _answer(ctx)
    if found is None:
        return None
    a, b, _, q = found
    claim, _ = _form(ctx, a, b, ctx.sentence.text[a:b])
    return _asked(ctx.row("qa-right", "supported", claim), q)


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
    claim, at = _form(ctx, a, b, value)
    row = ctx.row("qa-unanswered", "not_supported", claim, [Span(at, at + len(value), "U")], rest)
    return _asked(row, q)


def _asked(row: SpanRow, question: str) -> SpanRow:
    return replace(row, question=question)


QUESTION_FAMILIES = {
    "qa-wrong": qa_wrong,
    "qa-right": qa_right,
    "qa-unanswered": qa_unanswered,
}
