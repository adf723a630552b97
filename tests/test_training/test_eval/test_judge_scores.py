"""A judge read as an attribution model (``purr eval attribution --model judge:NAME``)."""

from __future__ import annotations

import pytest

from training.eval.attribution import build_model
from training.eval.judge_scores import judge_model

TOWER = "The Eiffel Tower is 330 metres tall. It was built by Gustave Eiffel's company."


def test_a_judge_scores_pairs_as_its_findings_say():
    model = build_model("judge:rules")
    right, wrong = model.score_batch(
        [(TOWER, "The Eiffel Tower is 330 metres tall."), (TOWER, "The Eiffel Tower is 250 metres tall.")]
    )  # fmt: skip
    assert right.supported > 0.5 > wrong.supported
    assert wrong.contradicted > right.contradicted
    alone = model.score(TOWER, "The Eiffel Tower is 250 metres tall.")
    assert alone.supported == pytest.approx(wrong.supported, abs=1e-4)  # batched or alone


def test_an_unknown_judge_says_which_there_are():
    with pytest.raises(ValueError, match="rules, span, union, learned"):
        judge_model("oracle")
