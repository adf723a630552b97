"""Each citation of a cited text checked against its source by the verifier.

For every sentence: its citations, the verdict of each cited source (``supports``,
``contradicts``, ``not_enough``: the verifier's one contradiction rule, then P(supported) at the
attribution threshold), whether its citations together support it, and its outcome:

- ``supported``: cited, and its citations together support it;
- ``citation_not_supporting``: cited, but its citations do not support it (or contradict it);
- ``needs_citation``: a checkable claim with no citation;
- ``needs_none``: a question, greeting, hedge or transition without a citation.

A sentence that carries a citation is checked whatever its mood ("Rest when the baby sleeps
[2]." claims that source 2 says so). Citation recall and precision are ALCE's (Gao et al. 2023).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from editor.attribution.base import AttributionModel
from editor.attribution.verifier import combine_parts, judge_batch, refutes
from editor.citations.document import CitedDocument, CitedSentence
from editor.citations.results import CheckResult, SentenceCheck, SourceVerdict, citation_scores
from editor.citations.sources import Source, premise_of
from editor.text.decontext import decontextualize_sentences
from editor.text.document import standalone_docs
from editor.text.nlp import get_nlp, is_claim
from editor.text.parts import Part, sentence_parts
from editor.text.words import content_words
from editor.types import EntailmentScores
from retrieval.sentences import split


def locate(check: SentenceCheck, by_id: Mapping[str, Source], locator: Any) -> SentenceCheck:
    """``check`` with each non-supporting verdict that names no slot given the words the span
    judge flags in the sentence (``values``): the contradicted words and the source's words for
    them where the verifier and the judge both call it contradicted, else the words the source
    does not state. Unchanged where the judge flags nothing or calls the sentence supported."""
    if check.outcome != "citation_not_supporting":
        return check
    out = []
    for v in check.verdicts:
        if v.label != "supports" and v.values is None and v.source_id in by_id:
            f = locator.fix(check.claim, [premise_of(by_id[v.source_id])])
            spans = [] if f.verdict == "supported" else list(f.spans)
            spans.sort(key=lambda x: (x.kind != "contradicted", x.fix is None))
            for sp in spans[:1]:
                words = check.claim[sp.start : sp.end]
                both = v.label == "contradicts" and f.verdict == "contradicted"
                fix = f.window[sp.fix[0] : sp.fix[1]] if both and sp.fix else ""
                if words.strip() and words in check.text:
                    v = replace(v, values=(words, fix))
        out.append(v)
    return replace(check, verdicts=tuple(out))


def best_span(claim: str, source: str) -> str:
    """The source sentence that shares the most content words with the claim.

    >>> best_span("The tower is 330 metres tall.", "It is in Paris. The tower is 330 metres tall.")
    'The tower is 330 metres tall.'
    """
    words = set(content_words(claim))
    sentences = split(source) or [source]
    return max(sentences, key=lambda s: len(words & set(content_words(s))))


class CitationChecker:
    """Checks a cited text's citations with ``model`` (the verifier, or any attribution model)."""

    def __init__(
        self,
        model: AttributionModel,
        threshold: float = 0.5,
        decompose: bool = False,
        locator: Any = None,
    ) -> None:
        self.model = model
        self.threshold = threshold
        self.decompose = decompose
        self.locator = locator
        """a ``SpanFixer`` (``editor.judge.span_fix``): the words each non-supporting source
        flags, where the verifier names no slot"""

    def _label(self, scores: EntailmentScores, slot: Any) -> str:
        if refutes(scores, slot):
            return "contradicts"
        return "supports" if scores.supported >= self.threshold else "not_enough"

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, float, Any]]:
        """(label, P(supported), slot verdict) of each (premise, claim) pair."""
        scores, slots = judge_batch(self.model, pairs)
        return [
            (self._label(sc, sl), sc.supported, sl) for sc, sl in zip(scores, slots, strict=True)
        ]

    def standalone(self, doc: CitedDocument, context: str | None = None) -> list[str]:
        """Each sentence's claim made stand-alone ("It was built ..." -> "The tower was ...")."""
        claims = [s.claim for s in doc.sentences]
        return [
            d.decontextualized for d in decontextualize_sentences(claims, context, nlp=get_nlp())
        ]

    def check(
        self, text: str, sources: Sequence[Source], context: str | None = None
    ) -> CheckResult:
        """Every sentence of ``text`` against the sources its markers name; each claim is
        made stand-alone first ("It was built in 1889." -> "The tower was built in 1889.")."""
        by_id: Mapping[str, Source] = {s.id: s for s in sources}
        doc = CitedDocument.parse(text, by_id)
        decon, parsed = standalone_docs([s.claim for s in doc.sentences], context, get_nlp())
        standalone = [d.decontextualized for d in decon]  # parsed: the one parse of each
        claims = [is_claim(d) for d in parsed]
        parts = [
            sentence_parts(d) if self.decompose else (Part(t, 0, len(t), "main"),)
            for d, t in zip(parsed, standalone, strict=True)
        ]
        flat: list[tuple[str, str]] = []  # (premise, part) pairs
        owner: list[int] = []  # the (sentence, sources) question each flat pair answers
        index: dict[tuple[int, tuple[str, ...]], int] = {}

        def ask(i: int, ids: tuple[str, ...]) -> None:
            key = (i, ids)
            if ids and key not in index:
                index[key] = len(index)
                premise = "\n\n".join(premise_of(by_id[k]) for k in ids)
                for part in parts[i]:
                    flat.append((premise, part.text))
                    owner.append(index[key])

        for i, s in enumerate(doc.sentences):
            cited = tuple(c for c in s.citations if c in by_id)
            for c in cited:
                ask(i, (c,))
            ask(i, cited)
            if len(cited) > 1:
                for c in cited:
                    ask(i, tuple(k for k in cited if k != c))
        scores, slots, judged = (
            zip(*self._all_parts(flat, owner, len(index)), strict=True) if index else ((), (), ())
        )

        def supports(i: int, ids: tuple[str, ...]) -> bool:
            if not ids:
                return False
            k = index[(i, ids)]
            return self._label(scores[k], slots[k]) == "supports"

        checks = [
            self._sentence(
                i, s, claim, by_id, scores, slots, index, supports, judged, standalone[i]
            )
            for i, (s, claim) in enumerate(zip(doc.sentences, claims, strict=True))
        ]
        if self.locator is not None:
            checks = [locate(c, by_id, self.locator) for c in checks]
        precision, recall = citation_scores(
            [
                (c.citations != () or claim, c.supported, c.precise)
                for c, claim in zip(checks, claims, strict=True)
            ]
        )
        unknown = tuple(doc.unknown_markers(by_id))
        warnings = tuple(
            f"marker [{u}] names no given source; it is kept and reported" for u in unknown
        )
        return CheckResult(text, tuple(checks), precision, recall, unknown, warnings)

    def _all_parts(self, flat: list[tuple[str, str]], owner: list[int], n: int) -> list[tuple]:
        """The verifier on every (premise, part) pair, folded into one (scores, slot verdict,
        (deciding part, several parts?)) per question by ``combine_parts``."""
        flat_scores, flat_slots = judge_batch(self.model, flat)
        mine: list[list[int]] = [[] for _ in range(n)]
        for j, k in enumerate(owner):
            mine[k].append(j)
        out = []
        for js in mine:
            sc, sl, pick = combine_parts([flat_scores[j] for j in js], [flat_slots[j] for j in js])
            out.append((sc, sl, (flat[js[pick]][1], len(js) > 1)))
        return out

    def _sentence(
        self,
        i,
        s: CitedSentence,
        claim: bool,
        by_id,
        scores,
        slots,
        index,
        supports,
        judged,
        standalone="",
    ):
        cited = tuple(c for c in s.citations if c in by_id)
        verdicts = []
        for c in cited:
            k = index[(i, (c,))]
            label = self._label(scores[k], slots[k])
            part, several = judged[k]
            reason = _reason(label, scores[k], slots[k])
            if several and label != "supports":  # name the part that fails
                reason = f"{reason}; the part that fails: '{part}'"
            named = getattr(slots[k], "evidence_sentence", None)
            span = named or best_span(s.claim, by_id[c].text)
            values = None
            sl = slots[k]
            if label == "contradicts" and getattr(sl, "names_a_difference", False):
                a, b = sl.claim_span
                values = (part[a:b], sl.evidence_span or "")
            verdicts.append(SourceVerdict(c, label, scores[k].supported, span, reason, values))
        together = supports(i, cited)
        precise = [False] * (len(s.citations) - len(cited))  # markers that name no source
        for c, v in zip(cited, verdicts, strict=True):
            if not together:
                precise.append(False)
            elif v.label == "supports" or len(cited) == 1:
                precise.append(True)
            else:  # irrelevant when the others support the sentence without it
                precise.append(not supports(i, tuple(k for k in cited if k != c)))
        if s.citations:
            outcome = "supported" if together else "citation_not_supporting"
        else:
            outcome = "needs_citation" if claim else "needs_none"
        return SentenceCheck(
            s.text,
            s.claim,
            s.citations,
            outcome,
            together,
            tuple(verdicts),
            tuple(precise),
            standalone,
        )


def _reason(label: str, scores: EntailmentScores, slot: Any) -> str:
    named = getattr(slot, "names_a_difference", False)
    if label == "contradicts" and named:
        return f"the source states it otherwise: {getattr(slot, 'reason', '') or 'a slot differs'}"
    if label == "contradicts":
        return f"the source contradicts it (P(contradicted) {scores.contradicted:.2f})"
    if label == "supports":
        return f"the source supports it (P(supported) {scores.supported:.2f})"
    return f"the source does not say it (P(supported) {scores.supported:.2f})"
