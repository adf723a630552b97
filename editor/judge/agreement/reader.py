"""The reader's answers as the gate's signal: with a question as context, the trained extractive
reader (``editor.reader``) answers it from the text and from the evidence. Where the wrapped
gate opens no edit, two confident answers that differ name the text's answer and propose the
evidence's, copied with its offsets: "the evidence answers 'How much does the Vela X1 weigh?'
with '2.8 kg', the text with '4.2 kg'", even where '4.2 kg' stands elsewhere in the evidence
(about the Vela X2), which reads as supported to a model of word overlap.

Answers are the same when their names match (a name and its full form, "the" and a possessive
aside), when one date range holds the other ("2019" and "14 March 2019": coarser is not a
contradiction), or when their quantities agree (units converted, 10% where the text hedges
"about"). Every probability that decides is in ``judge.reader`` (``ReaderPolicy``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from editor.claims.answers import asked_of, question_parts
from editor.claims.slots import Slot, family, typed_spans
from editor.judge.agreement.base import AgreementModel, FromBatch
from editor.judge.agreement.reader_findings import doubted, finding, unanswered
from editor.judge.answer_match import hedged_at, same_answer
from editor.judge.base import Finding
from editor.judge.reader_head import ReaderHead, observe
from editor.policy import silent
from editor.reader.base import Answer, Reading
from editor.research.querygen.questions import entity_question
from editor.text.words import is_question
from editor.types import Evidence, evidence_text
from retrieval.sentences import split_spans

WH = {"name": "who", "date": "when", "number": "how many", "ordinal": "which", "place": "where"}
"""The question word a span's kind asks with (``form="question"``); anything else: "what"."""


def as_question(sentence: str, slot: Slot, kind: str, form: str = "cloze") -> str:
    """The sentence asking for ``slot``: blanked (``cloze``) or with the question word of its
    kind in its place (``question``: a declarative question, the form a reader trained on
    SQuAD-style questions reads best).

    >>> s = "The tower was completed in 1887."
    >>> as_question(s, Slot(27, 31, "1887", "date"), "date"), as_question(
    ...     s, Slot(27, 31, "1887", "date"), "date", "question")
    ('The tower was completed in ___.', 'The tower was completed in when?')
    """
    if form == "cloze":
        return sentence[: slot.start] + "___" + sentence[slot.end :]
    asked = sentence[: slot.start] + WH.get(kind, "what") + sentence[slot.end :]
    return asked.rstrip().rstrip(".!;:") + "?"


def asked_for(doc: Any, slot: Slot, form: str) -> str:
    """The question a sentence (parsed: ``doc``) without one asks for ``slot`` in ``form``:
    ``cloze`` and ``question`` as ``as_question``; ``generated``, the entity query generator's
    question about the entity at the slot (``editor.research.querygen``), a cloze without one.
    """
    if form == "generated":
        for ent in doc.ents:
            if ent.start_char == slot.start and ent.end_char == slot.end:
                return entity_question(ent)
        form = "cloze"
    return as_question(doc.text, slot, family(slot.kind), form)


