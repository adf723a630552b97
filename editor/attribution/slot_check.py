"""Slot-level contradiction checks: does the evidence state a different date, number, name or
role, or the opposite polarity, in the very context the claim states its own?

The claim is aligned with the evidence sentence that shares most of its content words. Each
slot of the claim (``editor.attribution.slots``) is then looked up there:

- found with the same value (a date range that overlaps, a number within rounding, or within
  10% when the claim hedges it with "about", "over", ...; a name the evidence mentions) ->
  consistent;
- a slot of the same kind stands in the same context (a neighbouring word in common) with a
  different value, and the claim's value appears nowhere in the evidence -> contradicted, with
  both spans and the reason ("'1895' vs '1887 to 1889'");
- otherwise nothing is decided for that slot.

Two names that trade places in the evidence sentence (the rest of a near-copy word for word,
or the same words between them; neither sentence passive) are a role swap; a claim that is
the evidence's sentence with a "not" added, or a negated claim against an unnegated sentence
(or the reverse) with the same content, is a polarity flip. Both are contradictions. A claim
with no contradicted slot and at least one confirmed slot is ``consistent``; anything else is
``unknown``: the check only speaks where the evidence does.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

from editor.attribution.slots import (
    WORD_TOKEN,
    Slot,
    approximate,
    date_range,
    exchanged_spans,
    family,
    negated,
    norm,
    quantity,
    typed_spans,
)
from editor.text.words import content_words

_YEARS = re.compile(r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b")
_DIGITS = re.compile(r"\d")
_DIGIT_RUNS = re.compile(r"\d+")
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$", re.I)

SlotVerdictKind = Literal["contradicted", "consistent", "unknown"]
_NAMES = {"person", "org", "place", "norp", "other"}


_COMPARED = {"date", "number", "ordinal"} | _NAMES


_STAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2})?\b")
"""A machine timestamp (ISO 8601 date, maybe with a time): metadata more often than a fact."""


def _comparable(claim_doc: Any, slot: Slot, ev_doc: Any, other: Slot) -> bool:
    """Whether ``other`` states the same kind of thing as ``slot`` (a date, a quantity in the
    same unit, a name of the same family)."""
    if family(slot.kind) != family(other.kind):
        return False
    if slot.kind == "ordinal":  # "the 16th busiest", not "first"
        return bool(_ORDINAL.match(slot.text.strip())) and bool(_ORDINAL.match(other.text.strip()))
    if slot.kind == "date" and bool(_STAMP.search(slot.text)) != bool(_STAMP.search(other.text)):
        return False  # "2007-05-22" in a page is a timestamp (when it was published), not prose
    if slot.kind == "date" and date_range(slot.text) is not None:
        return date_range(other.text) is not None
    if slot.kind in {"date", "number"}:  # a number, or a date without a year ("27 million years")
        a = quantity(slot.text, claim_doc.text[slot.end : slot.end + 40])
        b = quantity(other.text, ev_doc.text[other.end : other.end + 40])
        return a is not None and b is not None and a[1] == b[1]
    return True


def _same(claim_doc: Any, slot: Slot, ev_doc: Any, other: Slot) -> bool:
    """Whether ``other`` states the value ``slot`` states (see the module doc for tolerances)."""
    if not _comparable(claim_doc, slot, ev_doc, other):
        return False
    hedge = _hedged(claim_doc.text, slot)
    if slot.kind == "date" and date_range(slot.text) is not None:
        mine, theirs = date_range(slot.text), date_range(other.text)
        assert mine is not None and theirs is not None
        lo, hi = mine
        if hedge:  # "about 1890", "around the 1890s": a year either way
            lo, hi = lo.replace(year=lo.year - 1), hi.replace(year=hi.year + 1)
        if len(_DIGIT_RUNS.findall(slot.text)) > 1:  # "from 1887 to 1895" states both ends
            ends = (theirs[0].year, theirs[1].year) == (mine[0].year, mine[1].year)
            inside = lo <= theirs[0] and theirs[1] <= hi
            return ends or (hedge and inside) or (theirs[0] <= mine[0] and mine[1] <= theirs[1])
        return lo <= theirs[1] and theirs[0] <= hi
    if slot.kind == "ordinal":
        return slot.text.strip().lower() == other.text.strip().lower()
    if slot.kind in {"date", "number"}:
        a = quantity(slot.text, claim_doc.text[slot.end : slot.end + 40])
        b = quantity(other.text, ev_doc.text[other.end : other.end + 40])
        assert a is not None and b is not None
        if not hedge and a[0].is_integer() and b[0].is_integer() and max(a[0], b[0]) < 1e4:
            return a[0] == b[0]  # counts and years are exact
        scale = max(abs(a[0]), abs(b[0]), 1e-9)
        return abs(a[0] - b[0]) / scale <= (0.1 if hedge else 0.01)
    return _name(slot.text) == _name(other.text)


def _name(text: str) -> str:
    """A name as compared: no possessive, no leading article ("the Spanish Empire's")."""
    return norm(re.sub(r"^(?:the|The)\s+|['’]s$", "", text.strip()))


def _nested(slot: Slot, other: Slot) -> bool:
    """Whether one name holds the other ("the Lesser Antilles of the West Indies" and "the West
    Indies"): a more specific name, not a different one.

    >>> _nested(Slot(0, 5, "the Lesser Antilles of the West Indies", "place"),
    ...         Slot(0, 5, "the West Indies", "place"))
    True
    """
    if slot.kind not in _NAMES:
        return False
    a, b = f" {_name(slot.text)} ", f" {_name(other.text)} "
    return a.strip() != "" and b.strip() != "" and (a in b or b in a)


def _named_in(slot: Slot, everything: str) -> bool:
    """Whether the evidence mentions the name (a person's surname will do)."""
    name = _name(slot.text)
    surname = name.split()[-1] if slot.kind == "person" and name else ""
    return bool(name) and (
        f" {name} " in everything or (len(surname) > 3 and f" {surname} " in everything)
    )


@dataclass(frozen=True)
class SlotVerdict:
    """The slot check of one claim: the verdict, why, and the two spans behind a contradiction
    (``claim_span`` as character offsets into the claim; ``evidence_span`` the evidence's words).
    ``verbatim``: the evidence contains the whole claim word for word."""

    verdict: SlotVerdictKind
    reason: str
    claim_span: tuple[int, int] | None = None
    evidence_span: str | None = None
    evidence_sentence: str | None = None
    verbatim: bool = False

    @property
    def names_a_difference(self) -> bool:
        """A contradiction that names the claim's span the evidence states otherwise (a date,
        number, name or role, or a "not" the evidence's same sentence lacks; other polarity
        flips name none): enough on its own to open the agreement gate and mark the report
        sentence."""
        return self.verdict == "contradicted" and self.claim_span is not None


@dataclass(frozen=True)
class _Aligned:
    """A claim's aligned evidence sentence, its share of the claim's words, and all the
    evidence normalised (where a slot's value is looked up)."""

    aligned: str
    overlap: float
    everything: str


def _context(doc: Any, slot: Slot, width: int = 3) -> set[str]:
    """Lower-cased words within ``width`` tokens of the slot, the slot's own words excluded."""
    tokens = [t for t in doc if not t.is_punct]
    inside = [i for i, t in enumerate(tokens) if slot.start <= t.idx < slot.end]
    if not inside:
        return set()
    lo, hi = max(0, inside[0] - width), min(len(tokens), inside[-1] + width + 1)
    return {tokens[i].lower_ for i in range(lo, hi) if i not in inside}


def _hedged(text: str, slot: Slot) -> bool:
    """Whether the words before the slot's number hedge it ("about 300 metres")."""
    m = _YEARS.search(slot.text) or _DIGITS.search(slot.text)
    cut = slot.start + (m.start() if m else 0)
    return approximate(text[:cut])


def _is_range(slot: Slot) -> bool:
    """Whether a date slot states two years ("1887 to 1889", "1914-1918")."""
    return len(_YEARS.findall(slot.text)) > 1


def _passive(doc: Any) -> bool:
    return any(t.dep_ in {"nsubjpass", "auxpass", "agent"} for t in doc)


def _outermost(slots: list[Slot]) -> list[Slot]:
    """Slots not inside a longer slot of the same text ('1887' inside '31 March 1887')."""
    return [
        s
        for s in slots
        if not any(o is not s and o.start <= s.start and s.end <= o.end for o in slots)
    ]


class SlotChecker:
    """Checks claims against evidence slot by slot (see the module doc). ``min_overlap``: the
    share of the claim's content words the aligned evidence sentence must contain before any
    slot of it is compared."""

    def __init__(self, nlp: Any = None, min_overlap: float = 0.4, cache_size: int = 4096) -> None:
        self._nlp = nlp
        self.min_overlap = min_overlap
        self.cache_size = cache_size
        self._docs: OrderedDict[str, Any] = OrderedDict()

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            from editor.text.nlp import get_nlp

            self._nlp = get_nlp()
        return self._nlp

    def warm_up(self) -> None:
        """Load the spaCy pipeline, dateparser's tables and pint's registry now (each costs
        a few hundred milliseconds on first use)."""
        self.check("It opened in March 1889 at a height of 300 metres.", "It opened in 1889.")

    def _parse_many(self, texts: Sequence[str]) -> list[Any]:
        """spaCy docs of ``texts``, parsed in one ``nlp.pipe`` call (about half the cost of
        one call per text) and kept in a bounded cache: evidence repeats across claims."""
        # entities and the dependency parse are all the checks read: skip the tagger and the
        # lemmatizer (the parser and NER do not listen to them in en_core_web_sm)
        todo = list(dict.fromkeys(t for t in texts if t not in self._docs))
        if todo:
            skip = [
                n for n in ("tagger", "attribute_ruler", "lemmatizer") if n in self.nlp.pipe_names
            ]
            for text, doc in zip(
                todo, self.nlp.pipe(todo, disable=skip, batch_size=64), strict=True
            ):
                self._docs[text] = doc
        out = []
        for t in texts:
            self._docs.move_to_end(t)
            out.append(self._docs[t])
        while len(self._docs) > self.cache_size:
            self._docs.popitem(last=False)
        return out

    def _parse(self, text: str) -> Any:
        return self._parse_many([text])[0]

    def check(self, claim: str, evidence: str | Sequence[str]) -> SlotVerdict:
        """The verdict of one claim sentence against one evidence text (or several)."""
        return self.check_batch([(claim, evidence)])[0]

    def check_batch(self, pairs: Sequence[tuple[str, str | Sequence[str]]]) -> list[SlotVerdict]:
        """One verdict per (claim, evidence) pair; the claims are parsed in one batch, then
        the evidence sentences they align with in another."""
        claims = self._parse_many([c for c, _ in pairs])
        staged = [
            self._align(doc, ev) for doc, ev in zip(claims, [e for _, e in pairs], strict=True)
        ]
        self._parse_many([a.aligned for a in staged if isinstance(a, _Aligned)])
        return [
            a if isinstance(a, SlotVerdict) else self._verdict(doc, a)
            for doc, a in zip(claims, staged, strict=True)
        ]

    def _align(self, claim_doc: Any, evidence: str | Sequence[str]) -> SlotVerdict | _Aligned:
        """The evidence sentence the claim is compared with, or the verdict when there is
        none to compare with."""
        texts = [evidence] if isinstance(evidence, str) else list(evidence)
        claim = claim_doc.text
        slot_words = {w for sl in typed_spans(claim_doc) for w in content_words(sl.text)}
        words = content_words(claim) - slot_words or content_words(claim)
        if not words or not texts:
            return SlotVerdict("unknown", "nothing to compare")
        from retrieval.sentences import split

        sentences = [sent for t in texts for sent in split(t)]
        if not sentences:
            return SlotVerdict("unknown", "the evidence is empty")
        # align on the words alone; only the aligned sentence is parsed (the parse is the cost)
        shared, aligned = max(
            ((len(words & content_words(sent)), sent) for sent in sentences), key=lambda p: p[0]
        )
        overlap = shared / len(words)
        if overlap < self.min_overlap:
            return SlotVerdict(
                "unknown", f"no evidence sentence shares the claim's context ({overlap:.2f})"
            )
        everything = " " + " ".join(norm(t) for t in texts) + " "
        if f" {norm(claim)} " in everything:
            return SlotVerdict(
                "consistent", "the evidence states the claim word for word", verbatim=True
            )
        return _Aligned(aligned, overlap, everything)

    def _verdict(self, claim_doc: Any, a: _Aligned) -> SlotVerdict:
        best = self._parse(a.aligned)
        confirmed = 0
        for verdict in self._compare(claim_doc, best, a.everything):
            if verdict.verdict == "contradicted":
                return verdict
            confirmed += 1
        swap = self._role_swap(claim_doc, best)
        if swap is not None:
            return swap
        flip = _negation_only(claim_doc.text, best.text)
        if flip is not None and flip[1] is not None:  # the same sentence with a "not" added
            start, end = flip[1]
            return SlotVerdict(
                "contradicted",
                f"the claim negates what the evidence states ({claim_doc.text[start:end]!r})",
                (start, end),
                None,
                best.text,
            )
        if flip is not None or (negated(claim_doc) != negated(best) and a.overlap >= 0.6):
            which = "the claim" if (flip is None and negated(claim_doc)) else "the evidence"
            return SlotVerdict(
                "contradicted",
                f"{which} negates the statement the other makes",
                None,
                None,
                best.text,
            )
        if confirmed:
            return SlotVerdict(
                "consistent", f"{confirmed} slot(s) match the evidence", None, None, best.text
            )
        return SlotVerdict(
            "unknown", "no slot of the claim is stated in the evidence", None, None, best.text
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

    def _compare(self, claim_doc: Any, ev_doc: Any, everything: str) -> list[SlotVerdict]:
        """One verdict per comparable claim slot, contradictions first. A claim slot that the
        evidence sentence confirms uses up that evidence slot; a claim slot left unconfirmed,
        whose value the evidence never states, is contradicted by the unused evidence slot of
        its kind that stands in its context (or by the only one there is)."""
        mine = [s for s in _outermost(typed_spans(claim_doc)) if s.kind in _COMPARED]
        theirs = [s for s in _outermost(typed_spans(ev_doc)) if s.kind in _COMPARED]
        used: set[Slot] = set()
        out: list[SlotVerdict] = []
        open_slots = []
        for slot in mine:
            match = next((c for c in theirs if _same(claim_doc, slot, ev_doc, c)), None)
            if match is not None:
                used.add(match)
                out.append(SlotVerdict("consistent", f"{slot.text!r} matches {match.text!r}"))
            elif slot.kind in _NAMES and _named_in(slot, everything):
                out.append(SlotVerdict("consistent", f"{slot.text!r} is in the evidence"))
            elif f" {norm(slot.text)} " not in everything:
                open_slots.append(slot)
        for slot in open_slots:
            rivals = [
                c for c in theirs if c not in used and _comparable(claim_doc, slot, ev_doc, c)
            ]
            rival = self._rival(claim_doc, slot, ev_doc, rivals)
            if rival is not None and not _nested(slot, rival):
                out.append(self._contradiction(slot, rival, ev_doc))
        return sorted(out, key=lambda v: v.verdict != "contradicted")

    def _rival(
        self, claim_doc: Any, slot: Slot, ev_doc: Any, candidates: list[Slot]
    ) -> Slot | None:
        """The evidence slot standing in the claim slot's context: the candidate with the most
        neighbouring words in common (at least one content word), else the only candidate, else
        for a year range the only range."""
        mine = _context(claim_doc, slot)
        scored = []
        for c in candidates:
            shared = mine & _context(ev_doc, c)
            if content_words(" ".join(shared)):
                scored.append((len(shared), -c.start, c))
        if scored:
            return max(scored)[2]
        if len(candidates) == 1:
            return candidates[0]
        if slot.kind == "date" and _is_range(slot):  # "from 1887 to 1925": the one range there
            ranges = [c for c in candidates if _is_range(c)]
            return ranges[0] if len(ranges) == 1 else None
        return None

    def _contradiction(self, slot: Slot, rival: Slot, ev_doc: Any) -> SlotVerdict:
        return SlotVerdict(
            "contradicted",
            f"{slot.text!r} vs {rival.text!r}",
            (slot.start, slot.end),
            rival.text,
            ev_doc.text,
        )

    def _role_swap(self, claim_doc: Any, ev_doc: Any) -> SlotVerdict | None:
        """Two names that both sentences state, in the other order, around the same words
        ("Mexico's independence from the Spanish Empire" / "the Spanish Empire's independence
        from Mexico"). The names come from both parses (NER misses a name on one side as often
        as not); the words between them must be the same words, so that a paraphrase that merely
        reorders ("Paris is the capital of France" / "France's capital is Paris") is not a swap."""
        if _passive(claim_doc) != _passive(ev_doc):  # "A beat B" / "B was beaten by A"
            return None
        exchanged = exchanged_spans(claim_doc.text, ev_doc.text)
        if exchanged is not None:
            (a0, a1), (b0, b1) = exchanged
            a_text, b_text = claim_doc.text[a0:a1], claim_doc.text[b0:b1]
            return SlotVerdict(
                "contradicted",
                f"{a_text!r} and {b_text!r} trade places",
                (a0, b1),
                None,
                ev_doc.text,
            )
        kinds: dict[str, tuple[str, str]] = {}  # name -> (surface form, kind)
        for doc in (claim_doc, ev_doc):  # the evidence's labels win: NER labels a swapped
            for sl in _outermost(typed_spans(doc)):  # name in an odd place oddly
                if sl.kind in _NAMES and _name(sl.text):
                    surface = re.sub(r"^(?:the|The)\s+|['’]s$", "", sl.text.strip())
                    kinds[_name(sl.text)] = (surface, sl.kind)
        found = []
        for name, (surface, kind) in kinds.items():
            c, e = _find_name(surface, claim_doc.text), _find_name(surface, ev_doc.text)
            if c is not None and e is not None:
                found.append((name, kind, c, e))
        found.sort(key=lambda f: f[2][0])  # claim order
        for i, (na, ka, ca, ea) in enumerate(found):
            for nb, kb, cb, eb in found[i + 1 :]:
                if family(ka) != family(kb) or f" {na} " in f" {nb} " or f" {nb} " in f" {na} ":
                    continue
                if ca[1] > cb[0] or eb[0] >= ea[0] or eb[1] > ea[0]:
                    continue  # overlapping, or the same order in the evidence
                between_claim = _between(claim_doc.text[ca[1] : cb[0]])
                between_ev = _between(ev_doc.text[eb[1] : ea[0]])
                if between_claim != between_ev:
                    continue
                a_text, b_text = claim_doc.text[ca[0] : ca[1]], claim_doc.text[cb[0] : cb[1]]
                return SlotVerdict(
                    "contradicted",
                    f"{a_text!r} and {b_text!r} trade places",
                    (ca[0], cb[1]),
                    None,
                    ev_doc.text,
                )
        return None


_ARTICLES = frozenset({"the", "a", "an"})


def _between(text: str) -> list[str]:
    """The words and marks between two names, articles left out ("the" goes with a name on one
    side and not the other: "Bahrain" / "the United Arab Emirates").

    >>> _between(", Iraq, and the "), _between("'s capital is")
    ([',', 'iraq', ',', 'and'], ["'", 's', 'capital', 'is'])
    """
    return [t for t in WORD_TOKEN.findall(text.lower()) if t not in _ARTICLES]


_NEGATIONS = frozenset({"not", "n't", "never", "no"})
_NEG_TOKEN = re.compile(r"\w+?(?=n't\b)|n't|\w+|[^\w\s]", re.I)


def _negation_only(claim: str, evidence: str) -> tuple[bool, tuple[int, int] | None] | None:
    """Whether the claim differs from the evidence sentence only by negation words it adds
    (True, with the span of the first) or drops (False, None); None when anything else
    differs.

    >>> _negation_only("It is not closely related, but not equal.", "It is closely related, but not equal.")
    (True, (6, 9))
    >>> _negation_only("It is closely related.", "It isn't closely related.")
    (False, None)
    >>> _negation_only("It is big.", "It is small.") is None
    True
    """
    a = [(m.group().lower(), m.start(), m.end()) for m in _NEG_TOKEN.finditer(claim)]
    b = [m.group().lower() for m in _NEG_TOKEN.finditer(evidence)]
    added: list[tuple[str, int, int]] = []
    dropped: list[str] = []
    ops = SequenceMatcher(None, [t for t, _, _ in a], b, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        if tag == "replace":
            return None
        added += a[i1:i2]
        dropped += b[j1:j2]
    words = {t for t, _, _ in added} | set(dropped)
    if bool(added) == bool(dropped) or not words <= _NEGATIONS:
        return None
    return (True, (added[0][1], added[0][2])) if added else (False, None)


def _find_name(name: str, text: str) -> tuple[int, int] | None:
    """Where a name (its surface form) first stands in ``text``: any punctuation between its
    words, a possessive after it; names of one or two letters ("N") must match case.

    >>> _find_name("the Spanish Empire", "from the Spanish Empire's rule")
    (5, 25)
    >>> _find_name("N", "it has symbol N and"), _find_name("N", "it is not")
    ((14, 15), None)
    """
    words = re.findall(r"\w+", name)
    if not words:
        return None
    pattern = r"(?<!\w)" + r"\W+".join(map(re.escape, words)) + r"(?:['’]s)?(?!\w)"
    m = re.search(pattern, text, 0 if len(name.strip()) <= 2 else re.I)
    return (m.start(), m.end()) if m else None


def states_same(claim_doc: Any, slot: Slot, ev_doc: Any, other: Slot) -> bool:
    """Whether slot ``other`` of ``ev_doc`` states the value slot ``slot`` of ``claim_doc``
    states: the same date or quantity within the checks' tolerances, the same name. Slots of
    different kinds never do."""
    return _same(claim_doc, slot, ev_doc, other)
