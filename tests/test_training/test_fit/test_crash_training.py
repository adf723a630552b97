"""``purr train editor`` killed with SIGKILL at seeded random moments: the output folder is
always absent or a whole, loadable checkpoint (written beside it and swapped in), and SIGTERM
stops after the step in hand with the best checkpoint kept."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time

import pytest
from helpers import save_tiny_t5

# the CLI as a subprocess
pytestmark = pytest.mark.integration


def _words(path) -> list[str]:
    words = {"claim", "evidence", ":", "."}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        for t in [r["clean"], r["corrupted"], *r["evidence_pos"], *r["evidence_neg"]]:
            words.update(re.findall(r"\w+|[^\w\s]", t.lower()))
    return ["<pad>", "</s>", "<unk>", *sorted(words - {"<pad>", "</s>", "<unk>"})]


def _train(rows, base, out, steps: int = 40) -> list[str]:
    return [sys.executable, "-m", "serve.cli", "train", "editor", "--arch", "fid"] + [
        *("--base", str(base), "--data", str(rows), "--out", str(out), "--device", "cpu"),
        *("--max-steps", str(steps), "--eval-every", "2", "--patience", "1000"),
        *("--batch-size", "4", "--warmup-steps", "0", "--dev-share", "0.3", "--lr", "0.003"),
    ]


def _popen(cmd: list[str]) -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _whole_checkpoint(out) -> int:
    """The step of the checkpoint in ``out``; fails when any file of it is missing or cut."""
    from safetensors import safe_open

    assert json.loads((out / "adapter_config.json").read_text())["peft_type"] == "LORA"
    with safe_open(str(out / "adapter_model.safetensors"), "pt") as f:
        assert len(list(f.keys())) > 0
    assert json.loads((out / "train_config.json").read_text())["arch"] == "fid"
    return int(json.loads((out / "checkpoint.json").read_text())["step"])


def _first_checkpoint(proc: subprocess.Popen, out) -> float:
    """Wait until a training run has saved its first resumable checkpoint; when that was."""
    while not (out / "resume").exists():
        assert proc.poll() is None, "the run ended before its first checkpoint"
        time.sleep(0.02)
    return time.monotonic()


def _curve(out) -> list[dict]:
    return json.loads((out / "metrics.json").read_text())["curve"]


@pytest.mark.parametrize(
    "seeds", [range(1), pytest.param(range(1, 3), marks=pytest.mark.slow)], ids=["0", "1-2"]
)
def test_training_killed_at_random_moments_keeps_a_whole_checkpoint_and_resumes_exactly(
    seeds, rows_file, tmp_path
):
    rows = rows_file[0]
    base = save_tiny_t5(tmp_path / "t5", _words(rows), d_model=32, init=1.0)
    full = _popen(_train(rows, base, tmp_path / "full"))
    # the kills are timed from the first checkpoint, not from the process start, so that they
    # land mid-run however long this machine takes to import and load
    started = _first_checkpoint(full, tmp_path / "full")
    _, err = full.communicate(timeout=600)
    took = time.monotonic() - started
    assert full.returncode == 0, err
    assert not (tmp_path / "full" / "resume").exists()  # a finished run keeps no resume state
    resumed = 0
    for seed in seeds:  # each kill lands mid-run (timed from the first checkpoint)
        rng = random.Random(seed)
        out = tmp_path / f"run{seed}"
        proc = _popen(_train(rows, base, out))
        _first_checkpoint(proc, out)
        time.sleep(rng.uniform(0.0, 0.6) * took)
        proc.kill()
        proc.communicate()
        if not out.exists():  # killed before the first checkpoint: nothing at all
            continue
        _whole_checkpoint(out)
        if (out / "resume").exists():  # unless the kill came after the run had ended
            again = _popen([*_train(rows, base, out), "--resume"])
            _, err = again.communicate(timeout=600)
            assert again.returncode == 0, err
            resumed += 1
            # the same steps, the same data order and random state: the same run
            assert _curve(out) == _curve(tmp_path / "full")
    assert resumed, "no kill landed mid-run; nothing was tested"
    # the same command afterwards overwrites the folder and leaves no temporary sibling
    killed = tmp_path / f"run{seeds[0]}"
    again = subprocess.run(_train(rows, base, killed, 4), capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert _whole_checkpoint(killed) >= 2
    assert [p.name for p in tmp_path.glob(".run*")] == []
    gone = subprocess.run(
        [*_train(rows, base, tmp_path / "full"), "--resume"], capture_output=True, text=True
    )
    assert gone.returncode == 2 and "nothing to resume" in gone.stderr


def test_sigterm_stops_training_with_the_best_checkpoint(rows_file, tmp_path):
    rows = rows_file[0]
    base = save_tiny_t5(tmp_path / "t5", _words(rows), d_model=32, init=1.0)
    out = tmp_path / "out"
    proc = _popen(_train(rows, base, out, steps=100_000))
    deadline = time.monotonic() + 300
    while not (out / "checkpoint.json").exists() and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "interrupted by SIGTERM" in stderr and "--resume" in stderr
    assert json.loads(stdout)["interrupted"] is True
    assert _whole_checkpoint(out) >= 2
    assert (out / "metrics.json").is_file() and (out / "resume" / "state.json").is_file()
    changed = subprocess.run(
        [*_train(rows, base, out, steps=100_000), "--resume", "--lr", "0.01"],
        capture_output=True,
        text=True,
    )
    assert changed.returncode == 2 and "lr=0.003 (now 0.01)" in changed.stderr
    stopped_at = json.loads((out / "resume" / "state.json").read_text())["loop"]["step"]
    assert stopped_at >= _whole_checkpoint(out)  # the steps after the last evaluation are kept
    more = subprocess.run(
        [*_train(rows, base, out, steps=stopped_at + 3), "--resume"], capture_output=True, text=True
    )
    assert more.returncode == 0, more.stderr
    assert _curve(out)[-1]["step"] == stopped_at + 3 and not (out / "resume").exists()


def test_training_on_a_full_disk_keeps_the_checkpoint_there_and_says_so(rows_file, tmp_path):
    from helpers import fill, small_filesystem

    rows = rows_file[0]
    base = save_tiny_t5(tmp_path / "t5", _words(rows), d_model=32, init=1.0)
    with small_filesystem(tmp_path / "disk", 8192) as disk:
        out = disk / "editor"
        first = subprocess.run(_train(rows, base, out, 4), capture_output=True, text=True)
        assert first.returncode == 0, first.stderr
        step = _whole_checkpoint(out)
        before = sorted((p.name, p.stat().st_size) for p in out.iterdir())
        filler = fill(disk, 20_000)
        full = subprocess.run(_train(rows, base, out, 6), capture_output=True, text=True)
        assert full.returncode == 2, full.stderr
        lines = [x for x in full.stderr.splitlines() if x.startswith("purr train: error:")]
        assert len(lines) == 1 and "Traceback" not in full.stderr, full.stderr
        assert str(out) in lines[0] and "no space left" in lines[0] and "free" in lines[0]
        assert _whole_checkpoint(out) == step  # the checkpoint that was there, whole
        assert sorted((p.name, p.stat().st_size) for p in out.iterdir()) == before
        assert sorted(p.name for p in disk.iterdir()) == ["editor", "filler"]
        filler.unlink()
        again = subprocess.run(_train(rows, base, out, 6), capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        assert _whole_checkpoint(out) >= step


def test_out_appears_only_whole_even_when_stopped_before_the_first_evaluation(rows_file, tmp_path):
    import threading

    rows = rows_file[0]
    base = save_tiny_t5(tmp_path / "t5", _words(rows), d_model=32, init=1.0)
    out = tmp_path / "out"
    cmd = _train(rows, base, out, steps=100_000)
    cmd[cmd.index("--eval-every") + 1] = "100000"  # no evaluation, so no checkpoint, comes
    proc = _popen(cmd)
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(lambda: proc.stderr.read(1), "")))
    reader.start()
    deadline = time.monotonic() + 300
    while not re.search(r"train[^\n]*\|\s*[1-9]\d*/", "".join(seen)):  # a few steps trained
        assert proc.poll() is None and time.monotonic() < deadline, "".join(seen)
        assert not out.exists()  # training, no checkpoint yet: nothing at --out at all
        time.sleep(0.05)
    assert not out.exists()
    proc.send_signal(signal.SIGTERM)
    stdout = proc.stdout.read()
    proc.wait(timeout=300)
    reader.join(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, "".join(seen)
    assert json.loads(stdout)["interrupted"] is True
    step = _whole_checkpoint(out)  # the weights so far, loadable, marked unevaluated
    assert step >= 1 and json.loads((out / "checkpoint.json").read_text())["dev_loss"] is None
    more = [
        *cmd[: cmd.index("--max-steps") + 1],
        str(step + 2),
        *cmd[cmd.index("--max-steps") + 2 :],
    ]
    done = subprocess.run([*more, "--resume"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert _whole_checkpoint(out) == step + 2 and not (out / "resume").exists()
    assert _curve(out)[-1]["step"] == step + 2
