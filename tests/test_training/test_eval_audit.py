"""``purr eval audit``: accepted edits sampled for a person to check, then the checked table."""

from __future__ import annotations

import json

from helpers import run_purr


def _row(i: str, before: str, after: str, rule: str, editor: str) -> dict:
    step = {"query": "q", "evidence_id": "e1", "agrees": False, "reason": "r", "before": before,
            "after": after, "accepted": True, "rule": rule, "editor": editor,
            "verified_by": "statement"}  # fmt: skip
    evidence = {"id": "e1", "text": "The tower was built in 1889 in Paris.", "title": "Tower",
                "source": "wiki", "url": None, "query": "q", "relevance": 1.0}  # fmt: skip
    return {"id": i, "original": before, "revised": after, "context": None, "steps": [step],
            "evidence": [evidence], "answers": ["1889"]}  # fmt: skip


def test_audit_samples_accepted_edits_and_reports_the_checked_ones(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(
        json.dumps(_row("a1", "It was built in 1887.", "It was built in 1889.", "slot", "causal"))
        + "\n"
        + json.dumps(_row("a2", "It is in Rome.", "It is in Rome.", "nli", "causal"))  # no edit
        + "\n"
    )
    b.write_text(json.dumps(_row("b1", "It is in Lyon.", "It is in Paris.", "nli", "substitute")))
    out = tmp_path / "audit"
    done = run_purr("eval", "audit", str(a), str(b), "--out", str(out), "--n", "5")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(x) for x in (out / "audit.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a1", "b1"]  # one from each file in turn; a2 unedited
    assert rows[0]["evidence"] == "The tower was built in 1889 in Paris."
    assert rows[0]["right"] is None and rows[0]["before"] == "It was built in 1887."
    rows[0]["right"], rows[1]["right"] = True, False
    checked = tmp_path / "checked.jsonl"
    checked.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run_purr("eval", "audit", "--checked", str(checked), "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "metrics.json").read_text())
    assert report["checked"] == 2 and report["right"] == 0.5
    assert report["by_rule"] == {
        "nli": {"checked": 1, "right": 0},
        "slot": {"checked": 1, "right": 1},
    }
    assert (out / "audit.png").stat().st_size > 0


def test_audit_says_what_is_missing(tmp_path):
    done = run_purr("eval", "audit", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o"))
    assert done.returncode != 0 and "no such results file" in done.stderr
