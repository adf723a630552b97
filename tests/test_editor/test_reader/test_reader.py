"""The extractive reader (``editor.reader``) and its answers as the judge's signal
(``editor.judge.agreement.reader``): the shipped reader answers from the evidence, and two
confident different answers name the text's words and propose the evidence's."""

from __future__ import annotations

from dataclasses import replace

import pytest

from editor.config.revision import ReaderPolicy
from editor.judge.agreement.base import said
from editor.judge.agreement.reader import ReaderAgreement
from editor.judge.answer_match import same_answer
from editor.judge.base import Rewrite
from editor.reader import shared_reader
from editor.reader.base import Answer, Reading
from editor.reader.extractive import ExtractiveReader
from editor.types import Evidence

VELA = "The Vela X1 weighs 2.8 kg and runs for 60 minutes. The larger Vela X2 weighs 4.2 kg."
QUESTION = "How much does the Vela X1 weigh?"
CLAIM = "The Vela X1 weighs 4.2 kg."


@pytest.fixture(scope="module")
def reader() -> ExtractiveReader:
    return shared_reader()


def test_the_shipped_reader_answers_from_the_evidence_not_from_overlap(reader):
    got = reader.read(QUESTION, VELA)
    assert got.best is not None and got.best.text == "2.8 kg"
    assert VELA[got.best.start : got.best.end] == got.best.text  # copied, with its offsets
    assert reader.read(QUESTION, CLAIM).best.text == "4.2 kg"


def test_a_long_evidence_is_read_in_windows(reader):
    filler = " ".join(
        f"Report line {i} lists the shipping crates of the east depot." for i in range(60)
    )
    got = reader.read(
        "How many people does Lindqvist Dairy employ?",
        filler + " Lindqvist Dairy employs 340 people in Umea.",
    )
    assert got.best is not None and got.best.text.startswith("340")
    assert reader.read_batch([]) == []


def test_an_evidence_that_does_not_answer_reads_as_no_answer(reader):
    got = reader.read("Who founded the Vela company?", VELA)
    assert got.no_answer > (got.best.probability if got.best else 0)


def test_bad_settings_say_what_to_change():
    with pytest.raises(ValueError, match="max_length"):
        ExtractiveReader(max_length=40)
    with pytest.raises(ValueError, match="stride"):
        ExtractiveReader(max_length=192, stride=150)


def test_answers_compare_by_name_date_range_and_quantity():
    assert same_answer("Neil Armstrong", "Armstrong")
    assert same_answer("in 2019", "14 March 2019")  # coarser is not a contradiction
    assert same_answer("about 300", "318", hedged=True)  # "about" is 10% either way
    assert not same_answer("about 300", "450", hedged=True)
    assert not same_answer("300", "318")
    assert not same_answer("4.2 kg", "2.8 kg") and same_answer("2.8 kilograms", "2.8 kg")
    assert not same_answer("second", "first")


class Fixed:
    """A reader that answers from a table (the judge's policy is what is under test here)."""

    def __init__(self, table: dict[str, Reading]) -> None:
        self.table, self.calls = table, 0

    def read_batch(self, items):
        self.calls += 1
        return [self.table[text] for _, text in items]


class Silent:
    def check_batch(self, items, context=None):
        return [said("irrelevant", "not stated", (0, len(t))) for t, _, _ in items]


def _reading(text: str, source: str, p: float, null: float = 0.01, *more: Answer) -> Reading:
    at = source.index(text)
    return Reading(QUESTION, (Answer(text, at, at + len(text), p), *more), null)


def _gate(claim_p=0.9, ev_p=0.9, null=0.01, rival=None) -> tuple[ReaderAgreement, Fixed]:
    more = () if rival is None else (Answer("4.2 kg", VELA.index("4.2 kg"), len(VELA) - 1, rival),)
    reader = Fixed(
        {
            CLAIM: _reading("4.2 kg", CLAIM, claim_p),
            VELA: _reading("2.8 kg", VELA, ev_p, null, *more),
        }
    )
    return ReaderAgreement(Silent(), reader, ReaderPolicy(decision="rules")), reader


def _check(gate, context=QUESTION):
    return gate.check_batch(
        [(CLAIM, CLAIM, Evidence("e1", VELA, "", "given", None, QUESTION, 1.0))], context
    )[0]


def test_two_confident_different_answers_name_the_words_and_propose_the_evidences():
    f = _check(_gate()[0])
    assert f.verdict == "contradicted" and f.opens and f.rule == "reader"
    assert [(CLAIM[x.start : x.end], x.fix) for x in f.flags] == [("4.2 kg", "2.8 kg")]
    assert f.proposal.text == "The Vela X1 weighs 2.8 kg."
    assert f.proposal.decision.applicability == "safe"


def test_doubt_is_suggested_and_silence_or_ambiguity_is_no_finding():
    assert _check(_gate(ev_p=0.4)[0]).proposal.decision.applicability == "unsafe"
    assert not _check(_gate(ev_p=0.2)[0]).opens  # the reader is not sure of the evidence
    assert not _check(_gate(null=0.8)[0]).opens  # the evidence does not answer
    assert not _check(_gate(rival=0.5)[0]).opens  # it also answers the text's value
    assert not _check(_gate(claim_p=0.2)[0]).opens  # the text's own answer is unclear


def test_without_a_question_the_reader_is_not_asked():
    gate, reader = _gate()
    assert not _check(gate, context=None).opens and reader.calls == 0


