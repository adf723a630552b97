"""The primitives of the crash benchmarks: real ``purr`` processes started, killed after some
rows and run to the end, and the audits of what they left (rows, checkpoints)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

EDIT_FACTS = [
    ("The Eiffel Tower was completed in 1887.", "The Eiffel Tower was completed in 1889."),
    ("The Great Wall of China is in Japan.", "The Great Wall of China is in northern China."),
    ("Neil Armstrong walked on the Moon in 1969.", "Neil Armstrong walked on the Moon in 1969."),
    ("Mount Everest is 8,849 metres tall.", "Mount Everest is 8,849 metres tall."),
]


def edit_rows(n: int) -> list[dict[str, Any]]:
    """``n`` rows for ``purr edit --input``, with their evidence (no research needed)."""
    return [
        {"id": f"r{i}", "text": EDIT_FACTS[i % 4][0], "evidence": [EDIT_FACTS[i % 4][1]], "tag": i}
        for i in range(n)
    ]


def popen_purr(args: list[str], **kw: Any) -> subprocess.Popen:
    """``purr ARGS`` as a user runs it (offline), output captured."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "serve.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def run_purr(args: list[str], **kw: Any) -> subprocess.CompletedProcess:
    proc = popen_purr(args, **kw)
    stdout, stderr = proc.communicate(timeout=900)
    return subprocess.CompletedProcess(args, proc.returncode, stdout, stderr)


def newlines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def kill_after_rows(
    args: list[str], out: Path, rows: int, extra_s: float, sig: int = signal.SIGKILL
) -> subprocess.CompletedProcess:
    """Run ``purr ARGS``; once ``out`` has ``rows`` lines wait ``extra_s`` more and send ``sig``
    (unless it finished first)."""
    proc = popen_purr(args)
    deadline = time.monotonic() + 600
    while proc.poll() is None and newlines(out) < rows and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(extra_s)
    if proc.poll() is None:
        proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=600)
    return subprocess.CompletedProcess(args, proc.returncode, stdout, stderr)


def audit(path: Path, expected: list[str]) -> dict[str, int]:
    """Rows lost, doubled and unreadable in a JSONL output against the ids it should hold.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "o.jsonl"
    >>> _ = p.write_text('{"id": "a"}\\n{"id": "a"}\\n{"id"\\n')
    >>> audit(p, ["a", "b"])
    {'rows': 2, 'lost': 1, 'duplicated': 1, 'unreadable': 1}
    """
    ids, unreadable = [], 0
    data = path.read_bytes() if path.exists() else b""
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            ids.append(str(json.loads(line)["id"]))
        except (json.JSONDecodeError, KeyError, TypeError):
            unreadable += 1
    return {
        "rows": len(ids),
        "lost": len(set(expected) - set(ids)),
        "duplicated": len(ids) - len(set(ids)),
        "unreadable": unreadable,
    }


def whole_checkpoint(out: Path) -> bool:
    """Every file of the checkpoint in ``out`` is there and readable."""
    from safetensors import safe_open

    try:
        json.loads((out / "train_config.json").read_text())
        json.loads((out / "checkpoint.json").read_text())
        weights = sorted(out.glob("*.safetensors"))
        for w in weights:
            with safe_open(str(w), "pt") as f:
                list(f.keys())
        return bool(weights)
    except (OSError, ValueError):
        return False
