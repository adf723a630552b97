"""Findings: the flags of each revision step as offsets of the caller's text, fixed or not."""

from __future__ import annotations

from editor.report.findings import findings
from editor.result import EditResult, Flag, Step

TEXT = "Rome was founded in 753 BC by Remus. It is the capital of Spain."


def step(before, after, accepted, *flags, evidence="e1"):
    return Step("q", evidence, False, "why", before, after, accepted, flags=tuple(flags))


def test_a_fixed_and_an_unfixed_flag_keep_their_offsets_in_the_original():
    fixed = TEXT.replace("Remus", "Romulus")
    steps = [
        step(TEXT, fixed, True, Flag(30, 35, "contradicted", "Romulus")),
        step(TEXT, TEXT, False, Flag(58, 63, "contradicted", None), evidence="e2"),
    ]
    a, b = findings(TEXT, steps)
    assert (a.text, a.start, a.end, a.fixed, a.fix) == ("Remus", 30, 35, True, "Romulus")
    assert (b.text, b.start, b.end, b.fixed, b.evidence_id) == ("Spain", 58, 63, False, "e2")


def test_a_flag_judged_after_an_earlier_edit_is_found_in_the_original_text():
    edited = TEXT.replace("753 BC", "the year 753 BC")  # an earlier step moved everything after
    at = edited.index("Spain")
    moved = step(TEXT, edited, True)
    (f,) = findings(TEXT, [moved, step(edited, edited, False, Flag(at, at + 5, "not_supported"))])
    assert TEXT[f.start : f.end] == "Spain" and f.kind == "not_supported" and not f.fixed
    twice = TEXT.replace("Spain.", "Spain. Spain.")  # the same words twice: each its own place
    again = step(twice, twice, False, Flag(len(twice) - 6, len(twice) - 1, "contradicted"))
    assert findings(TEXT, [step(TEXT, twice, True), again])[0].start is None  # written by an edit


def test_the_same_words_flagged_by_two_evidences_are_one_finding_fixed_by_either():
    fixed = TEXT.replace("Spain", "Italy")
    steps = [
        step(TEXT, TEXT, False, Flag(58, 63, "contradicted"), evidence="e1"),
        step(TEXT, fixed, True, Flag(58, 63, "contradicted", "Italy"), evidence="e2"),
    ]
    (f,) = findings(TEXT, steps)
    assert f.fixed and f.evidence_id == "e1"


def test_findings_travel_in_the_result_contract_and_back():
    steps = (step(TEXT, TEXT, False, Flag(30, 35, "contradicted", "Romulus")),)
    r = EditResult(
        TEXT, TEXT, None, (), (), steps, None, "unchanged", findings=findings(TEXT, steps)
    )
    data = r.to_json()
    assert (
        data["findings"][0]["text"] == "Remus" and data["steps"][0]["flags"][0]["fix"] == "Romulus"
    )
    assert EditResult.from_json(data) == r


def test_purr_edit_prints_what_it_flagged_and_did_not_fix():
    from rich.console import Console

    from serve.cli.edit_view import show

    steps = (step(TEXT, TEXT, False, Flag(58, 63, "contradicted", "Italy"), evidence="wiki:Rome"),)
    r = EditResult(
        TEXT, TEXT, None, (), (), steps, None, "unchanged", findings=findings(TEXT, steps)
    )
    console = Console(record=True, width=200)
    show(r, console)
    out = console.export_text()
    assert "flagged, not fixed: 'Spain' (contradicted, characters 58-63) by [wiki:Rome]" in out
    assert "the evidence states 'Italy'" in out


def test_a_sentence_written_twice_takes_only_its_own_verdict_by_its_span():
    from editor.report.sentence_verdicts import judged_verdicts

    text = "It is 5 m. Rome is old. It is 5 m."
    doubted = Step("q", "e1", False, "r", text, text, False, span=(24, 34), verdict="contradicted")
    backed = Step("q", "e2", True, "r", text, text, False, span=(0, 10), verdict="supported")
    assert judged_verdicts([doubted, backed], text) == {
        (24, 34): "contradicted",
        (0, 10): "supported",
    }
    fixed = text.replace("Rome is", "Rome was")  # a later edit moves the second one along
    edit = Step("q", "e3", False, "r", text, fixed, True, span=(11, 23), verdict="contradicted")
    assert judged_verdicts([doubted, edit], fixed) == {
        (25, 35): "contradicted",
        (11, 24): "supported",
    }


def test_the_chat_reply_cites_only_what_the_report_calls_supported():
    from editor.result import AttributionReport, SentenceReport
    from serve.chat.citations import cited_text

    text = "Rome is old. Rome is in Spain."
    report = AttributionReport(
        ("e1",),
        (
            SentenceReport("Rome is old.", "Rome is old.", 0.9, "e1", True, "supported"),
            SentenceReport(
                "Rome is in Spain.", "Rome is in Spain.", 0.9, "e1", True, "contradicted"
            ),
        ),
        0.9,
        0.9,
        1.0,
        0.9,
    )
    result = EditResult(text, text, None, (), (), (), report, "unchanged")
    assert cited_text(result) == "Rome is old. [1] Rome is in Spain."
