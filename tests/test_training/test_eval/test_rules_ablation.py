"""``purr eval rules``: the rules judge with each rule family off, on rows it judges for real."""

from __future__ import annotations

import json
from argparse import Namespace

import pytest

from editor.config import load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from training.eval import rules

EVIDENCE = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
    "It is 330 metres tall, about the same height as an 81-storey building."
)


def _row(i: str, sentence: str, wrong: bool, fix: str | None = None) -> dict:
    return {
        "id": i,
        "dataset": "bump",
        "document": "eiffel",
        "text": sentence,
        "sentence": sentence,
        "evidence": EVIDENCE,
        "wrong": wrong,
        "fix": fix,
    }


ROWS = [
    _row("w", "The Eiffel Tower is 500 metres tall.", True, "The Eiffel Tower is 330 metres tall."),
    _row("r", "The Eiffel Tower is 330 metres tall.", False),
]


def test_a_rule_family_off_changes_only_what_it_decides(tmp_path):
    pipeline = Pipeline(
        Components(load_config("default", ["judge.rules_off=[slot]"]), progress=False)
    )
    gate = pipeline.editor.judge.gate
    while hasattr(gate, "inner"):  # under the question and reader wrappers
        gate = gate.inner
    assert gate.off == {"slot"}  # the config reaches the gate
    run = rules.RulesRun(pipeline.editor)
    found = rules.ablate(run, ROWS)
    base = found["settings"]["none"]
    assert base[0]["rule"] == "slot" and base[0]["applied"] == ROWS[0]["fix"]
    assert base[1] == {"rule": None, "applied": None}
    c = found["counts"]
    assert c["none"] == {"fixed": 1, "harmful": 0, "right_unchanged": 1, "right": 1}
    assert found["settings"]["slot"][0]["rule"] != "slot"  # judged again without it
    assert found["settings"]["role"] == base  # a family that did not decide changes nothing
    assert c["statement"]["fixed"] == 1
    assert rules.verdict(c)["role"] == "no cost"
    assert getattr(gate, "inner", gate).off == frozenset()  # the run leaves the judge as it was


def test_the_command_writes_its_table(tmp_path):
    path = tmp_path / "dev.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS[1:]))
    args = Namespace(
        rows=str(path),
        out=tmp_path / "out",
        datasets="bump",
        limit=None,
        config="default",
        overrides=[],
        index=None,
    )
    report = rules.main(args)
    assert report["n"] == 1 and report["counts"]["none"]["right_unchanged"] == 1
    assert (tmp_path / "out" / "ablation.png").stat().st_size > 0
    assert "right unchanged" in rules.render(report)
    args.datasets = "fava"
    with pytest.raises(ValueError, match=r"no rows of \['fava'\]"):
        rules.main(args)
