"""Stage timeouts: a late stage holds only its own thread, never a pool other stages need."""

import threading

import pytest

from editor.stages import StageRunner, StageTimeout


def test_late_stages_do_not_starve_later_ones():
    runner = StageRunner()
    release = threading.Event()
    for i in range(6):  # more late stages than the old shared pool had workers (4)
        with pytest.raises(StageTimeout, match=f"stage{i} timed out after 0.05 s"):
            runner.run(release.wait, 0.05, f"stage{i}")
    assert runner.running == 6  # still blocked, each on its own thread
    assert runner.run(lambda: "done", 30.0, "next") == "done"
    release.set()


def test_a_stage_error_reaches_the_caller_as_is():
    def fail():
        raise ValueError("index missing")

    with pytest.raises(ValueError, match="index missing"):
        StageRunner().run(fail, 30.0, "research")


def test_pipelines_own_their_runner(tmp_path):
    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline

    cfg = load_config("default")
    with Pipeline(Components(cfg, index_path=tmp_path)) as a, Pipeline(Components(cfg)) as b:
        assert a.stages is not b.stages
    with pytest.raises(RuntimeError, match="closed"):
        a.stages.run(lambda: 1, 1.0, "research")
