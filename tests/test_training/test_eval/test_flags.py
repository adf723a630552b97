"""``purr eval flags``: the words each judge names against the words people marked."""

from __future__ import annotations

import json
from argparse import Namespace

import pytest

from training.eval import flags

EVIDENCE = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
    "It is 330 metres tall, about the same height as an 81-storey building."
)
WRONG = "The Eiffel Tower is 500 metres tall."
RIGHT = "The Eiffel Tower is in Paris."
ROWS = [
    {"id": "w", "dataset": "bump", "text": f"{RIGHT} {WRONG}", "sentence": WRONG,
     "start": len(RIGHT) + 1, "end": len(RIGHT) + 1 + len(WRONG), "evidence": EVIDENCE,
     "wrong": True, "fix": WRONG.replace("500", "330")},
    {"id": "r", "dataset": "bump", "text": RIGHT, "sentence": RIGHT, "start": 0,
     "end": len(RIGHT), "evidence": EVIDENCE, "wrong": False, "fix": None},
    {"id": "c", "dataset": "wice", "text": WRONG, "evidence": EVIDENCE, "label": "partial",
     "unsupported": ["500"]},
]  # fmt: skip


def _args(tmp_path, rows, judges="rules"):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Namespace(
        rows=str(path), out=tmp_path / "out", judges=judges, limit=None, config="default",
        overrides=[], index=None,
    )  # fmt: skip


def test_the_wrong_value_is_named_and_the_right_sentence_is_not(tmp_path):
    report = flags.main(_args(tmp_path, ROWS))
    s = report["judges"]["rules"]
    assert s["bump"]["wrong_named"] == 1 and s["bump"]["right_with_words_named"] == 0
    assert s["wice"]["recall"] == 1.0 and s["all"]["precision"] > 0
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["n"] == 3
    assert "right with words named" in flags.render(report)


def test_bad_arguments_say_what_to_give(tmp_path):
    with pytest.raises(ValueError, match="--judges of"):
        flags.main(_args(tmp_path, ROWS, judges="oracle"))
    args = _args(tmp_path, ROWS)
    args.rows = str(tmp_path / "missing.jsonl")
    with pytest.raises(ValueError, match="not found"):
        flags.main(args)
