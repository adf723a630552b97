"""``purr eval language`` on the real corpora: English rows with foreign names drawn from each
corpus, the statements in other languages, the figures and the plot."""

from __future__ import annotations

import json

from training.eval.language import other_rows, run


def test_language_eval_writes_rates_per_language_and_a_plot(dev_data, tmp_path):
    metrics = run(dev_data, tmp_path, n=90)
    assert metrics["english_rows"] == 90
    assert set(metrics["english_by_source"]) == {"wikipedia", "clapnq", "nq-open answer"}
    assert metrics["english_false_refusal_rate"] == 0.0, metrics["english_false_refusals"]
    assert metrics["other_rows"] == len(other_rows()) >= 80
    assert metrics["other_refusal_by_language"]["Russian"] == 1.0
    assert metrics["other_refusal_rate"] >= 0.8
    rows = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert all(r["reason"] for r in rows if r["refused"])
    assert (tmp_path / "language.png").stat().st_size > 1000
