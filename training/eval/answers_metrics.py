"""Answer-level scores of ``purr eval edits`` on rows with gold answers (``purr data
real-errors``, ``training/eval/statements.jsonl``): of the wrong answers, how many an edit fixed and how many it changed without
fixing; of the right ones, how many came back unchanged and how many an edit broke."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from editor.verdicts import SUPPORTED
from training.data.real_errors import contains_answer, yes_no


def gives_gold(text: str, answers: Sequence[str], source: str | None = None) -> bool:
    """Whether ``text`` gives one of the gold ``answers`` (for yes/no sets: its first yes or no).

    >>> gives_gold("It was built in 1889.", ["1889"]), gives_gold("No, never.", ["yes"], "strategyqa")
    (True, False)
    """
    if source == "strategyqa":
        return yes_no(text) == (answers[0] == "yes")
    return any(contains_answer(text, a) for a in answers)


def edit_rule(reason: str) -> str:
    """The rule that opened the gate for an accepted step, read from its reason: ``question``
    (the answers differ), ``slot`` (a value the evidence states otherwise), ``role`` (names that
    trade places), ``negation`` or ``nli`` (the model's P(contradicted)).

    >>> edit_rule("the evidence contradicts 'It opened in 1887.': '1887' vs '1889'; causal ...")
    'slot'
    >>> edit_rule("the evidence contradicts 'X.' (P(contradicted) 0.81); answer: 'A' -> 'B': ...")
    'nli'
    """
    head = reason.split(";")[0]
    if head.startswith("the evidence answers the question"):
        return "question"
    if "trade places" in head:
        return "role"
    if "negates" in head:
        return "negation"
    if "P(contradicted)" in head:
        return "nli"
    return "slot" if " vs " in head else "other"


def edit_editor(reason: str) -> str:
    """The editor whose revision an accepted step carries (``answer``, ``causal``,
    ``substitute``, or the first word of the editor's part of the reason).

    >>> edit_editor("... (P(contradicted) 0.8); causal: no change; substitute: 'A' -> 'B': ...")
    'substitute'
    """
    parts = [p.strip() for p in reason.split(";")[1:]]
    for part in reversed(parts):
        if part.startswith("answer:"):
            return "answer"
        if part.startswith("substitute:"):
            return "substitute"
        if part.startswith("causal editor revision") or part.startswith("causal:"):
            return "causal"
    return parts[0].split()[0].rstrip(":") if parts and parts[0] else "unknown"


def step_rule(step: dict[str, Any]) -> str:
    """A step's gate rule: its ``rule`` field, or (results written before it) its reason's."""
    return step.get("rule") or edit_rule(step["reason"])


def step_editor(step: dict[str, Any]) -> str:
    """A step's editor: its ``editor`` field, or (results written before it) its reason's."""
    return step.get("editor") or edit_editor(step["reason"])


def step_proof(step: dict[str, Any]) -> str:
    """The judges that proved an accepted step's revision (``verified_by``), or ``unknown``."""
    return step.get("verified_by") or "unknown"


def edits_by(rows: Sequence[dict[str, Any]], key) -> dict[str, dict[str, int]]:
    """Accepted edits and how many gave the gold, per rule, editor or proof (``key`` reads a
    step): the steps of each edited row, counted once per row."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        if r["revised"] == r["original"]:
            continue
        right = r["wrong"] and _gold(r)
        for name in {key(s) for s in r.get("steps", []) if s.get("accepted")}:
            counts = out.setdefault(name, {"edits": 0, "right": 0})
            counts["edits"] += 1
            counts["right"] += int(right)
    return dict(sorted(out.items()))


def _gold(r: dict[str, Any]) -> bool:
    """The revision gives the gold, and the known wrong value is gone."""
    wrong_value = r.get("wrong_value")
    if wrong_value and contains_answer(r["revised"], wrong_value):
        return False
    return gives_gold(r["revised"], r["answers"], r.get("source"))


def _scores(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def share(k: int, n: int) -> float | None:
        return round(k / n, 4) if n else None

    wrong = [r for r in rows if r["wrong"]]
    right = [r for r in rows if not r["wrong"]]

    def edited(r: dict[str, Any]) -> bool:
        return r["revised"] != r["original"]

    def named(r: dict[str, Any]) -> bool:  # left wrong, but a finding names its words
        return not (edited(r) and _gold(r)) and bool(r.get("findings"))

    def suggests(r: dict[str, Any]) -> bool:  # ... and suggests a fix that gives the gold
        fixes = [f.get("suggestion") or f.get("fix") or "" for f in r.get("findings") or []]
        return named(r) and any(gives_gold(x, r["answers"], r.get("source")) for x in fixes)

    def names_value(r: dict[str, Any]) -> bool:  # ... and a finding covers the wrong value
        at = r["original"].find(r["wrong_value"])
        end = at + len(r["wrong_value"])
        return named(r) and any(f["start"] < end and at < f["end"] for f in r["findings"])

    def called_supported(r: dict[str, Any]) -> bool:
        verdicts = [s.get("verdict") for s in (r.get("report") or {}).get("sentences", [])]
        return bool(verdicts) and all(v == SUPPORTED for v in verdicts if v)

    fixed = sum(edited(r) and _gold(r) for r in wrong)
    wrong_edits = sum(edited(r) and not _gold(r) for r in wrong)
    broken = sum(edited(r) and not _gold(r) for r in right)
    right_edited = sum(edited(r) for r in right)
    edits = sum(edited(r) for r in rows)
    valued = [  # wrong rows left unfixed whose wrong words are known and in the text
        r
        for r in wrong
        if not (edited(r) and _gold(r))
        and r.get("wrong_value")
        and r["wrong_value"] in r["original"]
    ]
    return {
        "wrong_answers": len(wrong),
        "fixed": share(fixed, len(wrong)),
        "edited_not_fixed": share(wrong_edits, len(wrong)),
        "right_answers": len(right),
        "right_unchanged": share(len(right) - right_edited, len(right)),
        "right_broken": share(broken, len(right)),
        "edits": edits,
        "edits_correct": share(fixed, edits),
        "harmful_edits": wrong_edits + broken,
        "wrong_named_not_fixed": sum(named(r) for r in wrong),
        "wrong_suggested_gold": sum(suggests(r) for r in wrong),
        "unfixed_with_value": len(valued),
        "unfixed_value_named": sum(names_value(r) for r in valued),
        "wrong_called_supported": sum(
            called_supported(r) and not (edited(r) and _gold(r)) for r in wrong
        ),
    }


def answer_scores(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Scores overall (``fixed`` is primary) and by model, form, question type, source and error
    type, for the rows that carry ``answers`` and ``wrong`` and were not degraded. A wrong row
    with a ``wrong_value`` is fixed only when that value is gone as well.

    >>> rows = [{"original": "It opened in 1900.", "revised": "It opened in 1889.",
    ...          "answers": ["1889"], "wrong": True, "model": "m", "form": "short",
    ...          "qtype": "date", "source": "nq-open"},
    ...         {"original": "It is in Paris.", "revised": "It is in Paris.",
    ...          "answers": ["Paris"], "wrong": False, "model": "m", "form": "short",
    ...          "qtype": "place", "source": "nq-open"}]
    >>> s = answer_scores(rows)
    >>> s["fixed"], s["right_unchanged"], s["edits_correct"]
    (1.0, 1.0, 1.0)
    """
    rows = [
        r
        for r in rows
        if isinstance(r.get("answers"), list) and "wrong" in r and r.get("status") != "degraded"
    ]
    out: dict[str, Any] = {
        "primary": "fixed",
        **_scores(rows),
        "edits_by_rule": edits_by(rows, step_rule),
        "edits_by_editor": edits_by(rows, step_editor),
        "edits_by_proof": edits_by(rows, step_proof),
    }
    for key in ("model", "form", "qtype", "source", "error_type"):
        values = sorted({str(r.get(key)) for r in rows if r.get(key) is not None})
        out[f"by_{key}"] = {v: _scores([r for r in rows if str(r.get(key)) == v]) for v in values}
    return out
