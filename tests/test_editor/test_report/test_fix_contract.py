"""One contract for findings, held over every finding the suites produce: a finding's ``fix``
replaces exactly ``original[start:end]``. Applying the fixed findings' fixes gives the revision;
applying an unsure one's gives the text the judge was unsure of (its step's ``suggested``). No
reason states a clause twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editor.config import load_config
from editor.factory import Components
from editor.pipeline import Pipeline
from editor.result import EditResult

SUITES = Path(__file__).resolve().parents[3] / "training" / "eval"


def _apply(text: str, fixes: list[tuple[int, int, str]]) -> str:
    for start, end, fix in sorted(fixes, reverse=True):
        text = text[:start] + fix + text[end:]
    return text


def misfits(r: EditResult) -> list[str]:
    """What breaks the contract in ``r`` (empty: nothing)."""
    out = []
    placed = [f for f in r.findings if f.start is not None and f.end is not None]
    for f in placed:
        if r.original[f.start : f.end] != f.text:
            out.append(f"{f.text!r} is not original[{f.start}:{f.end}]")
    safe = [(f.start, f.end, f.fix or "") for f in placed if f.applicability == "safe"]
    if safe and _apply(r.original, safe) != r.revised:  # type: ignore[arg-type]
        out.append(f"the fixes give {_apply(r.original, safe)!r}, not {r.revised!r}")  # type: ignore[arg-type]
    suggested = {s.suggested for s in r.steps if s.suggested and s.before == r.original}
    for f in placed:
        if f.applicability == "unsafe" and suggested:
            if (
                f.fix != f.suggestion
                or _apply(r.original, [(f.start, f.end, f.fix or "")]) not in suggested
            ):  # type: ignore[list-item]
                out.append(f"unsure {f.text!r} -> {f.fix!r} is not what the judge was unsure of")
    for reason in [f.reason for f in r.findings] + [s.reason for s in r.steps]:
        said: list[str] = []
        for clause in reason.split("; "):
            said.append(clause)
            fact = clause.partition(": ")[2]  # "reader: X" after X says X again
            if said.count(clause) > 1 or (fact and fact in said):
                out.append(f"a reason repeats a clause: {reason!r}")
    return out


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    return Pipeline(Components(load_config("default"), progress=False))


def _rows(name: str, every: int) -> list[dict]:
    return [json.loads(x) for x in (SUITES / f"{name}.jsonl").open()][::every]


@pytest.mark.parametrize(("suite", "every"), [("documents", 1), ("statements", 3)])
def test_every_fix_replaces_exactly_its_span(pipeline, suite, every):
    broken, findings = [], 0
    for row in _rows(suite, every):
        r = pipeline.edit(row["text"], row.get("context"), row.get("evidence"))
        findings += len(r.findings)
        broken += [(row["id"], m) for m in misfits(r)]
    assert findings > 10  # the suite names words; the contract is tested on them
    assert not broken, broken[:3]


@pytest.mark.slow
@pytest.mark.parametrize("judge", ["rules", "span", "learned", "union"])
def test_every_fix_of_every_judge_replaces_exactly_its_span(judge):
    preset = "span" if judge == "span" else "default"
    sets = [f"judge.type={judge}"] if judge in ("learned", "union") else []
    pipe = Pipeline(Components(load_config(preset, sets), progress=False))
    broken = []
    for suite in ("documents", "statements", "statements_meaning"):
        for row in _rows(suite, 1):
            r = pipe.edit(row["text"], row.get("context"), row.get("evidence"))
            broken += [(suite, row["id"], m) for m in misfits(r)]
    assert not broken, broken[:3]


def test_every_fix_on_real_llm_answers_replaces_exactly_its_span(pipeline, dev_data):
    """FAVA's ChatGPT and Llama-2 sentences about subjects of the embedded corpus (their entity
    errors and right sentences), researched as a user's answer would be."""
    from retrieval.corpus import read_wiki_summaries
    from training.data.fava import fava_rows

    titles = [d.title for d in read_wiki_summaries()]
    rows = fava_rows(dev_data / "raw" / "fava" / "annotations.json", titles)
    wrong = [r for r in rows if r["wrong"]][:30]
    right = [r for r in rows if not r["wrong"]][:10]
    broken, findings = [], 0
    for row in wrong + right:
        r = pipeline.edit(row["text"], row.get("context"))
        findings += len(r.findings)
        broken += [(row["id"], m) for m in misfits(r)]
    assert findings >= 5
    assert not broken, broken[:3]
