"""Nothing wrong reported supported: where the wrong value stands elsewhere in the same document
and the reader, asked the user's question, reads both (the text's value first, the right one
close behind), the answer is not proven wrong, so nothing is edited, but it is never reported
supported: unverified, the text's words named, the document's other answer suggested."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editor.config import load_config
from editor.factory import Components
from editor.pipeline import Pipeline

ROW = next(  # a product sheet where the larger model's weight stands beside this one's
    json.loads(line)
    for line in (Path(__file__).resolve().parents[3] / "training/eval/documents.jsonl").open()
    if json.loads(line)["id"] == "doc-001"
)
QUESTION, WRONG, (DOCUMENT,) = ROW["context"], ROW["text"], ROW["evidence"]


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    return Pipeline(Components(load_config("default"), progress=False))


def test_a_wrong_value_from_elsewhere_in_the_document_is_never_reported_supported(pipeline):
    r = pipeline.edit(WRONG, QUESTION, [DOCUMENT])
    assert r.revised == WRONG  # not proven wrong: nothing edited
    assert [s.verdict for s in r.report.sentences] == ["unverified"]
    (f,) = [f for f in r.findings if f.text == "4.2 kg"]
    assert (f.kind, f.fix, f.applicability) == ("not_supported", "2.8 kg", "display")
    assert "may answer" in f.reason


def test_with_doubt_off_the_same_answer_reads_as_supported(pipeline):
    off = Pipeline(
        Components(load_config("default", ["judge.reader.doubt_min=1"]), progress=False),
        attribution=pipeline.attribution,
    )
    r = off.edit(WRONG, QUESTION, [DOCUMENT])
    assert r.revised == WRONG and [s.verdict for s in r.report.sentences] == ["supported"]


def test_a_right_answer_the_document_states_plainly_stays_supported(pipeline):
    sheet = (
        "The Tessaline T4 is a compact cordless stick vacuum made by Norrbright Appliances. It "
        "weighs 2.8 kg with the standard battery fitted and runs for up to 60 minutes."
    )
    right = WRONG.replace("4.2 kg", "2.8 kg")
    r = pipeline.edit(right, QUESTION, [sheet])
    assert r.revised == right and [s.verdict for s in r.report.sentences] == ["supported"]
    assert r.findings == ()


APOLLO = (
    "Apollo 11 was the American spaceflight that first landed humans on the Moon, and the fifth "
    "crewed mission of NASA's Apollo program. The mission was crewed by Commander Neil Armstrong, "
    'Command Module Pilot Michael Collins, and Lunar Module Pilot Edwin "Buzz" Aldrin.'
)


def test_a_statement_whose_cloze_the_evidence_may_answer_otherwise_is_unverified(pipeline):
    """Without a question (``judge.reader.statements``): the name blanked and asked of the
    evidence, a different answer under ``cloze_min`` leaves the sentence unverified; asked as the
    query generator's question ("... commanded by whom?", the default form), the reader is surer:
    the name is called wrong and the fix suggested (the verifier does not prove it)."""
    wrong = "The Apollo 11 mission was commanded by Buzz Aldrin."
    on = ["judge.reader.statements=true"]
    cfg = load_config("default", on)
    asks = Pipeline(Components(cfg, progress=False), attribution=pipeline.attribution)
    r = asks.edit(wrong, None, [APOLLO])
    assert r.revised == wrong and [s.verdict for s in r.report.sentences] == ["contradicted"]
    named = [(f.fix, f.applicability) for f in r.findings if f.text == "Buzz Aldrin"]
    assert named == [("Neil Armstrong", "unsafe")]  # sure enough to name it, suggested only
    asks = Pipeline(
        Components(load_config("default", [*on, "judge.reader.cloze_form=cloze"]), progress=False),
        attribution=pipeline.attribution,
    )
    r = asks.edit(wrong, None, [APOLLO])
    assert r.revised == wrong and [s.verdict for s in r.report.sentences] == ["unverified"]
    (f,) = [f for f in r.findings if f.text == "Buzz Aldrin"]
    assert f.fix == "Neil Armstrong" and f.applicability == "display"
    right = asks.edit("The Apollo 11 mission was commanded by Neil Armstrong.", None, [APOLLO])
    assert [s.verdict for s in right.report.sentences] == ["supported"] and not right.findings
