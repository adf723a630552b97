"""Each form guard of the span editor measured alone (``purr eval spans --ablate-guards``).

The span judge fixes with no guard; every edit it would make is shown to each guard of
``editor.judge.span_guard.GUARDS``, and graded against the gold: on the statements suites
an edit is right where it fixes a wrong statement by itself and drops no word the reference
keeps ("the Rhine" -> "it" is not right, whatever else it fixes), any other edit harmful;
on SummEdits' dev rows an edit that gives the human's own sentence is right, an edit of a
consistent sentence harmful, other edits of an inconsistent one "other". A guard earns its
place where it stops more harmful edits than right ones.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from editor.verdicts import CONTRADICTED


class Recorder:
    """A guard that objects to nothing and remembers what each guard would have said."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], dict[str, str]] = {}

    def __call__(self, before: str, after: str, evidence: str) -> str | None:
        from editor.judge.span_guard import objections

        self.seen[(before, after)] = objections(before, after, evidence)
        return None

    def of(self, before: str, after: str) -> set[str]:
        return set(self.seen.get((before, after), {}))


def tally(graded: Iterable[tuple[str, set[str]]]) -> dict[str, float]:
    """``(grade, guards that object)`` per edit -> edits per grade, and per guard (and all
    together) the edits of each grade it stops.

    >>> t = tally([("right", set()), ("harmful", {"form"}), ("harmful", {"form", "type"})])
    >>> t["edits/harmful"], t["form/stops_harmful"], t["type/stops_right"], t["any/stops_harmful"]
    (2.0, 2.0, 0.0, 2.0)
    """
    from editor.judge.span_guard import GUARDS

    c: Counter[str] = Counter()
    for grade, guards in graded:
        c[f"edits/{grade}"] += 1
        for g in GUARDS:
            c[f"{g}/stops_{grade}"] += g in guards
        c[f"any/stops_{grade}"] += bool(guards)
    grades = ("right", "harmful", "other")
    keys = [f"edits/{x}" for x in grades] + [
        f"{g}/stops_{x}" for g in [*GUARDS, "any"] for x in grades
    ]
    return {k: float(c[k]) for k in keys}


def suite_grades(
    rows: list[dict], fix: Callable, recorder: Recorder, is_fixed, split, article
) -> list[tuple[str, set[str]]]:
    """Grades of the edits made on statements-suite rows (see the module doc)."""
    out = []
    for row in rows:
        doc = article(row)
        if doc is None:
            continue
        for f in [fix(s, [doc]) for s in split(row["text"]) or [row["text"]]]:
            if not f.edited:
                continue
            alone = row["text"].replace(f.sentence, f.revised, 1)
            kept = _words(row["reference"])
            dropped = (_words(f.sentence) - _words(f.revised)) & kept
            right = row["wrong"] and is_fixed(row, alone) and not dropped
            out.append(("right" if right else "harmful", recorder.of(f.sentence, f.revised)))
    return out


def _words(text: str) -> set[str]:
    import re

    return {w.lower() for w in re.findall(r"\w+", text)}


def summedits_grades(rows, fix: Callable, recorder: Recorder) -> list[tuple[str, set[str]]]:
    """Grades of the edits made on SummEdits' dev rows (see the module doc)."""
    gold = {r.id.removesuffix(":gold"): r.claim for r in rows if r.id.endswith(":gold")}
    out = []
    for r in rows:
        is_gold = r.id.endswith(":gold")
        if not is_gold and not (r.family == "real-summedits" and r.label == CONTRADICTED):
            continue
        f = fix(r.claim, [r.evidence])
        if f.edited:
            grade = "harmful" if is_gold else "right" if f.revised == gold.get(r.id) else "other"
            out.append((grade, recorder.of(f.sentence, f.revised)))
    return out


def table(m: dict[str, float]) -> str:
    """A markdown table: per guard, the edits of each grade it stops, per data set."""
    from editor.judge.span_guard import GUARDS

    sets = sorted({k.split("/")[0] for k in m if k.startswith("ablation:")})
    head = "| guard | " + " | ".join(
        f"{s.removeprefix('ablation:')} right / harmful / other" for s in sets
    )
    lines = [head + " |", "|---" * (len(sets) + 1) + "|"]
    for g in ["edits", *GUARDS, "any"]:
        cells = []
        for s in sets:
            p = f"{s}/edits/" if g == "edits" else f"{s}/{g}/stops_"
            cells.append(
                " / ".join(str(int(m.get(p + x, 0))) for x in ("right", "harmful", "other"))
            )
        lines.append(f"| {g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
