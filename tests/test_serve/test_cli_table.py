"""The command table: every command family registers, the shared flags are the same everywhere,
and the old spellings still parse (with a deprecation warning) for one release."""

from __future__ import annotations

from pathlib import Path

import pytest

from serve.cli import COMMANDS, _modern, build_parser
from serve.cli.bench import resolve_report_file


def _subcommands(parser) -> dict:
    action = next(a for a in parser._actions if a.dest == "command")
    return action.choices


def test_every_command_family_registers_and_shares_the_config_flags():
    commands = _subcommands(build_parser())
    assert {
        "index",
        "search",
        "research",
        "config",
        "edit",
        "check",
        "score",
        "eval",
        "train",
        "data",
    } <= set(commands) and {"bench", "serve", "serve-llm", "mcp", "info"} <= set(commands)
    assert len(COMMANDS) == 11
    for name in ("index", "search", "research", "config", "edit", "check", "score"):
        flags = {o for a in commands[name]._actions for o in a.option_strings}
        assert {"--config", "--set", "-v"} <= flags, name


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (["eval", "rows.jsonl", "--out", "x"], ["eval", "edits", "rows.jsonl", "--out", "x"]),
        (["eval-attribution", "--model", "m"], ["eval", "attribution", "--model", "m"]),
        (["eval-retrieval", "--index", "i"], ["eval", "retrieval", "--index", "i"]),
    ],
)
def test_old_spellings_still_work_with_a_warning(old, new, capsys):
    assert _modern(old) == new
    assert "deprecated" in capsys.readouterr().err
    assert _modern(new) == new and capsys.readouterr().err == ""


def test_eval_is_a_group_with_the_same_out_folder_everywhere():
    parser = build_parser()
    edits = parser.parse_args(["eval", "edits", "rows.jsonl", "--out", "runs/x"])
    retrieval = parser.parse_args(["eval", "retrieval", "--index", "i", "--out", "runs/y"])
    attribution = parser.parse_args(["eval", "attribution", "--model", "m", "--out", "runs/z"])
    assert (edits.out, retrieval.out, attribution.out) == ("runs/x", "runs/y", "runs/z")
    assert attribution.device == "auto"


def test_every_trainer_takes_the_same_lora_and_device_flags(capsys):
    parser = build_parser()
    attribution = parser.parse_args(["train", "attribution", "--out", "o"])
    editor = parser.parse_args(["train", "editor", "--data", "d", "--out", "o", "--arch", "causal"])
    querygen = parser.parse_args(["train", "querygen", "--data", "d", "--out", "o", "--no-lora"])
    assert (attribution.lora, editor.lora, querygen.lora) == (False, True, False)
    assert attribution.device == editor.device == querygen.device == "auto"
    old = parser.parse_args(
        ["train", "editor", "--data", "d", "--out", "o", "--arch", "fid", "--full"]
    )
    assert old.lora is False and "--no-lora" in capsys.readouterr().err


def test_bench_out_is_a_folder_and_the_old_file_form_warns(capsys):
    parser = build_parser()

    def report(*argv: str) -> Path | None:
        return resolve_report_file(parser.parse_args(["bench", *argv]))

    assert report("cold-start", "--out", "runs/b") == Path("runs/b/bench_cold_start.json")
    assert report("batch") is None
    assert capsys.readouterr().err == ""
    assert report("batch", "--out", "runs/b/x.json") == Path("runs/b/x.json")
    assert "deprecated" in capsys.readouterr().err


def test_one_registry_lists_every_benchmark_and_evaluation():
    """``purr bench`` and ``purr eval`` offer exactly what their registries list, each module
    declaring its name, its arguments and ``main``."""
    import importlib

    from serve.bench import BENCHMARKS
    from training.eval import EVALUATIONS

    commands = _subcommands(build_parser())

    def offered(group: str) -> list[str]:
        action = next(a for a in commands[group]._actions if a.choices)
        return list(action.choices)

    assert offered("bench") == [name for name, _ in BENCHMARKS]
    assert offered("eval") == list(EVALUATIONS)
    for name, path in BENCHMARKS:
        module = importlib.import_module(path)
        assert module.BENCHMARK.name == name and callable(module.main), path
    for name in EVALUATIONS:
        module = importlib.import_module(f"training.eval.{name}")
        assert module.EVALUATION.name == name and callable(module.main), name
        assert module.EVALUATION.primary, name