class ReaderAgreement(FromBatch):
    """``inner``'s verdicts, and with a question as context the reader's (see the module doc).
    ``reader`` is an ``editor.reader.Reader``; ``policy`` a ``ReaderPolicy``; ``verifier``, a
    loader of the attribution model whose signals a learned head trained with them reads.
    """

    def __init__(
        self, inner: AgreementModel, reader: Any, policy: Any, verifier: Callable | None = None
    ) -> None:
        self.inner = inner
        self.reader = reader
        self.policy = policy
        self.verifier = verifier
        self.head = ReaderHead.load(policy.head) if policy.decision == "head" else None
        grouped = policy.answers == "answer" or self.head is not None
        self._answers = by_answers(reader) if grouped else None

    def readings(self, items: list[tuple[str, str]], grouped: bool = True) -> list[Reading]:
        """The reader's readings; with ``answers: answer`` or the head (and ``grouped``) each
        one's answers by value, their summed probability calibrated."""
        readings = self.reader.read_batch(items)
        if self._answers is None or not grouped:
            return readings
        return [self._answers(r) for r in readings]

    def check_batch(
        self, items: Sequence[tuple[str, str, Evidence]], context: str | None = None
    ) -> list[Finding]:
        verdicts = self.inner.check_batch(items, context)
        if not is_question(context):
            return self._clozes(items, verdicts) if self.policy.statements else verdicts
        assert context is not None
        todo = [
            i
            for i, v in enumerate(verdicts)
            if not v.opens or (v.rule == "question" and not v.flags)
        ]
        opened = [  # another rule's contradictions in researched evidence (``_silent``)
            i
            for i, v in enumerate(verdicts)
            if self.policy.silent and i not in todo and not _callers(items[i][2])
        ]
        if not todo and not opened:
            return verdicts
        pairs: dict[tuple[str, str], int] = {}
        for i in todo + opened:
            text, _, e = items[i]
            for question in question_parts(asked_of(context, e.query)):
                pairs.setdefault((question, evidence_text(e)), len(pairs))
                pairs.setdefault((question, text), len(pairs))
        readings = self.readings(list(pairs))
        out = list(verdicts)
        for i in opened:  # another rule's contradiction in evidence silent on the question
            why = self._silent(items[i], verdicts[i], context, lambda pair: readings[pairs[pair]])
            if why is not None:
                out[i] = replace(verdicts[i], unsure=why)
        for i in todo:  # each part of a question read on its own; a finding that opens first
            text, _, e = items[i]
            found = [
                self._differ(
                    text,
                    question,
                    readings[pairs[(question, text)]],
                    readings[pairs[(question, evidence_text(e))]],
                    verdicts[i],
                    evidence_text(e),
                )
                for question in question_parts(asked_of(context, e.query))
            ]
            chosen = sorted((f for f in found if f is not None), key=lambda f: not f.opens)
            if chosen:
                out[i] = chosen[0]
        if not self.policy.other_sentences:
            return out
        aside = set()  # sentences of a longer answer that answer no part of the question
        for i in todo:
            text, _, e = items[i]
            span = verdicts[i].span
            if out[i] is not verdicts[i] or span is None or len(split_spans(text)) < 2:
                continue
            said = [
                readings[pairs[(q, text)]].best for q in question_parts(asked_of(context, e.query))
            ]
            if not any(a is not None and span[0] <= a.start < span[1] for a in said):
                aside.add(i)
        return self._clozes(items, out, aside) if aside else out

    def _silent(
        self,
        item: tuple[str, str, Evidence],
        verdict: Finding,
        context: str,
        read: Callable[[tuple[str, str]], Reading],
    ) -> str | None:
        """Why another rule's fix in ``item``'s sentence is only suggested (``silent``): the
        evidence was researched (not the caller's), the sentence is the text's answer to the
        question (its reading lands there) and the evidence answers no part of it; else None."""
        text, _, e = item
        if _callers(e):  # the caller's own documents: never "something else"
            return None
        asked = question_parts(asked_of(context, e.query))
        span = verdict.span
        answers_here = span is not None and any(
            (a := read((q, text)).best) is not None and span[0] <= a.start < span[1] for q in asked
        )
        if not answers_here or any(
            not silent(read((q, evidence_text(e))).no_answer, self.policy.max_no_answer)
            for q in asked
        ):
            return None
        return f"the evidence does not answer {asked[0]!r} (the reader): the fix is suggested"

    def _clozes(
        self,
        items: Sequence[tuple[str, str, Evidence]],
        verdicts: list[Finding],
        only: set[int] | None = None,
    ) -> list[Finding]:
        """Without a question: each name, number and date of a judged sentence the gate lets
        stand (of ``only``'s items), asked of the evidence as a cloze; the evidence's confident
        answer of the same kind that differs is a finding, as with a question."""
        from editor.text.nlp import get_nlp

        nlp = get_nlp()
        asked: list[tuple[int, Slot, str]] = []  # (item, the slot in the text, the cloze)
        for i, (text, _, _) in enumerate(items):
            v = verdicts[i]
            if v.opens or v.span is None or (only is not None and i not in only):
                continue
            a, b = v.span
            sentence = text[a:b]
            doc = nlp(sentence)
            for slot in _checkable(doc):
                cloze = asked_for(doc, slot, self.policy.cloze_form)
                at = Slot(a + slot.start, a + slot.end, slot.text, slot.kind)
                asked.append((i, at, cloze))
        if not asked:
            return verdicts
        grouped = self.policy.answers == "answer"  # the head reads question rows, not clozes
        readings = self.readings([(c, evidence_text(items[i][2])) for i, _, c in asked], grouped)
        kinds: dict[str, list[Slot]] = {}
        out = list(verdicts)
        for (i, slot, cloze), r in zip(asked, readings, strict=True):
            if out[i].opens:  # one finding a sentence: the first
                continue
            text, _, e = items[i]
            ev = evidence_text(e)
            best = None if silent(r.no_answer, self.policy.max_no_answer) else r.best
            if best is None or best.probability < min(self.policy.cloze_min, self.policy.doubt_min):
                continue
            if ev not in kinds:
                kinds[ev] = _checkable(nlp(ev))
            if not any(  # the answer is a value of the slot's kind in the evidence
                _same_kind(k.kind, slot.kind) and k.start <= best.start and best.end <= k.end
                for k in kinds[ev]
            ):
                continue
            if self.policy.typed and _mistyped(cloze, best, ev):
                continue  # "... with whom?" answered with a book's title
            said = Answer(slot.text, slot.start, slot.end, 1.0)
            if best.probability < self.policy.cloze_min:  # too unsure for a finding: a doubt
                judged = out[i].span
                hedged = hedged_at(text, said.start, said.text)
                if judged is not None and not same_answer(
                    said.text, best.text, text[said.end :], hedged
                ):
                    out[i] = doubted(cloze, judged, said, best, out[i])
                continue
            found = self._differ(text, cloze, Reading(cloze, (said,), 0.0), r, out[i], ev, False)
            if found is not None:
                out[i] = found
        return out

    def _differ(
        self,
        text: str,
        question: str,
        mine: Reading,
        theirs: Reading,
        verdict: Finding,
        evidence: str,
        asked: bool = True,
    ) -> Finding | None:
        p = self.policy
        said, best = mine.best, theirs.best
        if said is None or silent(mine.no_answer, p.max_no_answer):  # the text gives no answer
            return unanswered(text, question, answered(theirs, p), verdict, p.apply_min)
        if best is None or said.probability < p.min_text:
            return None
        hedged = hedged_at(text, said.start, said.text)
        after = text[said.end :]
        sentence = next(((a, b) for a, b in split_spans(text) if a <= said.start < b), None)
        if sentence is None or (verdict.span is not None and verdict.span != sentence):
            return None  # another query's sentence: its own finding names it
        if self.head is not None and asked:
            return self._decide(text, question, sentence, (mine, theirs), verdict, evidence, hedged)
        if answered(theirs, p) is None or any(
            same_answer(said.text, a.text, after, hedged)
            for a in theirs.answers
            if a is best or a.probability >= p.rival_ratio * best.probability
        ):
            other = next(
                (a for a in theirs.answers if not same_answer(said.text, a.text, after, hedged)),
                None,
            )
            if (
                other is None
                or other.probability < p.doubt_min
                or silent(theirs.no_answer, p.max_no_answer)
            ):
                return None
            return doubted(question, sentence, said, other, verdict)
        if asked and p.typed and _mistyped(question, best, evidence):
            return None  # an answer of a kind the question does not ask for is no proposal
        sure = min(best.probability, said.probability) >= p.apply_min
        proves = sure and p.proves and best.probability >= p.prove_min
        return finding(text, question, sentence, said, best, verdict, sure, proves)

    def _decide(
        self,
        text: str,
        question: str,
        sentence: tuple[int, int],
        readings: tuple[Reading, Reading],
        verdict: Finding,
        ev: str,
        hedged: bool,
    ) -> Finding | None:
        """The judge's learned decision on the evidence's answers (``editor.judge.reader_head``):
        applied, suggested, doubted or nothing."""
        assert self.head is not None
        scores = None
        if self.verifier is not None and self.head.verified:
            scores = self.verifier().score_batch
        found = observe(text, question, readings, ev, hedged, scores)
        chosen = self.head.choose(found)
        if chosen is None:
            return None
        (mine, theirs), (c, prob) = readings, chosen
        said = mine.best
        assert said is not None
        h = self.head
        if prob >= h.suggest_min:
            return finding(
                text, question, sentence, said, c.answer, verdict,
                prob >= h.apply_min, prob >= h.prove_min, prob,
            )  # fmt: skip
        typed = [x for x in found if not x.signals["fit_bad"]]
        other = max(typed, key=lambda x: x.answer.probability).answer
        if other.probability < self.policy.doubt_min or silent(
            theirs.no_answer, self.policy.max_no_answer
        ):
            return None
        return doubted(question, sentence, said, other, verdict)


