"""The judge seam (``editor.judge``): both judges behind one interface give the statements suites
byte for byte as they were before it; the report says what the judge decided; an edit the judge
is unsure of is suggested, not applied, unless asked; bad input gets a verdict, never an
error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editor.config import load_config
from editor.factory import Components
from editor.judge import Finding, assess
from editor.pipeline import Pipeline
from editor.report.coherence import incoherences
from editor.types import Evidence

ROOT = Path(__file__).resolve().parents[3]
EXPECTED = ROOT / "tests" / "resources" / "judge_suites_expected.jsonl"
PRESET = {"rules": "default", "span": "span", "learned": "default", "union": "default"}
EXTRA = {"learned": ("judge.type=learned",), "union": ("judge.type=union",)}

ANGKOR = (
    "Angkor Wat is noted for its monumental scale, extensive bas-reliefs, and architectural unity "
    "characteristics of Khmer architecture. Unlike most Angkorian temples, it is oriented toward "
    "the west. It is a symbol of Cambodia and appears on the Cambodian national flag."
)
ANGKOR_CLAIM = "Unlike most Angkorian temples, Angkor Wat is oriented toward the east."


def _pipeline(judge: str, *sets: str) -> Pipeline:
    cfg = load_config(PRESET[judge], [*EXTRA.get(judge, ()), *sets])
    return Pipeline(Components(cfg, progress=False))


def _expected(suite: str, judge: str) -> dict[str, str]:
    rows = [json.loads(line) for line in EXPECTED.read_text().splitlines()]
    return {r["id"]: r["revised"] for r in rows if r["suite"] == suite and r["judge"] == judge}


def _check_suite(suite: str, judge: str, every: int = 1) -> None:
    """The suite's rows (every ``every``-th) edited as before, each result coherent."""
    expected = _expected(suite, judge)
    rows = [json.loads(line) for line in (ROOT / "training" / "eval" / f"{suite}.jsonl").open()]
    rows = rows[::every]
    pipe = _pipeline(judge)
    differ, disagree = [], []
    for row in rows:
        r = pipe.edit(row["text"], row.get("context"))
        if r.revised != expected[row["id"]]:
            differ.append((row["id"], r.revised, expected[row["id"]]))
        # the step's verdict, its reason and the report say the same; a doubt is named
        disagree += [(row["id"], problem) for problem in incoherences(r)]
    assert not differ, differ[:3]
    assert not disagree, disagree[:3]


@pytest.mark.parametrize("judge", ["rules", "span"])
def test_each_judge_gives_a_third_of_the_statements_suite_as_before_and_reports_its_verdicts(
    judge,
):
    _check_suite("statements", judge, every=3)


@pytest.mark.parametrize("judge", ["learned", "union"])
def test_the_combined_judges_give_a_fifth_of_the_statements_suite_as_before_and_coherent(judge):
    _check_suite("statements", judge, every=5)


@pytest.mark.parametrize("judge", ["rules", "span"])
def test_each_judge_gives_a_third_of_the_meaning_suite_as_before(judge):
    _check_suite("statements_meaning", judge, every=3)


@pytest.mark.slow
@pytest.mark.parametrize("judge", ["rules", "span", "learned", "union"])
def test_each_judge_gives_the_statements_suite_byte_for_byte_and_coherent(judge):
    _check_suite("statements", judge)


@pytest.mark.slow
@pytest.mark.parametrize("judge", ["rules", "span", "learned", "union"])
def test_each_judge_gives_the_meaning_suite_byte_for_byte_and_reports_its_verdicts(judge):
    _check_suite("statements_meaning", judge)


