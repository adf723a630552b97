"""The substitute editor on real spaCy and the shipped verifier: what it puts in a wrong slot."""

from __future__ import annotations

import pytest

from editor.attribution.base import build
from editor.config import AttributionConfig
from editor.revision.editors.substitute import SubstituteEditor
from editor.types import Evidence


@pytest.fixture(scope="module")
def editor():
    return SubstituteEditor(build(AttributionConfig()))


def _ev(text: str, title: str) -> Evidence:
    return Evidence("d-0", text, title, "wiki", None, "", 1.0)


def test_a_city_and_its_country_are_replaced_together(editor):
    ev = _ev(
        "The Colosseum is an elliptical amphitheatre in the centre of the city of Rome, Italy, "
        "just east of the Roman Forum.",
        "Colosseum",
    )
    rev = editor.edit("The Colosseum is an amphitheatre in the centre of Athens, Greece.", [ev])
    assert rev.text == "The Colosseum is an amphitheatre in the centre of Rome, Italy."


def test_an_ordinal_keeps_its_article(editor):
    ev = _ev(
        "Abraham Lincoln was the 16th president of the United States, serving from 1861 until "
        "his assassination in 1865.",
        "Abraham Lincoln",
    )
    rev = editor.edit("Abraham Lincoln was the 12th president of the United States.", [ev])
    assert rev.text == "Abraham Lincoln was the 16th president of the United States."