def test_a_statement_s_values_are_asked_as_clozes_where_the_policy_says_so(reader):
    # the shipped reader reads the cloze as the X1's weight (not the X2's, also in the text);
    # how sure it is varies by checkpoint, so the policy is tested on a confident reading
    best = reader.read("The Vela X1 weighs ___.", VELA).best
    assert best is not None and best.text == "2.8 kg"
    policy = ReaderPolicy(statements=True, decision="rules", cloze_form="cloze")
    gate = ReaderAgreement(Silent(), Fixed({VELA: _reading("2.8 kg", VELA, 0.9)}), policy)
    ev = Evidence("e1", VELA, "", "given", None, CLAIM, 1.0)
    (f,) = gate.check_batch([(CLAIM, CLAIM, ev)], None)  # the Vela X2's weight, not the X1's
    assert f.opens and f.rule == "reader" and "'The Vela X1 weighs ___.'" in f.reason, f.reason
    assert [(CLAIM[x.start : x.end], x.fix) for x in f.flags] == [("4.2 kg", "2.8 kg")]
    right = "The Vela X1 weighs 2.8 kg."
    (g,) = gate.check_batch([(right, right, ev)], None)
    assert not g.opens  # the evidence's answer is the statement's


def test_mafe_asks_the_reader_each_span_as_a_question():
    from editor.citations.mafe import mafe
    from editor.reader import shared_reader

    source = "The Vela X1 weighs 2.8 kg and runs for 60 minutes. The larger Vela X2 weighs 4.2 kg."
    wrong = mafe("The Vela X1 weighs 4.2 kg.", source, reader=shared_reader())
    right = mafe("The Vela X1 weighs 2.8 kg.", source, reader=shared_reader())
    asked = {q.expected: q for q in wrong.precision_questions}
    assert asked["4.2 kg"].question == "The Vela X1 weighs how many?"
    assert asked["4.2 kg"].score == 0.0 and right.precision > wrong.precision, asked


def test_a_sentence_that_gives_no_answer_is_named_whole_and_rewritten_by_a_proposer():
    from editor.revision.editors.base import Revision
    from editor.revision.proposers import AnswerRewrite

    vague = "It is light enough to carry."
    gate = ReaderAgreement(
        Silent(),
        Fixed(
            {
                vague: Reading(QUESTION, (), 0.99),
                "The X1 is 2.8 kg.": Reading(QUESTION, (), 0.99),
                VELA: _reading("2.8 kg", VELA, 0.9),
            }
        ),
        ReaderPolicy(decision="rules"),
    )
    ev = Evidence("e1", VELA, "", "given", None, QUESTION, 1.0)
    (f,) = gate.check_batch([(vague, vague, ev)], QUESTION)
    assert f.opens and f.verdict == "not_stated" and f.proposal is None
    assert [(x.start, x.end, x.kind, x.fix) for x in f.flags] == [
        (0, 28, "not_supported", "2.8 kg")
    ]

    class Asked:  # records what the rewriting editor is given
        name, seen = "causal", []

        def edit_batch(self, items, context=None):
            self.seen.append((items, context))
            return [Revision("It weighs 2.8 kg, light enough to carry.", "x") for _ in items]

    ed = Asked()
    [[c]] = AnswerRewrite(ed).propose_batch([(vague, replace(f, evidence=ev), [ev])], QUESTION)
    assert c.text == "It weighs 2.8 kg, light enough to carry."
    [(([(_, [held])]), ctx)] = ed.seen
    assert held.text.startswith("The Vela X1 weighs 2.8 kg") and "4.2" not in held.text
    assert ctx == f"{QUESTION} Answer: 2.8 kg"
    stated = gate.check_batch([("The X1 is 2.8 kg.", "q", ev)], QUESTION)[0]
    assert not stated.opens  # a text that states the answer is not named for want of one


class _Unproved:
    """An acceptance that finds no proof for any edit (``refutes``: it refutes every edit)."""

    def __init__(self, refutes: bool = False) -> None:
        self.refutes = refutes

    def judge(self, *args, **kwargs):
        from editor.judge.acceptance import Judgement

        if self.refutes:
            return Judgement(False, "rejected: the evidence contradicts the revision too")
        return Judgement(False, "rejected: the revision is no better supported", unsure=True)


@pytest.mark.parametrize(
    "policy, refutes, after, applicability",
    [
        ({}, False, "The Vela X1 weighs 2.8 kg.", "safe"),  # the sure reader proves its fix
        ({"proves": False}, False, "The Vela X1 weighs 2.8 kg.", "unsafe"),  # switched off
        ({"prove_min": 0.95}, False, "The Vela X1 weighs 2.8 kg.", "unsafe"),  # not sure enough
        ({}, False, "The Vela X1 weighs 3.1 kg.", "unsafe"),  # not the reader's fix
        ({}, True, "The Vela X1 weighs 2.8 kg.", "display"),  # a refutation still rejects
    ],
)
def test_a_sure_reader_proves_its_own_fix_where_the_verifier_only_lacks_proof(
    policy, refutes, after, applicability
):
    from editor.judge.rules import RulesJudge

    gate, _ = _gate()
    gate.policy = ReaderPolicy(decision="rules", **policy)
    f = _check(gate)
    judge = RulesJudge(None, _Unproved(refutes))  # type: ignore[arg-type]
    d = judge.accept(Rewrite(CLAIM, after, (0, len(after))), f)
    assert d.applicability == applicability
    assert (d.proof == "reader") == (applicability == "safe")