def test_an_edit_the_judge_is_unsure_of_is_suggested_not_applied_unless_asked():
    from rich.console import Console

    from serve.cli.edit_view import show

    ev = [ANGKOR]
    kept = _pipeline("span").edit(ANGKOR_CLAIM, evidence=ev)
    assert kept.revised == ANGKOR_CLAIM and kept.status == "unchanged"
    (f,) = [f for f in kept.findings if f.applicability == "unsafe"]
    assert (f.text, f.suggestion, f.fixed) == ("east", "west", False)
    assert ANGKOR_CLAIM[f.start : f.end] == "east" and "not supported" in f.reason
    (st,) = [s for s in kept.steps if s.suggested]
    assert st.suggested == ANGKOR_CLAIM.replace("east", "west") and st.verdict == "contradicted"
    assert kept.report.sentences[0].verdict == "contradicted" and kept.report.sentences[0].judged
    console = Console(record=True, width=200)
    show(kept, console)
    out = console.export_text()
    assert "unsure: 'east' \u2192 'west'? [1]" in out and "--apply-unsure" in out
    applied = _pipeline("span", "judge.apply_unsure=true").edit(ANGKOR_CLAIM, evidence=ev)
    assert applied.revised == ANGKOR_CLAIM.replace("east", "west")
    span = _pipeline("span")  # one call's apply_unsure (HTTP, MCP): the same models, other policy
    asked = span.applying_unsure()
    assert asked.components is span.components and not span.editor.policy.apply_unsure
    assert asked.edit(ANGKOR_CLAIM, evidence=ev).revised == applied.revised
    assert "applied as asked" in next(s.reason for s in applied.steps if s.accepted)
    data = kept.to_json()["findings"]  # the same fields in --json, HTTP and the chat wrapper
    assert {"applicability": "unsafe", "suggestion": "west"}.items() <= data[0].items()


MARS = "Mars is the fourth planet from the Sun."
MARS_PAGE = "Mars is the fourth planet from the Sun. It is also known as the 'Red Planet'."
MERCURY_PAGE = (
    "Mercury is the first planet from the Sun and the smallest in the Solar System. It is a rocky "
    "planet with a trace atmosphere and a surface gravity slightly higher than that of Mars."
)


def test_a_contradiction_is_set_aside_where_more_relevant_evidence_supports_the_sentence():
    ev = [
        Evidence("mars#0", MARS_PAGE, "Mars", "index", None, MARS, 0.73),
        Evidence("mercury#0", MERCURY_PAGE, "Mercury (planet)", "index", None, MARS, 0.36),
    ]
    edited, _ = _pipeline("rules").editor.revise(MARS, ev, None)  # off by default
    assert edited != MARS  # the Mercury page's 'first' read as a contradiction of 'fourth'
    outranked = _pipeline("rules", "judge.outranked=true")
    kept, steps = outranked.editor.revise(MARS, ev, None)
    assert kept == MARS
    assert [s.verdict for s in steps] == ["supported", "not_stated"]
    assert "set aside: more relevant evidence (Mars, 0.73) supports it" in steps[1].reason
    ev[0] = Evidence("mars#0", MARS_PAGE, "Mars", "index", None, MARS, 0.2)  # now less relevant
    assert outranked.editor.revise(MARS, ev, None)[0] != MARS


@pytest.mark.parametrize("judge", ["rules", "span", "learned"])
def test_the_judge_gives_a_verdict_for_bad_input_never_an_error(judge):
    j = _pipeline(judge).editor.judge
    tower = Evidence(
        "e1", "The Eiffel Tower is 330 metres tall.", "Eiffel Tower", "t", None, "", 1.0
    )
    other = Evidence("e2", "La tour Eiffel mesure 330 mètres.", "Tour Eiffel", "t", None, "", 1.0)
    huge = Evidence(
        "e3", "The Eiffel Tower is in Paris. " * 3400, "Eiffel Tower", "t", None, "", 1.0
    )
    two = Evidence(
        "e4", "The tower is 300 metres tall. It is 330 metres tall.", "T", "t", None, "", 1.0
    )
    cases = [
        ("", [tower]),
        ("The Eiffel Tower is 250 metres tall.", []),
        ("The Eiffel Tower is 250 metres tall.", [other]),
        ("The Eiffel Tower is 250 metres tall. " + "It is tall. " * 700, [tower]),
        ("The Eiffel Tower is 250 metres tall.", [two]),
        ("The Eiffel Tower is 250 metres tall.", [huge]),
    ]
    for sentence, evidence in cases:
        f = assess(j, sentence, evidence, context="not a question at all")
        assert isinstance(f, Finding) and f.verdict in {
            "supported",
            "contradicted",
            "not_stated",
            "not_checkable",
        }
        assert f.reason
    assert assess(j, "", [tower]).verdict == "not_checkable"
    assert assess(j, "The Eiffel Tower is 250 metres tall.", []).verdict == "not_checkable"


