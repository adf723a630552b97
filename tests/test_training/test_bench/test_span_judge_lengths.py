"""``purr bench span-judge``'s pairs/s at fixed lengths: both forms of the shipped judge timed
on pairs that fill each length."""

from __future__ import annotations

from training.bench.span_judge import at_lengths


def test_both_forms_are_timed_at_each_length():
    speeds = at_lengths(None, [48, 96], n=4, runs=1, batch=4)
    assert sorted(speeds) == ["48", "96"]
    assert all(speeds[k][q] > 0 for k in speeds for q in ("none", "int8"))
