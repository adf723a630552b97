"""``purr eval flags``: which words each judge names, against the words people marked.

Rows are ``purr data judge-rows`` (a sentence of a summary with its article's passages; for a
wrong one the person's fix, whose gold words are those the fix replaces) or ``purr data
real-claims`` (a claim with its evidence; for WiCE the words annotators marked unsupported; a
supported claim has none). Each judge assesses each row as in an edit (``assess_batch``: the
summary as the text, the sentence as the query); the words it names are its finding's flags,
what ``findings`` shows a user.

Per judge and dataset: token precision, recall and F1 of the named words (micro over rows);
wrong sentences with a gold word named; right sentences with any word named (what a user would
read as noise).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from editor.verdicts import SUPPORTED
from training.args import option
from training.eval.base import Evaluation

EVALUATION = Evaluation(
    name="flags",
    help="which words each judge names, against the words people marked (token F1)",
    primary="f1",
)
JUDGES = ("rules", "span", "learned")


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    p.add_argument("--rows", required=True, help="purr data judge-rows or real-claims rows")
    p.add_argument("--out", type=Path, required=True, help="folder for metrics.json")
    p.add_argument("--judges", default=",".join(JUDGES), help=f"comma-separated, of {JUDGES}")
    option(p, "--limit", int, None, "rows judged (a quick look)")
    common(p, index=False)


def tokens(text: str) -> list[tuple[int, int, str]]:
    """The words of ``text`` with their offsets.

    >>> [t[2] for t in tokens("It is 52 m tall.")]
    ['It', 'is', '52', 'm', 'tall']
    """
    from editor.text.words import TOKEN

    return [(m.start(), m.end(), m.group()) for m in TOKEN.finditer(text)]


def gold_words(row: dict[str, Any]) -> tuple[str, int, int, set[int]]:
    """A row's text, its judged sentence's span and the indexes (in ``tokens(text)``) of its
    gold words.

    >>> r = {"text": "A is 5. B is 6.", "sentence": "B is 6.", "start": 8, "end": 15,
    ...      "wrong": True, "fix": "B is 7."}
    >>> gold_words(r)
    ('A is 5. B is 6.', 8, 15, {5})
    >>> gold_words({"text": "It won 3 Oscars.", "unsupported": ["3", "Oscars"]})[3]
    {2, 3}
    """
    from editor.text.words import changed_run

    text = row["text"]
    start, end = row.get("start", 0), row.get("end", len(text))
    toks = tokens(text)
    if "unsupported" in row:
        marked = {w.lower() for w in row["unsupported"] or ()}
        return text, start, end, {i for i, t in enumerate(toks) if t[2].lower() in marked}
    if not row.get("wrong") or not row.get("fix"):
        return text, start, end, set()
    s, e, _ = changed_run(row["sentence"], row["fix"])
    a, b = start + s, start + e
    return text, start, end, {i for i, (ts, te, _) in enumerate(toks) if ts < b and te > a}


def named_words(
    toks: Sequence[tuple[int, int, str]], start: int, end: int, flags: Sequence[Any]
) -> set[int]:
    """The indexes of the words (``tokens(text)``) of ``text[start:end]`` a flag covers."""
    return {
        i
        for i, (ts, te, _) in enumerate(toks)
        if start <= ts and te <= end and any(f.start < te and f.end > ts for f in flags)
    }


def score(pairs: Sequence[tuple[set[int], set[int], bool]]) -> dict[str, float | int]:
    """Token precision / recall / F1 over (gold, named, wrong) rows, and the sentence counts.

    >>> score([({1, 2}, {2, 3}, True), (set(), {4}, False), (set(), set(), False)])["f1"]
    0.4
    """
    tp = sum(len(g & n) for g, n, _ in pairs)
    named = sum(len(n) for _, n, _ in pairs)
    gold = sum(len(g) for g, _, _ in pairs)
    p = tp / named if named else 0.0
    r = tp / gold if gold else 0.0
    right = [n for g, n, w in pairs if not w]
    return {
        "precision": round(p, 3),
        "recall": round(r, 3),
        "f1": round(2 * p * r / (p + r), 3) if p + r else 0.0,
        "wrong": sum(w for *_, w in pairs),
        "wrong_named": sum(bool(g & n) for g, n, w in pairs if w),
        "right": len(right),
        "right_with_words_named": sum(bool(n) for n in right),
    }


def main(args: argparse.Namespace) -> dict[str, Any]:
    from tqdm import tqdm

    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline
    from editor.types import Evidence

    path = Path(args.rows)
    if not path.is_file():
        raise ValueError(f"{path} not found; make rows with `purr data judge-rows` or real-claims")
    rows = [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]
    rows = rows[: args.limit]
    judges = [j.strip() for j in args.judges.split(",") if j.strip()]
    if not rows or not judges or set(judges) - set(JUDGES):
        raise ValueError(f"need rows and --judges of {JUDGES}; got {len(rows)} rows, {judges}")
    report: dict[str, Any] = {"rows": str(path), "n": len(rows), "judges": {}}
    golds = [gold_words(r) for r in rows]
    toks = [tokens(g[0]) for g in golds]
    for name in judges:
        cfg = load_config(args.config, [*args.overrides, f"judge.type={name}"])
        judge = Pipeline(Components(cfg, progress=False)).editor.judge
        by: dict[str, list[tuple[set[int], set[int], bool]]] = {}
        for i, row in enumerate(tqdm(rows, desc=f"flags ({name})", unit="row")):
            text, start, end, gold = golds[i]
            query = row.get("sentence", text)
            ev = Evidence(row["id"], row["evidence"], "", "given", None, query, 1.0)
            (f,) = judge.assess_batch([(text, query, ev)], row.get("context"))
            wrong = bool(row["wrong"]) if "wrong" in row else row["label"] != SUPPORTED
            named = named_words(toks[i], start, end, f.flags)
            by.setdefault(row["dataset"], []).append((gold, named, wrong))
        every = [x for xs in by.values() for x in xs]
        report["judges"][name] = {"all": score(every), **{d: score(xs) for d, xs in by.items()}}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps(report, indent=2))
    return report


def render(report: dict[str, Any]) -> str:
    lines = [
        f"{report['n']} rows from {report['rows']}",
        "judge    data         P      R      F1    wrong named  right with words named",
    ]
    for name, per in report["judges"].items():
        for data, s in per.items():
            lines.append(
                f"{name:<8} {data:<10} {s['precision']:>5.3f}  {s['recall']:>5.3f}  "
                f"{s['f1']:>5.3f}  {s['wrong_named']:>4} / {s['wrong']:<5} "
                f"{s['right_with_words_named']:>4} / {s['right']}"
            )
    return "\n".join(lines)
