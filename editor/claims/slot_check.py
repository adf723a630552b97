"""Slot-level observations: does the evidence state a different date, number, name or role,
or the opposite polarity, in the very context the claim states its own? The check observes; the
judge's policy decides what an observation means (``editor.policy.refutes``).

The claim is aligned with the evidence sentence that shares most of its content words. Each
slot of the claim (``editor.claims.slots``) is then looked up there:

- found with the same value (a date range that overlaps, a number within rounding, or within
  10% when the claim hedges it with "about", "over", ...; a name the evidence mentions) ->
  ``matches``;
- a slot of the same kind stands in the same context (a neighbouring word in common) with a
  different value, and the claim's value appears nowhere in the evidence -> ``differs``, with
  both spans and the reason ("'1895' vs '1887 to 1889'");
- otherwise nothing is observed for that slot.

Two names that trade places in the evidence sentence (the rest of a near-copy word for word,
or the same words between them; neither sentence passive) are a role swap; a claim that is
the evidence's sentence with a "not" added, or a negated claim against an unnegated sentence
(or the reverse) with the same content, is a polarity flip. Both are observed as ``differs``.
A claim with no differing slot and at least one confirmed slot ``matches``; anything else is
``unsaid``: the check only speaks where the evidence does.

The value comparisons are in ``editor.claims.slot_values``, the role swaps and polarity
flips in ``editor.claims.flips``; this module aligns, parses and observes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from editor import policy
from editor.claims.flips import negation_only, swapped_names
from editor.claims.granularity import coarser_or_same, named_otherwise, same_level
from editor.claims.slot_values import (
    COMPARED_KINDS,
    NAME_KINDS,
    comparable,
    is_year_range,
    named_in,
    nested_names,
    outermost,
    states_same,
)
from editor.claims.slots import Slot, negated, norm, typed_spans
from editor.text.words import content_words

SlotFound = Literal["differs", "matches", "unsaid"]


@dataclass(frozen=True)
class SlotObservation:
    """The slot check of one claim: what it found (``found``), why, and the two spans behind a
    difference
    (``claim_span`` as character offsets into the claim; ``evidence_span`` the evidence's words).
    ``verbatim``: the evidence contains the whole claim word for word. ``less_specific``: the
    evidence states the slot only more coarsely (a country for the claim's region, a title for
    its name), which verifies nothing and contradicts nothing: never enough to edit."""

    found: SlotFound
    reason: str
    claim_span: tuple[int, int] | None = None
    evidence_span: str | None = None
    evidence_sentence: str | None = None
    verbatim: bool = False
    less_specific: bool = False

    @property
    def names_a_difference(self) -> bool:
        """A difference that names the claim's span the evidence states otherwise (a date,
        number, name or role, or a "not" the evidence's same sentence lacks; other polarity
        flips name none): enough on its own to open the agreement gate and mark the report
        sentence."""
        return self.found == "differs" and self.claim_span is not None


@dataclass(frozen=True)
class _Aligned:
    """A claim's aligned evidence sentence, its share of the claim's words, and all the
    evidence normalised (where a slot's value is looked up)."""

    aligned: str
    overlap: float
    everything: str


def slot_context(doc: Any, slot: Slot, width: int = 3) -> set[str]:
    """Lower-cased words within ``width`` tokens of the slot, the slot's own words excluded."""
    tokens = [t for t in doc if not t.is_punct]
    inside = [i for i, t in enumerate(tokens) if slot.start <= t.idx < slot.end]
    if not inside:
        return set()
    lo, hi = max(0, inside[0] - width), min(len(tokens), inside[-1] + width + 1)
    return {tokens[i].lower_ for i in range(lo, hi) if i not in inside}


class SlotChecker:
    """Checks claims against evidence slot by slot (see the module doc); the aligned evidence
    sentence is compared where the judge's policy finds it shares enough of the claim's context
    (``editor.policy.aligned``)."""

    def __init__(self, nlp: Any = None, cache_size: int = 4096) -> None:
        self._nlp = nlp
        self.cache_size = cache_size
        self._docs: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            from editor.text.nlp import get_nlp

            self._nlp = get_nlp()
        return self._nlp

    def warm_up(self) -> None:
        """Load the spaCy pipeline now. dateparser's tables and pint's registry load when a
        claim first names a day or month, or a unit (a few hundred milliseconds each; the
        service's warm-up edit names both)."""
        _ = self.nlp

    def _parse_many(self, texts: Sequence[str]) -> list[Any]:
        """spaCy docs of ``texts``, parsed in one ``nlp.pipe`` call (about half the cost of
        one call per text) and kept in a bounded cache: evidence repeats across claims. The
        service's threads share a checker: the cache is read and written under a lock, the
        parsing done outside it, and a doc another thread evicted meanwhile is parsed again."""
        found: dict[str, Any] = {}
        while True:
            with self._lock:
                for t in texts:
                    if t not in found and t in self._docs:
                        self._docs.move_to_end(t)
                        found[t] = self._docs[t]
            todo = list(dict.fromkeys(t for t in texts if t not in found))
            if not todo:
                return [found[t] for t in texts]
            # entities and the dependency parse are all the checks read: skip the tagger and the
            # lemmatizer (the parser and NER do not listen to them in en_core_web_sm)
            skip = [
                n for n in ("tagger", "attribute_ruler", "lemmatizer") if n in self.nlp.pipe_names
            ]
            docs = self.nlp.pipe(todo, disable=skip, batch_size=64)
            parsed = dict(zip(todo, docs, strict=True))
            found.update(parsed)
            with self._lock:
                self._docs.update(parsed)
                while len(self._docs) > self.cache_size:
                    self._docs.popitem(last=False)

    def _parse(self, text: str) -> Any:
        return self._parse_many([text])[0]

    def check(self, claim: str, evidence: str | Sequence[str]) -> SlotObservation:
        """The observation of one claim sentence against one evidence text (or several)."""
        return self.check_batch([(claim, evidence)])[0]

    def check_batch(
        self, pairs: Sequence[tuple[str, str | Sequence[str]]]
    ) -> list[SlotObservation]:
        """One observation per (claim, evidence) pair; the claims are parsed in one batch, then
        the evidence sentences they align with in another."""
        claims = self._parse_many([c for c, _ in pairs])
        staged = [
            self._align(doc, ev) for doc, ev in zip(claims, [e for _, e in pairs], strict=True)
        ]
        self._parse_many([a.aligned for a in staged if isinstance(a, _Aligned)])
        return [
            a if isinstance(a, SlotObservation) else self._verdict(doc, a)
            for doc, a in zip(claims, staged, strict=True)
        ]

    def _align(self, claim_doc: Any, evidence: str | Sequence[str]) -> SlotObservation | _Aligned:
        """The evidence sentence the claim is compared with, or the observation when there is
        none to compare with."""
        texts = [evidence] if isinstance(evidence, str) else list(evidence)
        claim = claim_doc.text
        slot_words = {w for sl in typed_spans(claim_doc) for w in content_words(sl.text)}
        rest = content_words(claim) - slot_words
        # "The Eiffel Tower is located in Rome.": too few words besides the names, so the
        # names align it too (when the other words alone do not)
        tries = [w for w in (rest, content_words(claim) if len(rest) < 2 else set()) if w]
        if not tries or not texts:
            return SlotObservation("unsaid", "nothing to compare")
        from retrieval.sentences import split

        sentences = [sent for t in texts for sent in split(t)]
        if not sentences:
            return SlotObservation("unsaid", "the evidence is empty")
        # align on the words alone; only the aligned sentence is parsed (the parse is the cost)
        overlap, aligned = 0.0, sentences[0]
        for words in tries:
            shared, _, _, sentence = max(  # ties: the first real sentence, not a title line
                (
                    (len(words & content_words(sent)), len(sent.split()) >= 4, -i, sent)
                    for i, sent in enumerate(sentences)
                ),
                key=lambda p: p[:3],
            )
            if shared / len(words) > overlap:
                overlap, aligned = shared / len(words), sentence
            if policy.aligned(overlap):
                break
        if not policy.aligned(overlap):
            return SlotObservation(
                "unsaid", f"no evidence sentence shares the claim's context ({overlap:.2f})"
            )
        everything = " " + " ".join(norm(t) for t in texts) + " "
        if f" {norm(claim)} " in everything:
            return SlotObservation(
                "matches", "the evidence states the claim word for word", verbatim=True
            )
        return _Aligned(aligned, overlap, everything)

    def _verdict(self, claim_doc: Any, a: _Aligned) -> SlotObservation:
        best = self._parse(a.aligned)
        confirmed, coarser = 0, None
        for verdict in self._compare(claim_doc, best, a.everything):
            if verdict.found == "differs":
                return verdict
            if verdict.less_specific:
                coarser = coarser or verdict
            else:
                confirmed += 1
        swap = _role_swap(claim_doc, best)
        if swap is not None:
            return swap
        flip = negation_only(claim_doc.text, best.text)
        if flip is not None and flip[1] is not None:  # the same sentence with a "not" added
            start, end = flip[1]
            return SlotObservation(
                "differs",
                f"the claim negates what the evidence states ({claim_doc.text[start:end]!r})",
                (start, end),
                None,
                best.text,
            )
        if flip is not None or (
            negated(claim_doc) != negated(best) and policy.negation_aligned(a.overlap)
        ):
            which = "the claim" if (flip is None and negated(claim_doc)) else "the evidence"
            return SlotObservation(
                "differs",
                f"{which} negates the statement the other makes",
                None,
                None,
                best.text,
            )
        if coarser is not None:  # one slot only coarsely stated: the claim is not verified
            return coarser
        if confirmed:
            return SlotObservation(
                "matches", f"{confirmed} slot(s) match the evidence", None, None, best.text
            )
        return SlotObservation(
            "unsaid", "no slot of the claim is stated in the evidence", None, None, best.text
        )

    def coverage(self, claim: str, evidence: str) -> tuple[float, float]:
        """How much of the claim the evidence mentions: the share of its content words found
        there, and the share of its typed slots (names, numbers, dates) whose words all are
        (1.0 when the claim has no slot).

        >>> SlotChecker().coverage("Paris is in France.", "France's capital is Paris.")
        (1.0, 1.0)
        """
        found = content_words(evidence)
        words = content_words(claim)
        word_share = len(words & found) / len(words) if words else 1.0
        slots = [sl for sl in typed_spans(self._parse(claim)) if content_words(sl.text)]
        if not slots:
            return word_share, 1.0
        hits = sum(content_words(sl.text) <= found for sl in slots)
        return word_share, hits / len(slots)

    # -- slot comparisons --------------------------------------------------------------------

    def _compare(self, claim_doc: Any, ev_doc: Any, everything: str) -> list[SlotObservation]:
        """One observation per comparable claim slot, differences first. A claim slot that the
        evidence sentence confirms uses up that evidence slot; a claim slot left unconfirmed,
        whose value the evidence never states, differs from the unused evidence slot of
        its kind that stands in its context (or by the only one there is)."""
        mine = [s for s in outermost(typed_spans(claim_doc)) if s.kind in COMPARED_KINDS]
        theirs = [s for s in outermost(typed_spans(ev_doc)) if s.kind in COMPARED_KINDS]
        used: set[Slot] = set()
        out: list[SlotObservation] = []
        open_slots = []
        for slot in mine:
            match = next((c for c in theirs if states_same(claim_doc, slot, ev_doc, c)), None)
            if match is not None:
                used.add(match)
                out.append(SlotObservation("matches", f"{slot.text!r} matches {match.text!r}"))
            elif slot.kind in NAME_KINDS and named_in(slot, everything):
                out.append(SlotObservation("matches", f"{slot.text!r} is in the evidence"))
            elif slot.kind in NAME_KINDS and (other := named_otherwise(slot, everything)):
                out.append(SlotObservation("matches", f"{slot.text!r} is named {other!r} there"))
            elif f" {norm(slot.text)} " not in everything:
                open_slots.append(slot)
        for slot in open_slots:
            rivals = [c for c in theirs if c not in used and comparable(claim_doc, slot, ev_doc, c)]
            rival = self._rival(claim_doc, slot, ev_doc, rivals)
            if rival is not None and not nested_names(slot, rival):
                restated = coarser_or_same(slot, rival)
                out.append(
                    SlotObservation(
                        restated.found, restated.reason, less_specific=restated.less_specific
                    )
                    if restated is not None
                    else self._contradiction(slot, rival, ev_doc)
                )
        # differences first; of those, one about what the claim says of its subject before
        # one about the subject's name ("Marie Curie" vs "Maria Sklodowska" may be one person;
        # "Paris" vs "Warsaw" is the difference to name)
        return sorted(out, key=lambda v: (v.found != "differs", _subject(claim_doc, v)))

    def _rival(
        self, claim_doc: Any, slot: Slot, ev_doc: Any, candidates: list[Slot]
    ) -> Slot | None:
        """The evidence slot standing in the claim slot's context: for a place, the one
        candidate at its level of the gazetteer; else the candidate with the most neighbouring
        words in common (at least one content word), else the only candidate, else for a year
        range the only range."""
        level = same_level(slot, candidates)  # "Rome, Italy" against "Paris, France"
        if level is not None:
            return level
        mine = slot_context(claim_doc, slot)
        scored = []
        for c in candidates:
            shared = mine & slot_context(ev_doc, c)
            if content_words(" ".join(shared)):
                scored.append((len(shared), -c.start, c))
        if scored:
            return max(scored)[2]
        if len(candidates) == 1:
            return candidates[0]
        if slot.kind == "date" and is_year_range(slot):  # "from 1887 to 1925": the one range there
            ranges = [c for c in candidates if is_year_range(c)]
            return ranges[0] if len(ranges) == 1 else None
        return None

    def _contradiction(self, slot: Slot, rival: Slot, ev_doc: Any) -> SlotObservation:
        return SlotObservation(
            "differs",
            f"{slot.text!r} vs {rival.text!r}",
            (slot.start, slot.end),
            rival.text,
            ev_doc.text,
        )


def _subject(doc: Any, verdict: SlotObservation) -> bool:
    """Whether the claim span an observation names is (part of) its sentence's subject."""
    if verdict.claim_span is None:
        return False
    span = doc.char_span(*verdict.claim_span, alignment_mode="expand")
    return span is not None and any(
        t.dep_ in {"nsubj", "nsubjpass"} or t.head.dep_ in {"nsubj", "nsubjpass"} for t in span
    )


def _role_swap(claim_doc: Any, ev_doc: Any) -> SlotObservation | None:
    """Two names that trade places (``editor.claims.flips.swapped_names``): a difference."""
    swapped = swapped_names(claim_doc, ev_doc)
    if swapped is None:
        return None
    (a0, a1), (b0, b1) = swapped
    a_text, b_text = claim_doc.text[a0:a1], claim_doc.text[b0:b1]
    return SlotObservation(
        "differs",
        f"{a_text!r} and {b_text!r} trade places",
        (a0, b1),
        None,
        ev_doc.text,
    )
