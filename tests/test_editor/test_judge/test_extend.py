"""The how-to's proposer and judge (docs/pages/how-to/extend.md), run as written: one file and
one registry line each, selected by config, with the pipeline untouched."""

from __future__ import annotations

import re
from pathlib import Path

from editor.config import load_config
from editor.factory import Components
from editor.judge import available as judges
from editor.pipeline import Pipeline
from editor.revision.editors import available as editors

HOWTO = Path(__file__).resolve().parents[3] / "docs" / "pages" / "how-to" / "extend.md"
TEXT = "The Eiffel Tower was completed in 1899."
EVIDENCE = ["The Eiffel Tower was completed in 1889. It stands on the Champ de Mars in Paris."]


def _load_howto() -> None:
    blocks = re.findall(r"```python\n(.*?)```", HOWTO.read_text("utf-8"), re.S)
    assert len(blocks) == 2
    for code in blocks:
        name = re.search(r"register\(\"(\w+)\"", code).group(1)
        if name not in set(judges()) | set(editors()):
            exec(compile(code, str(HOWTO), "exec"), {})


def _edit(*sets: str):
    cfg = load_config("default", ["editor.type=closest", "editor.fallback=null", *sets])
    return Pipeline(Components(cfg, progress=False)).edit(TEXT, evidence=EVIDENCE)


def test_the_howtos_proposer_proposes_and_its_judge_only_suggests():
    _load_howto()
    applied = _edit()  # the rules judge applies the closest sentence: a one-character fix
    assert applied.revised == TEXT.replace("1899", "1889")
    assert any(s.accepted and s.editor == "closest" for s in applied.steps)
    suggested = _edit("judge.type=cautious")
    assert suggested.revised == TEXT and suggested.status == "unchanged"
    (step,) = [s for s in suggested.steps if s.suggested]
    assert "cautious: suggested" in step.reason and step.verdict == "contradicted"
    assert any(f.applicability == "unsafe" for f in suggested.findings)
    assert suggested.report.sentences[0].verdict == "contradicted"