def _callers(e: Evidence) -> bool:
    """Whether ``e`` is the caller's own (given evidence, a cited source), not researched."""
    return e.source in ("given", "cited")


def _same_kind(theirs: str, mine: str) -> bool:
    """Whether the evidence's value may fill the text's slot: a name of the same kind (a person
    for a person, not an organisation or a book's title), else a value of its family."""
    return theirs == mine if family(mine) == "name" else family(theirs) == family(mine)


def _mistyped(question: str, answer: Answer, evidence: str) -> bool:
    """Whether the question asks for another kind of answer than ``answer`` (its entity labels
    where it stands in ``evidence``): "Who produced ...?" answered with a year."""
    from editor.claims.answer_types import expected, fit, labels_at
    from editor.text.nlp import get_nlp

    wanted = expected(question)
    return (
        wanted is not None
        and fit(wanted, labels_at(get_nlp()(evidence), answer.start, answer.end)) == -1
    )


def by_answers(reader: Any) -> Callable[[Reading], Reading]:
    """A reading with its answers by value (``editor.reader.answers``), each one's mass
    calibrated by the reader's ``answer_calibration.json`` where it has one."""
    from pathlib import Path

    from editor.reader.answers import Calibration, by_answer

    path = Path(getattr(reader, "path", "") or ".") / "answer_calibration.json"
    cal = Calibration.load(path) if path.is_file() else None

    def grouped(r: Reading) -> Reading:
        answers = by_answer(r)
        if cal is not None:
            answers = tuple(replace(a, probability=cal(a.probability)) for a in answers)
        return Reading(r.question, answers, r.no_answer)

    return grouped


def _checkable(doc: Any) -> list[Slot]:
    """The names, numbers, dates, places and ordinals of a parsed text, outermost only."""
    slots = [s for s in typed_spans(doc) if family(s.kind) in WH]
    return [
        s
        for s in slots
        if not any(o is not s and o.start <= s.start and s.end <= o.end for o in slots)
    ]


def answered(reading: Reading, policy: Any) -> Answer | None:
    """The evidence's answer where the judge takes the reader to have found one (its best
    answer from ``policy.min_evidence``, "no answer" under ``policy.max_no_answer``), else None:
    the one reading of an evidence's answer, for the gate and for MAFE (``editor.citations``)."""
    best = reading.best
    if best is None or best.probability < policy.min_evidence:
        return None
    return None if silent(reading.no_answer, policy.max_no_answer) else best
