"""Do no harm: the form checks and the verifier's say on an edit, with the shipped verifier."""

from __future__ import annotations

import pytest

from editor.attribution.base import build
from editor.config import AttributionConfig
from editor.judge.acceptance import EditAcceptance, form_problem

EVIDENCE = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
    "It is named after the engineer Gustave Eiffel, whose company designed and built the tower "
    "from 1887 to 1889."
)


@pytest.mark.parametrize(
    "before, after, context, why",
    [
        ("Yang Liu is a professor.", "Is Yang Liu a professor?", None, "question"),
        ("Cancer was produced before Crumb.", "Crumb was produced before Crumb.", None, "doubles"),
        (
            "The answer is Paris.",
            "The answer is which city hosts the tower.",
            "Tell me which city hosts the tower?",
            "pastes",
        ),
        (
            "He pleaded not guilty in Melbourne.",
            "He pleaded guilty on Thursday in Melbourne.",
            None,
            "replaces nothing",
        ),
    ],
)
def test_edits_that_break_the_sentence_are_refused(before, after, context, why):
    assert why in form_problem(before, after, context, EVIDENCE)


def test_minimal_fixes_keep_their_form():
    assert (
        form_problem("It was built from 1887 to 1895.", "It was built from 1887 to 1889.") is None
    )
    # a phrase that is in the question and in the evidence is the evidence speaking
    assert (
        form_problem(
            "It stands in Lyon.", "It stands in Paris, France.", "Where is it in France?", EVIDENCE
        )
        is None
    )


@pytest.fixture(scope="module")
def acceptance():
    return EditAcceptance(build(AttributionConfig()), min_supported=0.5)


def test_the_verifier_accepts_the_evidence_fix_and_refuses_another_wrong_one(acceptance):
    before = "The Eiffel Tower was built from 1887 to 1895."
    span = (0, len(before))
    good = "The Eiffel Tower was built from 1887 to 1889."
    bad = "The Eiffel Tower was built from 1887 to 1901."
    ok, why = acceptance.check(before, good, span, (0, len(good)), EVIDENCE)
    assert ok, why
    ok, why = acceptance.check(before, bad, span, (0, len(bad)), EVIDENCE)
    assert not ok and why.startswith("rejected")


def test_the_report_marks_what_the_evidence_contradicts(acceptance):
    from editor.report.auto_ais import auto_ais

    text = (
        "The Eiffel Tower stands on the Champ de Mars in Paris. "
        "Gustave Eiffel's company built the tower from 1887 to 1895. Do you like it?"
    )
    other = "The Louvre is the world's most-visited art museum."
    report = auto_ais(text, [other, EVIDENCE], acceptance.attribution)
    verdicts = [s.verdict for s in report.sentences]
    assert verdicts == ["supported", "contradicted", None]
    assert report.sentences[1].evidence_index == 1  # the evidence that contradicts it


def test_a_name_doubled_only_once_the_pronoun_is_resolved_is_refused(acceptance):
    before = "The Eiffel Tower is in Paris. It was built by Thomas Edison's company."
    after = "The Eiffel Tower is in Paris. It was built by Eiffel Tower's company."
    span = (30, len(before))
    ok, why = acceptance.check(before, after, span, (30, len(after)), EVIDENCE)
    assert not ok and "doubles the name 'Eiffel Tower'" in why


def test_a_revision_the_evidence_still_contradicts_is_refused(acceptance):
    evidence = (
        "The Columbia River is the largest river in the Pacific Northwest region of North America."
    )
    before = (
        "The Columbia River is the largest river in the North America region of Pacific Northwest."
    )
    wrong = "The Columbia River is the largest river in the Europe region of Pacific Northwest."
    ok, why = acceptance.check(before, wrong, (0, len(before)), (0, len(wrong)), evidence)
    assert not ok and "'Europe' vs 'North America'" in why, why
    inside = "The Columbia River is the largest river in the Canada region of Pacific Northwest."
    ok, why = acceptance.check(before, inside, (0, len(before)), (0, len(inside)), evidence)
    assert not ok, why  # Canada lies in North America: not contradicted, but not supported
    fixed = evidence
    ok, why = acceptance.check(before, fixed, (0, len(before)), (0, len(fixed)), evidence)
    assert ok, why


def test_a_negation_changes_only_where_an_evidence_sentence_states_the_other_polarity():
    from editor.judge.acceptance import negation_problem

    dropped = negation_problem(
        "The radio was built not to need mains power.",
        "The radio was built to need mains power.",
        "The radio was built in 1950. It ran on batteries.",
    )
    assert dropped is not None and "'not'" in dropped
    added = negation_problem(
        "The bridge was finished in 1890.",
        "The bridge was never finished in 1890.",
        "The bridge was finished in 1890 after six years.",
    )
    assert added is not None and "adds" in added
    assert (
        negation_problem(
            "The tower is not in Paris.",
            "The tower is in Paris.",
            "The tower is in Paris, France.",
        )
        is None
    )
    dravid = negation_problem(  # the words are there, in two statements of other things
        "No, Rahul Dravid did not kick a field goal.",
        "Rahul Dravid did kick a field goal.",
        "Rahul Dravid was a professional cricket player Field goal kick is part of football",
    )
    assert dravid is not None and "'No'" in dravid


