"""``purr eval reader``: SQuAD's answer metrics and a real run on a few XQuAD questions."""

from __future__ import annotations

import json
import subprocess
import sys

from editor.reader.base import Answer, Reading
from training.data.reader import QARow
from training.eval.reader import predicted, score_readings, token_f1


def test_token_f1_and_no_answer_ratio():
    assert token_f1("the Roman Empire", "Roman Empire") == 1.0
    assert token_f1("Roman Republic", "Roman Empire") == 0.5
    reading = Reading("q", (Answer("340", 0, 3, 0.4),), no_answer=0.5)
    assert predicted(reading) == ""  # "no answer" is more likely than the span
    assert predicted(reading, null_ratio=2.0) == "340"


def test_scores_count_each_kind_apart():
    rows = [
        QARow("q", "Paris is big.", (("Paris", 0),), "a", "t"),
        QARow("q", "Lyon is big.", (("Lyon", 0),), "a", "t"),
        QARow("q", "Nice is big.", (), "a", "t", "other"),
    ]
    reads = [
        Reading("q", (Answer("Paris", 0, 5, 0.9),), 0.05),
        Reading("q", (Answer("big", 8, 11, 0.2),), 0.7),  # called unanswered: F1 0
        Reading("q", (Answer("Nice", 0, 4, 0.6),), 0.3),  # answered where nothing is
    ]
    got = score_readings(rows, reads)
    assert got["f1"] == 50.0 and got["answerable_unanswered"] == 0.5
    assert got["no_answer_accuracy"] == 0.0 and got["unanswerable"] == 1


def test_eval_reader_runs_on_xquad(dev_data, tmp_path):
    out = tmp_path / "eval"
    cmd = [
        sys.executable,
        "-m",
        "serve.cli",
        "eval",
        "reader",
        "--data",
        str(dev_data),
        "--limit",
        "24",
        "--out",
        str(out),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "metrics.json").read_text())
    assert report["xquad"]["answerable"] == 24 and report["squad2_dev"]["unanswerable"] == 24
    assert report["xquad_f1"] > 40  # a trained reader, not a random pointer
    assert (out / "reader.png").stat().st_size > 1000
    sweep = report["sweep"]  # a lower null ratio calls more questions unanswered
    nulls = [p["no_answer_accuracy"] for p in sweep]
    assert nulls == sorted(nulls, reverse=True) and (out / "tradeoff.png").stat().st_size > 1000
