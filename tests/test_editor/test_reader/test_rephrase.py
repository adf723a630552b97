"""An answer that is a larger rephrase ("X won, beating Y" where Y won): the evidence's answer
already stands in the sentence, so putting it in would double a name; the two are swapped and
suggested, never applied. And the forms a statement's value is asked in (``cloze_form``)."""

from __future__ import annotations

import pytest

from editor.config import load_config
from editor.factory import Components
from editor.judge.agreement.reader import _checkable, asked_for
from editor.pipeline import Pipeline
from editor.text.nlp import get_nlp

EVIDENCE = [
    "In the election of 1800, Thomas Jefferson was elected president, defeating the incumbent "
    "John Adams."
]


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    return Pipeline(Components(load_config("default"), progress=False))


def test_a_swapped_winner_is_suggested_swapped_and_no_name_is_doubled(pipeline):
    text = "John Adams was elected president in 1800, defeating Thomas Jefferson."
    r = pipeline.edit(text, "Who was elected president in 1800?", EVIDENCE)
    assert r.revised == text  # a suggestion, not an edit
    [found] = [f for f in r.findings if f.suggestion]
    swapped = "Thomas Jefferson was elected president in 1800, defeating John Adams"
    assert found.applicability == "unsafe" and found.suggestion == swapped
    assert text[found.start : found.end] == text[:-1]  # both names, the words between them
    assert r.report is not None and r.report.sentences[0].verdict != "supported"


def test_the_right_order_is_left_alone(pipeline):
    text = "Thomas Jefferson was elected president in 1800, defeating John Adams."
    r = pipeline.edit(text, "Who was elected president in 1800?", EVIDENCE)
    assert r.revised == text and not [f for f in r.findings if f.suggestion]


@pytest.mark.parametrize(
    ("form", "asked"),
    [
        ("cloze", "The Eiffel Tower was completed in ___ and is 330 metres tall."),
        ("question", "The Eiffel Tower was completed in when and is 330 metres tall?"),
        ("generated", "The Eiffel Tower was completed in what year and is 330 metres tall?"),
    ],
)
def test_a_statement_asks_for_its_date_in_each_form(form, asked):
    doc = get_nlp()("The Eiffel Tower was completed in 1887 and is 330 metres tall.")
    [date] = [s for s in _checkable(doc) if s.text == "1887"]
    assert asked_for(doc, date, form) == asked
