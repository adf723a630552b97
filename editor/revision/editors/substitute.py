"""The ``substitute`` editor (no LLM): candidate minimal edits swap one name, number or date of
the text for a same-type one the evidence states in the same context (a content word around
both in common: a birth year for a birth year, not the year of a prize), or the value the
verifier's slot check names (or swap two same-type names of the text, for
role errors, and two spans that a near-copy of an evidence sentence states in each other's
place); the attribution model scores every candidate against the evidence and the best is
kept if it raises P(supported) - P(contradicted) by at least ``min_gain`` and ends up supported
more than contradicted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from editor.attribution.base import AttributionModel
from editor.attribution.verifier import judge_batch
from editor.claims.slot_check import SlotObservation, slot_context
from editor.claims.slots import Slot, exchanged_spans, family, norm, shape, typed_spans
from editor.policy import gains, swap_helps
from editor.revision.editors.base import OneByOne, Revision
from editor.text.nlp import ner_only
from editor.text.words import content_words, is_question, named_in_question
from editor.types import Evidence, evidence_text
from retrieval.sentences import split, split_spans

_PRONOUN = re.compile(r"\s*(?:it|he|she|they|its|his|her|their)\b", re.I)


def fit_replacement(replacement: str, before: str, after: str) -> str:
    """``replacement`` without the words at its ends that the text around the span already has
    (``'250'`` in "is 250 metres tall" swapped for the evidence's "330 metres" gives "330").

    >>> fit_replacement("330 metres", "It is ", " metres tall.")
    '330'
    >>> fit_replacement("the Eiffel company", "built by the ", "."), fit_replacement("X", "a", "b")
    ('Eiffel company', 'X')
    """
    words = replacement.split()
    following = [norm(w) for w in after.split()]
    for k in range(len(words) - 1, 0, -1):
        if [norm(w) for w in words[-k:]] == following[:k]:
            words = words[:-k]
            break
    preceding = [norm(w) for w in before.split()]
    for k in range(len(words) - 1, 0, -1):
        if preceding[-k:] and [norm(w) for w in words[:k]] == preceding[-k:]:
            words = words[k:]
            break
    return " ".join(words)


class SubstituteEditor(OneByOne):
    """NLI-verified span substitution (see the module doc)."""

    name = "substitute"

    def __init__(
        self,
        attribution: AttributionModel,
        min_gain: float = 0.2,
        max_candidates: int = 48,
        nlp: Any = None,
    ) -> None:
        self.attribution = attribution
        self.min_gain = min_gain
        self.max_candidates = max_candidates
        self._nlp = nlp
        self._off: list[str] | None = None

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            from editor.text.nlp import get_nlp

            self._nlp = get_nlp()
        return self._nlp

    @property
    def _ner_off(self) -> list[str]:
        """Components skipped when only entities are needed (worked out once)."""
        if self._off is None:
            self._off = ner_only(self.nlp)
        return self._off

    def candidates(
        self, text: str, evidence: Sequence[Evidence], context: str | None = None
    ) -> list[tuple[str, str, bool]]:
        """(revised text, description, same surface shape) of every single swap worth scoring;
        "same shape" (a year for a year, a number for a number) breaks near-ties. With a
        question as ``context``, no name the question itself names is swapped out or in."""
        question = context if is_question(context) else None

        def asked(name: str) -> bool:
            return question is not None and named_in_question(name, question)

        off = self._ner_off
        doc = self.nlp(text, disable=off)
        mine = typed_spans(doc)
        theirs: list[tuple[Slot, set[str]]] = []  # each with the words around it
        pairs: list[tuple[str, set[str]]] = []  # "Rome, Italy": a place and the place it is in
        for d in self.nlp.pipe([evidence_text(e) for e in evidence], disable=off):
            spans = typed_spans(d)
            theirs.extend((t, slot_context(d, t)) for t in spans)
            pairs.extend(
                (d.text[a.start : b.end], slot_context(d, a, 6))
                for a, b in _place_pairs(spans, d.text)
            )
        ev_norm = " " + " ".join(norm(evidence_text(e)) for e in evidence) + " "
        text_norm = " " + norm(text) + " "
        # a sentence whose subject is a pronoun is about what the snippet's title names: the
        # title put into another slot doubles the subject ("It was built by Eiffel Tower's ...")
        titles = {norm(e.title) for e in evidence if e.title} if _PRONOUN.match(text) else set()
        out: dict[str, tuple[str, bool]] = {}
        ev_sentences = [sent for e in evidence for sent in split(evidence_text(e))]
        for lo, hi in split_spans(text):
            # a near-copy of an evidence sentence with two spans exchanged: put them back
            # (names NER does not see on the text's side: "the Spanish Empire's ... Mexico")
            for sentence in ev_sentences:
                exchanged = exchanged_spans(text[lo:hi], sentence)
                if exchanged is None:
                    continue
                (a0, a1), (b0, b1) = ((lo + x, lo + y) for x, y in exchanged)
                new = text[:a0] + text[b0:b1] + text[a1:b0] + text[a0:a1] + text[b1:]
                out.setdefault(new, (f"swapped {text[a0:a1]!r} and {text[b0:b1]!r}", True))
        for s in mine:
            if f" {norm(s.text)} " in ev_norm or asked(s.text):
                continue  # the evidence states it too, or the question asks about it
            around = slot_context(doc, s)
            for t, t_around in theirs:
                if family(t.kind) != family(s.kind) or f" {norm(t.text)} " in text_norm:
                    continue
                if not content_words(" ".join(around & t_around)):
                    continue  # the evidence states it of something else ("born" vs "Nobel")
                if asked(t.text):
                    continue
                if (
                    norm(t.text) in titles
                    or norm(re.sub(r"^the\s+", "", t.text, flags=re.I)) in titles
                ):
                    continue
                new = swap_in(text, s.start, s.end, t.text)
                out.setdefault(new, (f"{s.text!r} -> {t.text!r}", shape(s.text) == shape(t.text)))
        for a, b in _place_pairs(mine, text):  # "Athens, Greece" -> "Rome, Italy": both at once
            if asked(a.text) or f" {norm(a.text)} " in ev_norm:
                continue
            for value, value_around in pairs:
                if content_words(" ".join(slot_context(doc, a, 6) & value_around)):
                    new = text[: a.start] + value + text[b.end :]
                    out.setdefault(new, (f"{text[a.start : b.end]!r} -> {value!r}", True))
        for i, a in enumerate(mine):  # role swaps: two same-type names trade places
            for b in mine[i + 1 :]:
                if a.kind != b.kind or a.kind in {"number", "date"} or a.end > b.start:
                    continue
                if asked(a.text) or asked(b.text):
                    continue
                new = text[: a.start] + b.text + text[a.end : b.start] + a.text + text[b.end :]
                out.setdefault(new, (f"swapped {a.text!r} and {b.text!r}", True))
        return [(t, d, same) for t, (d, same) in out.items()][: self.max_candidates]

    def edit(self, text: str, evidence: Sequence[Evidence], context: str | None = None) -> Revision:
        if not evidence or not text.strip():
            return Revision(text, "no evidence to edit against")
        premises = [evidence_text(e) for e in evidence]
        n = len(premises)
        original, slots = judge_batch(self.attribution, [(p, text) for p in premises])
        named = _named_fix(text, slots, context)  # the value the slot check names, put in
        cands = self.candidates(text, evidence, context)
        if named is not None:
            cands = [named, *[c for c in cands if c[0] != named[0]]]
        if not cands:
            return Revision(text, "no name, number or date of the evidence fits the text")
        texts = [text] + [c for c, _, _ in cands]
        scores = original + self.attribution.score_batch(
            [(p, t) for t in texts[1:] for p in premises]
        )

        def margin(i: int) -> tuple[float, float, float]:
            group = scores[i * n : (i + 1) * n]
            best = max(group, key=lambda s: s.supported - s.contradicted)
            return best.supported - best.contradicted, best.supported, best.contradicted

        def rank(i: int) -> float:  # the named value first, then the same surface shape
            return margin(i)[0] + 0.05 * cands[i - 1][2] + (1.0 if i == 1 and named else 0.0)

        base, _, _ = margin(0)
        best_i = max(range(1, len(texts)), key=rank)
        if named and not gains(base, margin(best_i)[0], self.min_gain) and len(texts) > 2:
            best_i = max(range(2, len(texts)), key=rank)  # the named value alone did not help
        gain = margin(best_i)[0]
        if swap_helps(base, gain, self.min_gain):
            return Revision(
                texts[best_i],
                f"{cands[best_i - 1][1]}: support - contradiction {base:.2f} -> {gain:.2f}",
            )
        return Revision(
            text,
            f"no swap helped enough (best {cands[best_i - 1][1]}: {base:.2f} -> {gain:.2f})",
        )


def _place_pairs(spans: list[Slot], text: str) -> list[tuple[Slot, Slot]]:
    """Adjacent place slots written "A, B" (a place and the place it lies in).

    >>> _place_pairs([Slot(3, 9, "Athens", "place"), Slot(11, 17, "Greece", "place")], "in Athens, Greece.")
    [(Slot(start=3, end=9, text='Athens', kind='place'), Slot(start=11, end=17, text='Greece', kind='place'))]
    """
    places = sorted((s for s in spans if s.kind == "place"), key=lambda s: s.start)
    return [
        (a, b) for a, b in zip(places, places[1:], strict=False) if text[a.end : b.start] == ", "
    ]


def swap_in(text: str, start: int, end: int, value: str) -> str:
    """``text`` with ``value`` in place of ``text[start:end]``, fitted to the words around it
    and keeping a possessive ("Thomas Edison's company" -> "Gustave Eiffel's company").

    >>> swap_in("Built by Thomas Edison's company.", 9, 24, "Gustave Eiffel")
    "Built by Gustave Eiffel's company."
    >>> swap_in("He was an Austrian composer.", 10, 18, "German")
    'He was a German composer.'
    >>> swap_in("He was the 12th president.", 7, 15, "16th")
    'He was the 16th president.'
    """
    old = text[start:end]
    replacement = fit_replacement(value, text[:start], text[end:])
    if re.match(r"(?i)the\s+\d+(?:st|nd|rd|th)$", old) and re.match(r"\d+(?:st|nd|rd|th)$", value):
        replacement = f"{old.split()[0]} {replacement}"  # "the 12th" -> "the 16th", not "16th"
    if old.endswith(("'s", "’s")) and not value.endswith(("'s", "’s")):
        replacement += old[-2:]
    return _article_for(text[:start], replacement) + replacement + text[end:]


def _article_for(before: str, word: str) -> str:
    """``before`` with a final "a"/"an" agreeing with ``word``'s first letter (a heuristic:
    vowels take "an")."""
    m = re.search(r"\b(a|an|A|An)(\s+)$", before)
    if not m or not word[:1].isalpha():
        return before
    article = "an" if word[0].lower() in "aeiou" else "a"
    if m.group(1)[0].isupper():
        article = article.capitalize()
    return before[: m.start(1)] + article + m.group(2)


def _named_fix(
    text: str, slots: Sequence[SlotObservation | None], context: str | None = None
) -> tuple[str, str, bool] | None:
    """The candidate that puts the evidence's value where the slot check names the claim's
    ("'36 years ago' vs '35 years ago'"), as ``candidates`` lists them; None without one, or
    where a question as ``context`` names either value."""
    question = context if is_question(context) else None
    for slot in slots:
        if slot is None or not slot.names_a_difference or not slot.evidence_span:
            continue
        start, end = slot.claim_span  # type: ignore[misc]
        if question and (
            named_in_question(text[start:end], question)
            or named_in_question(slot.evidence_span, question)
        ):
            continue
        new = swap_in(text, start, end, slot.evidence_span)
        if new != text:
            return new, f"{text[start:end]!r} -> {slot.evidence_span!r} (named)", True
    return None
