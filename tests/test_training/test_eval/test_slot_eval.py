"""``purr eval slots``'s measure: recall of planted errors by type, false contradictions on
correct passages, with the report's plot."""

from __future__ import annotations

from training.eval.slots import evaluate_slots, planted_sentence, plot

DATE_ROW = {
    "id": "a",
    "planted": True,
    "error_type": "date",
    "wrong": "1895",
    "text": "Gustave Eiffel's company designed and built the tower from 1887 to 1895.",
}
EIFFEL = (
    "It is named after the engineer Gustave Eiffel, whose company designed and built the tower "
    "from 1887 to 1889. The tower is 330 metres tall."
)


def test_recall_by_type_and_false_contradictions(tmp_path):
    rows = [
        DATE_ROW,
        {
            "id": "b",
            "planted": True,
            "error_type": "number",
            "wrong": "250",
            "text": "The tower is 250 metres tall.",
        },
        {"id": "c", "planted": False, "text": "The tower is 330 metres tall."},
        {"id": "d", "planted": False, "text": "Nothing here."},
    ]
    evidence = {"a": [EIFFEL], "b": [EIFFEL], "c": [EIFFEL]}  # d has none: skipped
    report = evaluate_slots(rows, evidence, progress=False)
    assert report["recall_by_type"] == {"date": 1.0, "number": 1.0}
    assert report["false_contradiction_rate"] == 0.0 and report["correct_sentences"] == 1
    assert report["skipped_rows"] == 1 and report["recall_min"] == 1.0
    assert planted_sentence(DATE_ROW) == DATE_ROW["text"]
    plot(report, tmp_path / "slots.png")
    assert (tmp_path / "slots.png").stat().st_size > 5000


def test_the_verifier_as_the_checker():
    from editor.attribution.base import build
    from editor.config import AttributionConfig
    from training.eval.slots import VerifierCheck

    rows = [
        DATE_ROW,
        {"id": "c", "planted": False, "text": "The tower is 330 metres tall."},
    ]
    check = VerifierCheck(build(AttributionConfig()))
    report = evaluate_slots(rows, {"a": [EIFFEL], "c": [EIFFEL]}, check, progress=False)
    assert report["recall_by_type"] == {"date": 1.0}
    assert report["false_contradiction_rate"] == 0.0
