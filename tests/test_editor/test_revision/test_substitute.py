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


@pytest.mark.parametrize(
    ("evidence", "title", "text", "revised"),
    [
        pytest.param(
            "The Colosseum is an elliptical amphitheatre in the centre of the city of Rome, "
            "Italy, just east of the Roman Forum.",
            "Colosseum",
            "The Colosseum is an amphitheatre in the centre of Athens, Greece.",
            "The Colosseum is an amphitheatre in the centre of Rome, Italy.",
            id="a city and its country are replaced together",
        ),
        pytest.param(
            "Abraham Lincoln was the 16th president of the United States, serving from 1861 "
            "until his assassination in 1865.",
            "Abraham Lincoln",
            "Abraham Lincoln was the 12th president of the United States.",
            "Abraham Lincoln was the 16th president of the United States.",
            id="an ordinal keeps its article",
        ),
    ],
)
def test_the_evidence_value_takes_the_wrong_slot(editor, evidence, title, text, revised):
    assert editor.edit(text, [_ev(evidence, title)]).text == revised
