"""auto-AIS (RARR, after Rashkin et al.'s AIS): Attr(y, A) = mean over the sentences s of y of
max over evidence e in A of P(e entails s). Sentences are decontextualised against the passage
and the dialogue context first (``editor.text.decontext``), and sentences that state nothing
checkable (questions, greetings, remarks about the conversation; ``editor.text.nlp.is_claim``) are
not applicable: they are reported but left out of the mean.

The report's evidence-to-sentence scores come from any ``AttributionModel``; ``score_text`` wraps
one text and its given evidence as a ``ScoreReport`` (``purr score``, ``POST /v1/score``).

>>> from editor.types import EntailmentScores
>>> class Overlap:  # a toy model: P(supported) = share of hypothesis words in the premise
...     def score(self, premise, hypothesis):
...         return self.score_batch([(premise, hypothesis)])[0]
...     def score_batch(self, pairs):
...         out = []
...         for p, h in pairs:
...             words = h.lower().strip(".").split()
...             s = sum(w in p.lower() for w in words) / len(words)
...             out.append(EntailmentScores(s, 0.0, 1.0 - s))
...         return out
>>> r = auto_ais("Marie Curie was a physicist. She won two Nobel Prizes. Any questions?",
...              ["Marie Curie was a physicist and chemist.", "Curie won two Nobel Prizes."],
...              Overlap())
>>> for s in r.sentences:
...     print(s.decontextualized, s.applicable, s.attribution and round(s.attribution, 3),
...           s.evidence_index)
Marie Curie was a physicist. True 1.0 0
Marie Curie won two Nobel Prizes. True 0.833 1
Any questions? False None None
>>> round(r.attribution, 4)  # (1.0 + 0.833) / 2; the question is left out
0.9167
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from editor.attribution.base import AttributionModel
from editor.attribution.verifier import judge_batch
from editor.policy import ATTRIBUTED_MIN, CONTRADICTED_MIN, attributed, refutes
from editor.text.decontext import Decontextualized, decontextualize
from editor.text.document import TextParser
from editor.text.nlp import get_nlp, is_claim
from editor.text.parts import Part, sentence_parts
from editor.types import (
    EntailmentScores,
    Evidence,
    PartAttribution,
    PassageAttribution,
    SentenceAttribution,
)
from editor.verdicts import CONTRADICTED, SUPPORTED, UNVERIFIED

if TYPE_CHECKING:
    from spacy.language import Language

    from editor.claims.slot_check import SlotObservation


def auto_ais(
    passage: str | Sequence[str],
    evidence: Sequence[str | Evidence],
    model: AttributionModel,
    *,
    context: str | None = None,
    threshold: float = ATTRIBUTED_MIN,
    nlp: Language | None = None,
    decompose: bool = False,
    parser: TextParser | None = None,
    contradicted_min: float = CONTRADICTED_MIN,
) -> PassageAttribution:
    """auto-AIS of ``passage`` (a text, or its sentences) against ``evidence``.

    Each sentence is decontextualised against the sentences before it and the dialogue
    ``context``; applicable sentences (``is_claim``) get max over the evidence of
    P(supported), the others are reported with ``attribution=None``. The passage score is
    the mean over applicable sentences, None when there are none. With no evidence every
    applicable sentence scores 0.0. ``decompose`` splits each sentence into its atomic parts
    (``editor.text.parts``; the parse made for ``is_claim``, not a second one): each part gets
    max over the evidence, the sentence the smallest of its parts'. All (evidence, claim)
    pairs go to ``model.score_batch`` in one call; the model batches them. A text passage is
    read from ``parser``'s parse of it (the one the pipeline's other stages share).
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    if isinstance(passage, str):
        parsed = (parser or TextParser(nlp)).parse(passage, context)
        decon = parsed.decontextualized
        docs = [s.doc for s in parsed.sentences]  # the one parse of each claim
    else:
        nlp = nlp or get_nlp()
        decon = _decontextualize_sentences(list(passage), context, nlp)
        docs = list(nlp.pipe([d.decontextualized for d in decon]))  # the one parse of each claim
    applicable = [is_claim(doc) for doc in docs]
    texts = [e if isinstance(e, str) else e.text for e in evidence]
    units: list[tuple[Part, ...]] = [
        (
            sentence_parts(doc)
            if decompose
            else (Part(d.decontextualized, 0, len(d.decontextualized), "main"),)
        )
        if ok
        else ()
        for d, doc, ok in zip(decon, docs, applicable, strict=True)
    ]
    pairs = [(e, part.text) for parts in units for part in parts for e in texts]
    scores, slots = judge_batch(model, pairs)  # the verifier adds its slot verdicts
    if len(scores) != len(pairs):
        raise ValueError(f"model returned {len(scores)} scores for {len(pairs)} pairs")
    records: list[SentenceAttribution] = []
    k = 0  # index of the current part's first pair in ``scores``
    for d, ok, parts in zip(decon, applicable, units, strict=True):
        if not ok:
            records.append(SentenceAttribution(d.original, d.decontextualized, False, None, None))
            continue
        judged = []
        for part in parts:
            n = len(texts)
            judged.append(
                _judge(part, scores[k : k + n], slots[k : k + n], threshold, contradicted_min)
            )
            k += n
        weakest = min(judged, key=lambda p: p.attribution)
        refuted = next((p for p in judged if p.verdict == CONTRADICTED), None)
        value = weakest.attribution
        verdict, where = (SUPPORTED, weakest.evidence_index)
        if not attributed(value, threshold):
            verdict, where = (UNVERIFIED, weakest.evidence_index)
            if refuted is not None:
                verdict, where = (CONTRADICTED, refuted.evidence_index)
        records.append(
            SentenceAttribution(
                d.original,
                d.decontextualized,
                True,
                value,
                where,
                attributed(value, threshold),
                verdict,
                tuple(judged) if len(judged) > 1 else (),
            )
        )
    values = [r.attribution for r in records if r.attribution is not None]
    passage_score = sum(values) / len(values) if values else None
    return PassageAttribution(tuple(records), passage_score, threshold)


