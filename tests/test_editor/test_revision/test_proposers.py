"""The proposers the revision loop asks: the judge's own proposal first, then the editors."""

from __future__ import annotations

from editor.judge.base import Decision, Finding, Flag, Proposal, unjudged
from editor.revision.proposers import OwnProposal, _whole_fix
from editor.types import Evidence


def test_the_judges_own_proposal_is_the_first_candidate_and_none_without_one():
    p = Proposal("Built 1889", "the evidence's answer", Decision("safe", ""))
    f = Finding("contradicted", "", (0, 10), rule="reader", opens=True, proposal=p)
    got = OwnProposal().propose_batch(
        [("Built 1887", f, []), ("Built 1887", unjudged(None, _ev()), [])]
    )
    assert [[(c.text, c.source) for c in cs] for cs in got] == [[("Built 1889", "reader")], []]


def test_only_a_finding_that_names_its_whole_sentence_unanswered_gives_its_fix_whole():
    whole = (Flag(0, 10, "not_supported", "It opened in 1889."),)
    f = Finding("contradicted", "", (0, 10), rule="reader", opens=True, flags=whole)
    assert _whole_fix(f) == "It opened in 1889."
    wrong = (Flag(0, 10, "contradicted", "1889"),)
    assert _whole_fix(Finding("contradicted", "", (0, 10), rule="reader", flags=wrong)) is None


def test_with_the_gate_off_the_judge_opens_the_sentence_unchecked():
    f = unjudged((0, 5), _ev())
    assert (f.verdict, f.opens, f.rule, f.span) == ("not_stated", True, "gate-off", (0, 5))


def _ev() -> Evidence:
    return Evidence("q", "It opened in 1889.", "", "given", None, "It opened in 1889.", 1.0)