EINSTEIN = (
    "Albert Einstein was a German-born theoretical physicist. Born in Ulm in 1879, he moved to "
    "Switzerland. He received the 1921 Nobel Prize in Physics for his services to theoretical "
    "physics."
)


def test_a_value_the_evidence_states_of_another_fact_is_refused_though_nli_and_slots_pass(
    acceptance,
):
    before = "Albert Einstein was born in 1900 in Germany."
    span = (0, len(before))
    other = "Albert Einstein was born in 1921 in Germany."  # 1921 is the Nobel Prize's year
    v = acceptance.attribution.verify(EINSTEIN, other)
    assert v.nli.supported > 0.5 and v.slot.found == "matches"  # both would approve it
    j = acceptance.judge(before, other, span, (0, len(other)), EINSTEIN, rule="slot")
    assert not j.accepted and "no evidence sentence states" in j.reason
    fixed = "Albert Einstein was born in 1879 in Germany."
    j = acceptance.judge(before, fixed, span, (0, len(fixed)), EINSTEIN, rule="slot")
    assert j.accepted, j.reason
    assert "statement" in j.proof.split("+") and "slot" not in j.proof.split("+")


SMC = (
    "Classified as a dwarf irregular galaxy, the SMC has a D25 isophotal diameter of about 5.78 "
    "kiloparsecs (18,900 light-years), and contains several hundred million stars."
)
STANFORD = (
    "He served as the eighth governor of California from 1862 to 1863 and represented the state "
    "in the United States Senate from 1885 until his death in 1893."
)


@pytest.mark.parametrize(
    "before, after, evidence, why",
    [  # three edits the verifier and the statement proof both passed
        (
            "The SMC has a D25 isophotal diameter of about 11.56 kiloparsecs (18,900 light-years).",
            "The SMC has a D25 isophotal diameter of 18,900 kiloparsecs (18,900 light-years).",
            SMC,
            "'18,900' is in 'light-years', not 'kiloparsecs'",
        ),
        (
            "He represented the state in SI Senate from 1885 until his death in 1893.",
            "He represented the state in the United States from 1885 until his death in 1893.",
            STANFORD,
            "name goes on: 'the United States Senate'",
        ),
        (
            "Its expression in SI base units is 0/s or s−1.",
            "Its expression in SI base units is 1/s/s or s−1.",
            "The hertz is an SI derived unit whose expression in SI base units is 1/s or s−1.",
            "writes '1/s/s'",
        ),
    ],
)
def test_values_must_stand_as_the_evidence_writes_them(acceptance, before, after, evidence, why):
    j = acceptance.judge(before, after, (0, len(before)), (0, len(after)), evidence, rule="slot")
    assert not j.accepted and why in j.reason


def test_the_right_value_in_its_unit_is_accepted(acceptance):
    before = "The SMC has a D25 isophotal diameter of about 11.56 kiloparsecs (18,900 light-years)."
    after = "The SMC has a D25 isophotal diameter of about 5.78 kiloparsecs (18,900 light-years)."
    j = acceptance.judge(before, after, (0, len(before)), (0, len(after)), SMC, rule="slot")
    assert j.accepted, j.reason


def test_steps_name_the_rule_the_editor_and_the_proof():
    from editor.config import AgreementConfig, RevisionConfig
    from editor.judge.agreement import build as build_agreement
    from editor.judge.rules import RulesJudge
    from editor.revision.editors.substitute import SubstituteEditor
    from editor.revision.reviser import Reviser
    from editor.types import Evidence

    attribution = build(AttributionConfig())
    agreement = build_agreement(AgreementConfig(), lambda: attribution, lambda: None)
    reviser = Reviser(
        SubstituteEditor(attribution),
        RulesJudge(agreement, EditAcceptance(attribution)),
        RevisionConfig(),
    )
    ev = Evidence("d-0", EVIDENCE, "Eiffel Tower", "wiki", None, "When was the tower built?", 1.0)
    text = "The Eiffel Tower was built from 1887 to 1895."
    revised, steps = reviser.revise(text, [ev])
    assert revised == "The Eiffel Tower was built from 1887 to 1889."
    (step,) = [s for s in steps if s.accepted]
    assert (step.rule, step.editor) == ("slot", "substitute")
    assert "statement" in step.verified_by