def _judge(
    part: Part,
    mine: Sequence[EntailmentScores],
    named: Sequence[SlotObservation | None],
    threshold: float,
    contradicted_min: float = CONTRADICTED_MIN,
) -> PartAttribution:
    """One claim (or part) against each evidence: max P(supported), and when that misses the
    threshold, whether an evidence refutes it (``refutes``; the most contradicting one)."""
    supported = [s.supported for s in mine]
    best = max(range(len(supported)), key=supported.__getitem__) if supported else None
    value = supported[best] if best is not None else 0.0
    if attributed(value, threshold):
        return PartAttribution(part.text, part.start, part.end, part.kind, value, best, SUPPORTED)
    against = [i for i, s in enumerate(mine) if refutes(s, named[i], contradicted_min)]
    if against:
        where = max(against, key=lambda i: mine[i].contradicted)
        return PartAttribution(
            part.text, part.start, part.end, part.kind, value, where, CONTRADICTED
        )
    return PartAttribution(part.text, part.start, part.end, part.kind, value, best, UNVERIFIED)


def _decontextualize_sentences(
    sentences: list[str], context: str | None, nlp: Language
) -> list[Decontextualized]:
    """Sentences given one by one, each decontextualised against those before it."""
    for i, s in enumerate(sentences):
        if not isinstance(s, str):
            raise ValueError(f"sentence {i} must be a str, got {type(s).__name__}")
    return [
        decontextualize(s, " ".join(sentences[:i]), context, nlp=nlp)
        for i, s in enumerate(sentences)
    ]


@dataclass(frozen=True)
class ScoreReport:
    """auto-AIS of one text against evidence the caller gave (``purr score``, ``POST /v1/score``):
    the passage's attribution and the evidence, so each sentence can name its best evidence."""

    passage: PassageAttribution
    evidence: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        sentences = []
        for s in self.passage.sentences:
            record = asdict(s)
            i = s.evidence_index
            record["evidence"] = self.evidence[i] if i is not None else None
            sentences.append(record)
        applicable = [s for s in self.passage.sentences if s.applicable]
        return {
            "attribution": self.passage.attribution,
            "threshold": self.passage.threshold,
            "applicable_sentences": len(applicable),
            "attributable_sentences": sum(bool(s.attributable) for s in applicable),
            "sentences": sentences,
        }


def score_text(
    model: AttributionModel,
    text: str,
    evidence: Sequence[str],
    context: str | None = None,
    threshold: float = ATTRIBUTED_MIN,
    decompose: bool = False,
    contradicted_min: float = CONTRADICTED_MIN,
) -> ScoreReport:
    """auto-AIS of ``text`` against ``evidence`` (``decompose``: by atomic parts); ValueError
    for an empty text."""
    if not text.strip():
        raise ValueError("the text is empty; pass the passage to score")
    passage = auto_ais(
        text,
        list(evidence),
        model,
        context=context,
        threshold=threshold,
        decompose=decompose,
        contradicted_min=contradicted_min,
    )
    return ScoreReport(passage, tuple(evidence))
