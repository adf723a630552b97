"""The command table: every command family registers, the shared flags are the same everywhere,
and the old spellings still parse (with a deprecation warning) for one release."""

from __future__ import annotations

from pathlib import Path

import pytest

from serve.cli import COMMANDS, _modern, build_parser
from serve.cli.bench import _report_file


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
    } <= set(commands) and {"bench", "serve", "serve-llm"} <= set(commands)
    assert len(COMMANDS) == 10
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
    assert _report_file("runs/b", "cold-start") == Path("runs/b/bench_cold_start.json")
    assert _report_file(None, "batch") is None
    assert capsys.readouterr().err == ""
    assert _report_file("runs/b/x.json", "batch") == Path("runs/b/x.json")
    assert "deprecated" in capsys.readouterr().err


def test_trainer_flags_become_the_trainers_configs():
    from serve.cli.train import _train_config
    from training.querygen_distill import QueryGenTrainConfig
    from training.train_editor import EditorTrainConfig

    parser = build_parser()
    args = parser.parse_args(["train", "editor", "--data", "d", "--out", "o", "--arch", "causal"])
    cfg = _train_config(EditorTrainConfig, args, base="packaged:gemma-3-270m")
    assert cfg.lora and cfg.device in {"cpu", "cuda"} and cfg.base == "packaged:gemma-3-270m"
    args = parser.parse_args(["train", "querygen", "--data", "d", "--out", "o", "--no-lora"])
    assert _train_config(QueryGenTrainConfig, args).lora is False
    args = parser.parse_args(
        ["train", "editor", "--data", "d", "--out", "o", "--arch", "causal", "--lr", "0"]
    )
    with pytest.raises(ValueError, match="lr"):
        _train_config(EditorTrainConfig, args, base="packaged:gemma-3-270m")
