"""Both judges' signals on labelled sentences (``training.data.judge_rows``), and what each way
of deciding would have done with them: the rows a judge head is trained and measured on.

For each row the rules and span judges assess the sentence against its evidence, and the
revision loop's proposers write candidates that the judge weighs (``CombinedJudge.choose``), as
in an edit; each candidate is labelled right when it writes the row's fix (whitespace aside).
Written as JSON lines, one per row, and read back on a rerun (a killed run resumes where it
stopped).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from editor.judge.base import Candidate, Decision
from editor.judge.learned import Assessed, CombinedJudge
from editor.judge.signals import edit_signals, sentence_signals
from editor.types import Evidence

if TYPE_CHECKING:
    from editor.revision.reviser import Reviser


def same(a: str | None, b: str | None) -> bool:
    """Whether two sentences are the same but for whitespace.

    >>> same("It is 5 m .", "It is  5 m ."), same("It is 5 m.", "It is 6 m.")
    (True, False)
    """
    return a is not None and b is not None and a.split() == b.split()


def fixes(row: dict[str, Any], text: str | None) -> bool:
    """Whether ``text`` fixes a wrong row: it writes the row's fix (whitespace aside), or for a
    row with gold ``answers`` (the packaged models' answers) gives one.

    >>> fixes({"wrong": True, "fix": "It is 5 m."}, "It is  5 m.")
    True
    >>> fixes({"wrong": True, "fix": None, "answers": ["1889"]}, "It opened in 1889.")
    True
    """
    if not row["wrong"] or text is None:
        return False
    if row.get("answers"):
        from training.eval.answers_metrics import gives_gold

        return gives_gold(text, row["answers"], row.get("qa_source"))
    return same(text, row.get("fix"))


def record(row: dict[str, Any], a: Assessed) -> dict[str, Any]:
    """The signals and labels of one assessed row."""
    cands = []
    for c in a.candidates:
        cands.append(
            {
                "source": c.source,
                "text": c.text,
                "decision": c.decision.applicability,
                "signals": edit_signals(a.sentence, c, a.evidence.text, a.candidates),
                "right": fixes(row, c.text),
            }
        )
    return {
        "id": row["id"],
        "split": row["split"],
        "dataset": row.get("dataset"),
        "document": row.get("document"),
        "wrong": bool(row["wrong"]),
        "fix": row.get("fix"),
        "answers": row.get("answers"),
        "qa_source": row.get("qa_source"),
        "sentence": row["sentence"],
        "judged": a.sentence,
        "matched": same(a.sentence, row["sentence"]),
        "rules": {"verdict": a.rules.verdict, "opens": a.rules.opens, "rule": a.rules.rule},
        "span": {"verdict": a.span.verdict, "opens": a.span.opens},
        "signals": sentence_signals(a.rules, a.span),
        "candidates": cands,
    }


def assessed(
    reviser: Reviser, text: str, sentence: str, ev: Evidence, context: str | None
) -> Assessed:
    """Both judges' findings on ``text`` against ``ev`` and the candidates the judge weighed:
    the reviser's proposers asked in order while the judge asks for more (``Choice.more``)."""
    judge = reviser.judge
    assert isinstance(judge, CombinedJudge)
    (a,) = judge.pairs_batch([(text, sentence, ev)], context)
    f = judge.opened(a)
    if len(f.parts) != 2 or f.span is None:  # no candidate can come
        return a
    cands: list[Candidate] = []
    known: tuple[Decision, ...] = ()
    for p in reviser.proposers:
        (written,) = p.propose_batch([(text[f.span[0] : f.span[1]], f, [ev])], context)
        if not written:
            continue
        cands += written
        choice = judge.choose(text, f, cands, context, known)
        a, known = choice.weighed, choice.decisions
        if not choice.more:
            break
    return a


def collect(
    reviser: Reviser,
    rows: Sequence[dict[str, Any]],
    out: Path,
    progress: Callable[[Iterable], Iterable] = lambda x: x,
) -> list[dict[str, Any]]:
    """Every row's record, those already in ``out`` read back, the rest assessed and appended."""
    done: dict[str, dict[str, Any]] = {}
    if out.exists():
        for line in out.read_text("utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                done[r["id"]] = r
    todo = [r for r in rows if r["id"] not in done]
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as f:
        for row in progress(todo):
            ev = Evidence(row["document"], row["evidence"], "", "given", None, row["sentence"], 1.0)
            a = assessed(reviser, row["text"], row["sentence"], ev, row.get("context"))
            rec = record(row, a)
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            f.flush()
            done[row["id"]] = rec
    return [done[r["id"]] for r in rows]