def test_the_learned_judge_applies_an_edit_only_from_its_operating_point_else_suggests_it():
    import re

    from editor.judge.signals import Head, default_head

    head = Head.load(default_head())  # the shipped head
    ev = [
        "The Eiffel Tower is a lattice tower on the Champ de Mars in Paris, France. It is named "
        "after the engineer Gustave Eiffel, whose company designed and built the tower from "
        "1887 to 1889."
    ]
    r = Pipeline(Components(load_config("default", ["judge.type=learned"]), progress=False)).edit(
        "The Eiffel Tower was designed and built by Thomas Edison's company from 1887 to 1889.",
        evidence=ev,
    )
    (st,) = [s for s in r.steps if s.rule is not None and "P(edit right)" in s.reason]
    p = float(re.search(r"P\(edit right\) ([0-9.]+)", st.reason).group(1))
    if p >= head.apply_min:
        assert st.accepted and "Gustave Eiffel" in r.revised
    else:
        assert not st.accepted and r.revised == r.original
        kinds = {f.applicability for f in r.findings}
        assert ("unsafe" if p >= head.suggest_min else "display") in kinds
    assert r.report.sentences[0].judged and "P(wrong)" in st.reason


def test_the_span_judge_compares_a_questions_answer_and_suggests_the_evidences():
    madrid = Evidence(
        "madrid#0",
        "Madrid is the capital and most populous city of Spain. It had a population of over 3.4 "
        "million in the city proper in 2025.",
        "Madrid",
        "index",
        None,
        "What is the capital of Spain?",
        0.58,
    )
    text = "The capital of the country is Granada, Spain."
    question = "What is the capital of the country where the Alhambra is located?"
    reviser = _pipeline("span").editor
    judge = reviser.judge
    (f,) = judge.assess_batch([(text, text, madrid)], question)
    assert f.opens and f.rule == "question" and "'Madrid'" in f.reason
    _, (step,) = reviser.revise(text, [madrid], question)  # the answer proposes, the judge decides
    assert step.editor == "answer", step.reason
    assert (step.after if step.accepted else step.suggested) == text.replace("Granada", "Madrid")
    (alone,) = judge.assess_batch([(text, text, madrid)], None)
    assert alone.rule != "question"  # no question, no answer to compare


def test_two_threads_editing_two_texts_each_get_their_one_thread_result():
    from concurrent.futures import ThreadPoolExecutor

    pipe = _pipeline("learned")
    jobs = [
        (ANGKOR_CLAIM, [ANGKOR]),
        ("Mars is the third planet from the Sun.", [MARS_PAGE, MERCURY_PAGE]),
    ]

    def said(r):
        return r.revised, r.steps, r.report.sentences, r.findings

    alone = [said(pipe.edit(text, evidence=ev)) for text, ev in jobs]
    with ThreadPoolExecutor(2) as pool:
        for _ in range(2):
            both = list(pool.map(lambda job: said(pipe.edit(job[0], evidence=job[1])), jobs))
            assert both == alone


def test_each_step_carries_the_finding_it_was_decided_on_and_its_json_the_same_words():
    from editor.result import EditResult

    r = _pipeline("rules").edit(
        "Mars is the third planet from the Sun.", evidence=[MARS_PAGE, MERCURY_PAGE]
    )
    assert r.status == "edited" and "fourth" in r.revised, r.steps
    for s in r.steps:
        f = s.finding
        assert isinstance(f, Finding) and f.evidence is not None
        assert f.evidence.id == s.evidence_id
        assert (s.verdict, s.flags, s.agrees) == (f.verdict, f.named(), f.agrees)
        assert s.reason.startswith(f.reason)
    assert any(s.finding.contradicted is not None for s in r.steps)  # the scores behind it
    data = r.to_json()
    assert all("finding" not in s for s in data["steps"])  # the contract is unchanged
    back = EditResult.from_json(json.loads(json.dumps(data)))
    assert back.steps == r.steps and all(s.finding is None for s in back.steps)
