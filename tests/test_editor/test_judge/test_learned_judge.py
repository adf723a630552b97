"""The combined judges' decisions (``editor.judge.learned``): the union's choice, and the learned
head's operating points (applied, suggested, named only), read from both judges' findings."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from editor.judge.base import Decision, Finding, Proposal, Rewrite
from editor.judge.learned import Assessed, CombinedJudge
from editor.judge.signals import DecidedEdit, Head, Logistic, edit_signals, sentence_signals
from editor.result import Flag
from editor.types import Evidence

TEXT = "Paris is big. The Eiffel Tower is 250 metres tall."
SPAN = (14, 50)
SENTENCE = TEXT[14:50]
EV = Evidence("e1", "The Eiffel Tower is 330 metres tall.", "Eiffel Tower", "t", None, "", 1.0)
RIGHT = "The Eiffel Tower is 330 metres tall."
WRONG = "The Eiffel Tower is 300 metres tall."


def _assessed(span_decision: str | None, rules_decision: str | None) -> Assessed:
    rules = Finding("contradicted", "slot: '250' vs '330'", SPAN, 0.1, 0.9, "slot", opens=True)
    span = Finding("not_stated", "the evidence does not state it", SPAN, 0.2, 0.3)
    cands = []
    if span_decision:
        flag = Flag(34, 37, "contradicted", "300")
        d = Decision(span_decision, "span says")
        span = Finding("contradicted", "'250'", SPAN, 0.0, 0.95, "span", (flag,), True,
                       Proposal(WRONG, "span", d))  # fmt: skip
        cands.append(DecidedEdit("span", WRONG, "span", d))
    if rules_decision:
        cands.append(DecidedEdit("rules", RIGHT, "substitute", Decision(rules_decision, "rules")))
    return Assessed(TEXT, EV, rules, span, tuple(cands))


def _head(right_bias: float, apply_min: float = 0.9, suggest_min: float = 0.5) -> Head:
    wrong = Logistic(("r_con",), (4.0,), -2.0)
    right = Logistic(("e_safe", "e_span"), (0.0, -10.0), right_bias)  # the span's edit: never
    return Head(wrong, right, apply_min, suggest_min)


def test_the_union_takes_the_span_judges_edit_where_it_makes_one_else_the_rules_judges():
    union = CombinedJudge(None, None)
    f = union.decide(_assessed("safe", "safe"))
    assert f.proposal.text == WRONG and f.proposal.decision.accepted and f.rule == "span"
    f = union.decide(_assessed("display", "safe"))
    assert f.proposal.text == RIGHT and f.proposal.decision.accepted and f.rule == "slot"
    assert f.flags == (Flag(34, 37, "contradicted", "330"),)  # the words the edit replaces
    f = union.decide(_assessed(None, None))
    assert f.proposal is None and f.verdict == "contradicted" and f.rule == "slot"


@pytest.mark.parametrize("bias, applicability", [(5.0, "safe"), (0.4, "unsafe"), (-3.0, "display")])
def test_the_learned_head_applies_suggests_or_names_by_its_operating_points(bias, applicability):
    learned = CombinedJudge(None, None, _head(bias))
    f = learned.decide(_assessed("safe", "display"))
    assert f.proposal.text == RIGHT  # the head prefers the rules edit, whatever its own judge said
    assert f.proposal.decision.applicability == applicability
    assert f.verdict == "contradicted" and f.opens and "P(wrong)" in f.reason
    assert f.contradicted == pytest.approx(1 / (1 + 2.718281828 ** -(4 * 0.9 - 2)), abs=1e-3)
    decision = learned.accept(Rewrite(TEXT, TEXT.replace("250", "330"), (14, 50)), f)
    assert decision == f.proposal.decision
    assert not learned.accept(Rewrite(TEXT, TEXT.replace("250", "999"), (14, 50)), f).accepted


def test_a_head_round_trips_through_json_and_a_broken_one_says_what_to_do(tmp_path):
    head = _head(1.0)
    (tmp_path / "head.json").write_text(json.dumps(head.to_json()))
    assert Head.load(tmp_path) == head
    (tmp_path / "head.json").write_text('{"wrong": {}}')
    with pytest.raises(ValueError, match="not a judge head"):
        Head.load(tmp_path)
    with pytest.raises(FileNotFoundError, match="purr train judge"):
        Head.load(tmp_path / "missing")


def test_the_signals_name_what_each_judge_said_and_what_the_edit_does():
    a = _assessed("safe", "safe")
    s = sentence_signals(a.rules, a.span)
    assert s["r_open"] == s["s_open"] == s["both_open"] == 1.0 and s["rule_slot"] == 1.0
    assert s["s_pointed"] == 1.0 and s["r_con"] == 0.9
    e = edit_signals(SENTENCE, a.candidates[1], EV.text, a.candidates)
    assert e["e_all_stated"] == 1.0 and e["e_number"] == 1.0 and e["e_span"] == 0.0
    assert edit_signals(SENTENCE, a.candidates[0], EV.text, a.candidates)["e_stated"] == 0.0


def test_the_learned_judge_names_words_against_the_evidence_not_words_it_only_does_not_state():
    learned = CombinedJudge(None, None, _head(0.0))
    unstated = Flag(34, 44, "not_supported", None)
    rules = Finding("not_stated", "the evidence does not state it", SPAN, 0.2, 0.9)
    span = Finding("not_stated", "not stated", SPAN, 0.2, 0.5, flags=(unstated,))
    f = learned.decide(Assessed(TEXT, EV, rules, span, ()))
    assert f.flags == () and f.verdict == "not_stated"  # P(wrong) 0.83, yet nothing against it
    against = Flag(34, 37, "contradicted", "330")
    span = Finding("contradicted", "'250'", SPAN, 0.0, 0.9, flags=(unstated, against))
    f = learned.decide(Assessed(TEXT, EV, rules, span, ()))
    assert f.flags == (against,) and f.verdict == "contradicted"
    given = Evidence("given-0", EV.text, "", "given", None, "", 1.0)  # the text's own source
    span = Finding("not_stated", "not stated", SPAN, 0.2, 0.5, flags=(unstated,))
    assert learned.decide(Assessed(TEXT, given, rules, span, ())).flags == (unstated,)


def test_the_learned_judges_reason_and_words_say_what_it_decided_not_what_it_overruled():
    from editor.verdicts import DECIDED, SAYS

    learned = CombinedJudge(None, None, _head(-3.0))
    quiet = Finding("contradicted", "slot: '250' vs '330'", SPAN, 0.8, 0.1, "slot", opens=True)
    span = Finding("supported", "the evidence supports it", SPAN, 0.9, 0.1)
    f = learned.decide(Assessed(TEXT, EV, quiet, span, ()))  # P(wrong) 0.17: overruled
    assert f.verdict == "supported" and f.reason.startswith(DECIDED["supported"])
    assert "slot: '250' vs '330'" in f.reason and f.named() == () and not f.opens
    named = replace(quiet, flags=(Flag(34, 37, "contradicted", "330"),))
    f = learned.decide(Assessed(TEXT, EV, named, span, ()))  # words named: never supported
    assert f.verdict == "not_stated" and f.reason.startswith(DECIDED["not_stated"]) and f.named()
    sure = replace(quiet, contradicted=0.95)
    f = learned.decide(Assessed(TEXT, EV, sure, span, ()))  # wrong, no words named: the sentence
    assert f.verdict == "contradicted" and f.named() == (Flag(*SPAN, "contradicted"),)
    for bias, applicability in ((0.4, "unsafe"), (-3.0, "display")):  # P(wrong) 0.12 both
        a = replace(_assessed("safe", "display"), rules=replace(quiet, contradicted=0.0))
        f = CombinedJudge(None, None, _head(bias)).decide(a)
        assert f.proposal.decision.applicability == applicability
        # an edit the head is unsure of is a doubt: never supported, its words named
        assert f.verdict == ("contradicted" if applicability == "unsafe" else "not_stated")
        assert f.reason.startswith(SAYS[f.verdict]) and f.named()


class _Judge:
    """A judge that finds ``found`` and applies an edit writing ``sure``."""

    def __init__(self, found: Finding, sure: str) -> None:
        self.found, self.sure = found, sure

    def assess_batch(self, items, context=None):
        return [self.found for _ in items]

    def accept(self, edit, finding, context=None):
        ok = self.sure in edit.new
        return Decision("safe" if ok else "display", "sure" if ok else "not sure")


class _Writes:
    """An editor that writes ``text`` (counting how often it is asked)."""

    name = "substitute"

    def __init__(self, text: str) -> None:
        self.text, self.asked = text, 0

    def edit_batch(self, items, context=None):
        from editor.revision.editors.base import Revision

        self.asked += len(items)
        return [Revision(self.text, "swapped", "substitute") for _ in items]


def _pair(rules_open: bool) -> tuple[Finding, Finding]:
    rules = Finding("contradicted", "slot: '250' vs '330'", SPAN, 0.1, 0.9, "slot",
                    opens=rules_open)  # fmt: skip
    flag = Flag(34, 37, "contradicted", "300")
    p = Proposal(WRONG, "copied", Decision("display", "not sure of it"))
    span = Finding("contradicted", "'250'", SPAN, 0.0, 0.9, "span", (flag,), True, p)
    return rules, span


def test_the_union_calls_no_editor_it_weighs_the_candidates_the_revision_loop_brings():
    from editor.judge.base import Candidate
    from editor.revision.reviser import Reviser

    rules, span = _pair(rules_open=True)
    union = CombinedJudge(_Judge(rules, "330"), _Judge(span, "300"))
    (f,) = union.assess_batch([(TEXT, SENTENCE, EV)])
    assert f.opens and f.parts == (rules, span) and f.proposal.text == WRONG
    first = union.choose(TEXT, f, [Candidate(WRONG, "copied", "span")])
    assert (first.index, first.decision.applicability, first.more) == (0, "display", True)
    both = [Candidate(WRONG, "copied", "span"), Candidate(RIGHT, "swapped", "substitute")]
    second = union.choose(TEXT, f, both, known=first.decisions)
    assert (second.index, second.decision.accepted, second.more) == (1, True, False)
    assert second.finding.rule == "slot" and second.finding.proposal.text == RIGHT
    editor = _Writes(RIGHT)
    revised, (step,) = Reviser([editor], union).revise(TEXT, [EV])
    assert revised == TEXT.replace("250", "330") and step.accepted and step.editor == "substitute"
    assert editor.asked == 1 and step.verdict == "contradicted"


def test_where_the_rules_gate_opens_nothing_the_editors_are_not_asked():
    from editor.revision.reviser import Reviser

    rules, span = _pair(rules_open=False)
    union = CombinedJudge(_Judge(rules, "330"), _Judge(span, "300"))
    editor = _Writes(RIGHT)
    revised, (step,) = Reviser([editor], union).revise(TEXT, [EV])
    assert revised == TEXT and editor.asked == 0 and not step.accepted
    assert step.suggested is None and step.flags == (Flag(34, 37, "contradicted", "300"),)
    quiet = Finding("not_stated", "not stated", SPAN, 0.3, 0.1)
    union = CombinedJudge(_Judge(rules, "330"), _Judge(quiet, "300"))
    (f,) = union.assess_batch([(TEXT, SENTENCE, EV)])
    assert not f.opens and f.parts == ()  # no candidate can come: decided as it is
