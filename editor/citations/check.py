"""Each citation of a cited text checked against its source by the pipeline's judge.

For every sentence: its citations, the verdict of each cited source (``supports``,
``contradicts``, ``not_enough``: the judge's ``Finding`` on the sentence against the source:
supported, contradicted, else not stated), whether its citations together support it, and its
outcome:

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
from typing import Any, NamedTuple

from editor.attribution.base import AttributionModel
from editor.citations.document import CitedDocument, CitedSentence
from editor.citations.results import CheckResult, SentenceCheck, SourceLabel, citation_scores
from editor.citations.sources import Source, premise_of
from editor.judge.base import Finding, Judge, of_parts
from editor.policy import ATTRIBUTED_MIN, CONTRADICTED_MIN
from editor.text.decontext import decontextualize_sentences
from editor.text.document import standalone_docs
from editor.text.nlp import get_nlp, is_claim
from editor.text.parts import Part, sentence_parts
from editor.text.words import content_words, fitted
from editor.types import Evidence, evidence_text
from editor.verdicts import (
    CITED,
    CONTRADICTED,
    CONTRADICTS,
    NOT_ENOUGH,
    SUPPORTED,
    SUPPORTS,
    CitedLabel,
)
from retrieval.sentences import split


class PairLabel(NamedTuple):
    """The judge on one (evidence, claim) question: the label, P(supported), why, the words
    it names with the evidence's words for them, the evidence sentence that states them, and
    the part of the claim that decides it (``several``: the claim was judged in parts)."""

    label: CitedLabel
    p: float
    reason: str
    values: tuple[str, str] | None = None
    evidence_sentence: str | None = None
    part: str = ""
    several: bool = False


def pair_label(finding: Finding, claim: str, evidence: str) -> PairLabel:
    """A finding on ``claim`` against ``evidence`` as a citation's verdict. The words named:
    the first contradicted flag (the one with the evidence's words first), else for a source
    that does not support the claim the first words it does not state.

    >>> from editor.result import Flag
    >>> f = Finding("contradicted", "a date differs", (0, 21), 0.1, 0.9,
    ...             flags=(Flag(17, 21, "contradicted", "1889"),))
    >>> v = pair_label(f, "It was opened in 1895.", "1889. Built in 1887. It opened in 1889.")
    >>> v.label, v.values, v.evidence_sentence
    ('contradicts', ('1895', '1889'), 'It opened in 1889.')
    """
    label = CITED.get(finding.verdict, NOT_ENOUGH)
    p = finding.supported if finding.supported is not None else float(label == SUPPORTS)
    flags = sorted(finding.flags, key=lambda f: (f.kind != CONTRADICTED, f.fix is None))
    values = None
    if label != SUPPORTS:
        for f in flags[:1]:
            if f.kind == CONTRADICTED or label == NOT_ENOUGH:
                values = (claim[f.start : f.end], fitted(claim, f.start, f.end, f.fix) or "")
    said = values[1] if values and values[1] else None
    stating = [x for x in split(evidence) if said and said in x]  # the sentence that states it
    named = best_span(claim, " ".join(stating)) if stating else None
    return PairLabel(label, p, _reason(label, p, finding, values), values, named, claim)


def locate(check: SentenceCheck, by_id: Mapping[str, Source], locator: Any) -> SentenceCheck:
    """``check`` with each non-supporting verdict whose judge named no words given the words the
    span judge flags in the sentence (``values``): the contradicted words and the source's words
    for them where the checker's judge and the span judge both call it contradicted, else the
    words the source does not state. Unchanged where the span judge flags nothing or calls the
    sentence supported."""
    if check.outcome != "citation_not_supporting":
        return check
    out = []
    for v in check.verdicts:
        if v.label != SUPPORTS and v.values is None and v.source_id in by_id:
            f = locator.fix(check.claim, [premise_of(by_id[v.source_id])])
            spans = [] if f.verdict == SUPPORTED else list(f.spans)
            spans.sort(key=lambda x: (x.kind != CONTRADICTED, x.fix is None))
            for sp in spans[:1]:
                words = check.claim[sp.start : sp.end]
                both = v.label == CONTRADICTS and f.verdict == CONTRADICTED
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
    """Checks a cited text's citations with ``judge`` (the pipeline's; ``with_verifier`` for a
    bare attribution model)."""

    def __init__(self, judge: Judge, decompose: bool = False, locator: Any = None) -> None:
        self.judge = judge
        self.decompose = decompose
        self.locator = locator
        """a ``SpanFixer`` (``editor.judge.span_fix``): the words each non-supporting source
        flags, where the judge names none"""

    @classmethod
    def with_verifier(
        cls,
        model: AttributionModel,
        contradicted_min: float = CONTRADICTED_MIN,
        supported_min: float = ATTRIBUTED_MIN,
        decompose: bool = False,
        locator: Any = None,
    ) -> CitationChecker:
        """A checker whose judge is the ``rules`` judge's gate over ``model``: the slot check,
        then P(contradicted) at ``contradicted_min``, then P(supported) at ``supported_min``
        (the judge's policy)."""
        from editor.judge.agreement.nli import NLIAgreement
        from editor.judge.rules import RulesJudge

        gate = NLIAgreement(model, contradicted_min, supported_min, decontextualize=False)
        return cls(RulesJudge(gate), decompose, locator)

    def labels(self, pairs: Sequence[tuple[Evidence, str]]) -> list[PairLabel]:
        """The cited-source label of each (evidence, claim) pair, the claim judged whole."""
        return self._questions([(e, [c]) for e, c in pairs])

    def _questions(self, questions: Sequence[tuple[Evidence, Sequence[str]]]) -> list[PairLabel]:
        """One label per (evidence, parts of a claim): each part judged in one batch, then
        folded by the judge's rule for parts (``editor.judge.base.of_parts``)."""
        items = [(t, t, e) for e, parts in questions for t in parts]
        found = iter(self.judge.assess_batch(items) if items else [])
        out = []
        for e, parts in questions:
            i, f = of_parts([next(found) for _ in parts])
            v = pair_label(f, parts[i], evidence_text(e))
            out.append(v._replace(several=len(parts) > 1))
        return out

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
        questions: list[tuple[Evidence, Sequence[str]]] = []
        index: dict[tuple[int, tuple[str, ...]], int] = {}  # (sentence, sources) -> question

        def ask(i: int, ids: tuple[str, ...]) -> None:
            if ids and (i, ids) not in index:
                index[(i, ids)] = len(questions)
                questions.append((_evidence([by_id[k] for k in ids]), [p.text for p in parts[i]]))

        for i, s in enumerate(doc.sentences):
            cited = tuple(c for c in s.citations if c in by_id)
            for c in cited:
                ask(i, (c,))
            ask(i, cited)
            if len(cited) > 1:
                for c in cited:
                    ask(i, tuple(k for k in cited if k != c))
        verdicts = self._questions(questions)

        def supports(i: int, ids: tuple[str, ...]) -> bool:
            return bool(ids) and verdicts[index[(i, ids)]].label == SUPPORTS

        checks = [
            self._sentence(i, s, claim, by_id, verdicts, index, supports, standalone[i])
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

    def _sentence(
        self,
        i: int,
        s: CitedSentence,
        claim: bool,
        by_id: Mapping[str, Source],
        judged: Sequence[PairLabel],
        index: Mapping[tuple[int, tuple[str, ...]], int],
        supports: Any,
        standalone: str = "",
    ) -> SentenceCheck:
        cited = tuple(c for c in s.citations if c in by_id)
        verdicts = []
        for c in cited:
            v = judged[index[(i, (c,))]]
            reason = v.reason
            if v.several and v.label != SUPPORTS:  # name the part that fails
                reason = f"{reason}; the part that fails: '{v.part}'"
            span = v.evidence_sentence or best_span(s.claim, by_id[c].text)
            verdicts.append(SourceLabel(c, v.label, v.p, span, reason, v.values))
        together = supports(i, cited)
        precise = [False] * (len(s.citations) - len(cited))  # markers that name no source
        for c, v in zip(cited, verdicts, strict=True):
            if not together:
                precise.append(False)
            elif v.label == SUPPORTS or len(cited) == 1:
                precise.append(True)
            else:  # irrelevant when the others support the sentence without it
                precise.append(not supports(i, tuple(k for k in cited if k != c)))
        if s.citations:
            outcome = SUPPORTED if together else "citation_not_supporting"
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


def _reason(label: str, p: float, finding: Finding, values: tuple[str, str] | None) -> str:
    if label == CONTRADICTS and values and values[1]:
        return f"the source states it otherwise: '{values[0]}' vs '{values[1]}'"
    if label == CONTRADICTS:
        return f"the source contradicts it: {finding.reason}"
    if label == SUPPORTS:
        return f"the source supports it (P(supported) {p:.2f})"
    return f"the source does not say it (P(supported) {p:.2f})"


def _evidence(sources: Sequence[Source]) -> Evidence:
    """The given sources as one evidence (several: their premises joined)."""
    if len(sources) == 1:
        return sources[0].evidence("given")
    joined = "\n\n".join(premise_of(x) for x in sources)
    return Source("+".join(x.id for x in sources), joined).evidence("given")
