"""Each form guard measured alone (``purr eval spans --ablate-guards``): the guards by name,
what each objects to, and the grading of the edits the span judge makes with none of them."""

from __future__ import annotations

import json

from editor.judge.span_guard import GUARDS, edit_guard, objections
from training.eval.guard_ablation import Recorder, suite_grades, tally
from training.eval.spans import is_fixed

ROW = {
    "id": "t",
    "text": "The Rhine forms part of the Swiss–Austrian border.",
    "reference": "The Rhine forms part of the Swiss–German border.",
    "wrong": True,
    "answers": ["German"],
}


def test_each_guard_is_asked_by_name_and_the_first_objection_is_the_guard_s():
    before, after = "The Mississippi is long.", "It is long."
    found = objections(before, after, "It is long.")
    assert "pronoun" in found and set(found) <= set(GUARDS)
    assert edit_guard(before, after, "") == found["pronoun"]
    assert objections("It rose in 1990.", "It rose in 1991.", "It rose in 1991.") == {}


def test_an_edit_that_fixes_the_value_but_drops_a_name_is_graded_harmful():
    from types import SimpleNamespace

    def grades(revised: str):
        def fix(sentence, evidence):  # the edit a judge would propose, shown to the recorder
            rec(sentence, revised, evidence[0])
            return SimpleNamespace(sentence=sentence, revised=revised, edited=True)

        return suite_grades([ROW], fix, rec, is_fixed, lambda t: [t], lambda r: "doc")

    rec = Recorder()
    assert grades("The Rhine forms part of the Swiss–German border.") == [("right", set())]
    ((grade, guards),) = grades("It forms part of the Swiss–German border.")
    assert grade == "harmful" and "pronoun" in guards
    assert grades("The Rhine forms part of the Swiss–French border.")[0][0] == "harmful"


def test_the_cli_measures_each_guard_on_a_suite_with_the_real_judge(tmp_path):
    suite = tmp_path / "suite.jsonl"
    row = {
        "id": "true-3",
        "text": "The Mississippi is the second-longest river in the United States.",
        "reference": "The Mississippi is the second-longest river in the United States.",
        "wrong": False,
        "answers": ["second-longest"],
        "article": "Mississippi River",
    }
    suite.write_text(json.dumps(row) + "\n")
    out = tmp_path / "out"
    from serve.cli import main

    main(
        [
            "eval",
            "spans",
            "--ablate-guards",
            "--suite",
            str(suite),
            "--out",
            str(out),
            "--data",
            str(tmp_path),
        ]
    )
    m = json.loads((out / "metrics.json").read_text())
    edits = sum(m[f"ablation:suite/edits/{g}"] for g in ("right", "harmful", "other"))
    assert m["ablation:suite/edits/right"] == 0  # a true statement: no edit is right
    for g in GUARDS:
        assert m[f"ablation:suite/{g}/stops_harmful"] <= edits
    assert "| guard |" in (out / "ablation.md").read_text()


def test_tally_counts_every_guard_and_any():
    t = tally([("harmful", {"voice"}), ("right", {"form", "voice"}), ("other", set())])
    assert t["voice/stops_harmful"] == 1 and t["voice/stops_right"] == 1
    assert t["form/stops_harmful"] == 0 and t["any/stops_right"] == 1
    assert t["edits/other"] == 1
