"""``purr eval spans``: the span judge on statements suites, each statement against the summary
of the article it is about (no retrieval: the judge, its pointer and its acceptance alone).

A row of a suite (``training/eval/statements.jsonl``, ``statements_meaning.jsonl``) holds the
statement, its reference and whether it is wrong; its article is ``article`` or else the
packaged summary that shares most words with the reference among those stating every answer.
Every sentence of the statement goes through ``editor.judge.span_fix.SpanFixer``. Metrics
(primary ``wrong_fixed``): wrong statements fixed (the revision equals the reference, or states
every answer and no longer the wrong value), detected (a sentence called contradicted), harmful
edits (a changed statement that is not fixed), true statements unchanged and not flagged.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from editor.verdicts import CONTRADICTED
from training.args import option, switch
from training.eval.base import Evaluation
from training.figures import save_figure

PRIMARY = "wrong_fixed"
EVALUATION = Evaluation(
    name="spans",
    help="the span judge on statements suites: wrong statements fixed, true ones unchanged",
    primary=PRIMARY,
)
ROOT = Path(__file__).resolve().parents[2]
SUITES = (ROOT / "training/eval/statements.jsonl", ROOT / "training/eval/statements_meaning.jsonl")


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None] | None = None) -> None:
    """``purr eval spans``'s arguments (its own ``-v``; no config)."""
    p.add_argument(
        "--suite",
        action="append",
        default=None,
        help="a statements suite (repeatable; an empty one: none)",
    )
    p.add_argument("--model", default=None, help="a span judge folder (default: the shipped one)")
    option(p, "--out", Path, None, "metrics.json, rows.jsonl, spans.png")
    switch(p, "--guards", "the edit-form guards of acceptance too")
    switch(
        p,
        "--ablate-guards",
        "each form guard alone: the right and harmful edits it stops (suites, SummEdits)",
    )
    p.add_argument(
        "--rows",
        default=None,
        help="span rows to score per family "
        "(a test split of purr data spans), or 'human' for WiCE and SummEdits dev",
    )
    option(p, "--limit", int, 4000, "rows scored from --rows")
    p.add_argument("--data", default=None, help="the data folder (default ../shared/data)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")


def _words(t: str) -> set[str]:
    import re

    return {w.lower() for w in re.findall(r"\w{3,}", t)}


def article_text(row: dict, summaries: dict[str, str]) -> str | None:
    if row.get("article") in summaries:
        return summaries[row["article"]]
    answers = [a.lower() for a in row.get("answers") or []]
    ref = _words(row["reference"])
    cands = [
        (len(ref & _words(t)), t)
        for t in summaries.values()
        if all(a in t.lower() for a in answers)
    ]
    return max(cands)[1] if cands else None


def is_fixed(row: dict, revised: str) -> bool:
    if revised == row["reference"]:
        return True
    low = revised.lower()
    wrong = (row.get("wrong_value") or "").lower()
    return all(a.lower() in low for a in row.get("answers") or []) and (
        not wrong or wrong not in low
    )


def _rows(args: argparse.Namespace, fixer) -> dict[str, float]:
    from training.data.cited import DATA
    from training.data.spans.rows import read_rows
    from training.eval.span_rows import human_rows, row_scores, summedits_fixes

    if args.rows == "human":
        rows = human_rows(Path(args.data) if args.data else DATA)
        out = {f"rows/{k}": v for k, v in row_scores(fixer.judge, rows).items()}
        out.update(summedits_fixes(fixer, [r for r in rows if r.family == "real-summedits"]))
        return out
    rows = list(read_rows(args.rows))
    return {f"rows/{k}": v for k, v in row_scores(fixer.judge, rows, args.limit).items()}


def _plot(m: dict[str, float], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    suites = sorted({k.split("/")[0] for k in m if k.endswith("/wrong")})
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for k, s in enumerate(suites):
        wrong, true = max(1.0, m[f"{s}/wrong"]), max(1.0, m[f"{s}/true"])
        vals = [
            m[f"{s}/fixed"] / wrong,
            m[f"{s}/detected"] / wrong,
            m[f"{s}/harmful"] / wrong,
            m[f"{s}/unchanged"] / true,
        ]
        ax.bar([i + 0.4 * k for i in range(4)], vals, width=0.4, label=s)
    ax.set_xticks(
        [i + 0.2 for i in range(4)],
        ["wrong fixed", "wrong detected", "harmful edits", "true unchanged"],
    )
    ax.set_ylim(0, 1)
    ax.legend()
    ax.set_title("span judge on the statements suites")
    save_figure(fig, path)


def main(args: argparse.Namespace) -> dict:
    from tqdm.auto import tqdm

    from editor.attribution.span_judge import SpanJudge
    from editor.judge.span_fix import SpanFixer
    from editor.judge.span_guard import edit_guard
    from retrieval.corpus import read_wiki_summaries
    from retrieval.sentences import split

    summaries = {d.title: d.text for d in read_wiki_summaries()}
    if getattr(args, "ablate_guards", False):
        return _ablate(args, SpanJudge(args.model), summaries)
    fixer = SpanFixer(SpanJudge(args.model), guard=edit_guard if args.guards else None)
    out: dict[str, float] = {}
    if getattr(args, "rows", None):
        out.update(_rows(args, fixer))
    rows_out = []
    suites = [Path(x) for x in args.suite] if args.suite is not None else SUITES
    for suite in [x for x in suites if x.is_file() and x.stat().st_size]:
        rows = [json.loads(x) for x in Path(suite).read_text("utf-8").splitlines() if x.strip()]
        c = dict.fromkeys(
            ("wrong", "fixed", "detected", "harmful", "true", "unchanged", "flagged", "no_article"),
            0,
        )
        for row in tqdm(rows, desc=Path(suite).stem):
            doc = article_text(row, summaries)
            if doc is None:
                c["no_article"] += 1
                continue
            fixes = [fixer.fix(s, [doc]) for s in split(row["text"]) or [row["text"]]]
            revised = row["text"]
            for f in fixes:
                revised = revised.replace(f.sentence, f.revised, 1)
            contradicted = any(f.verdict == CONTRADICTED for f in fixes)
            if row["wrong"]:
                c["wrong"] += 1
                fixed = is_fixed(row, revised)
                c["fixed"] += fixed
                c["detected"] += contradicted
                c["harmful"] += revised != row["text"] and not fixed
            else:
                c["true"] += 1
                c["unchanged"] += revised == row["text"]
                c["flagged"] += contradicted
            rows_out.append(
                {
                    "id": row["id"],
                    "suite": Path(suite).stem,
                    "text": row["text"],
                    "revised": revised,
                    "reference": row["reference"],
                    "verdicts": [f.verdict for f in fixes],
                    "reasons": [f.reason for f in fixes],
                }
            )
        name = Path(suite).stem
        out.update({f"{name}/{k}": float(v) for k, v in c.items()})
    wrong = sum(v for k, v in out.items() if k.endswith("/wrong"))
    if wrong:
        out[PRIMARY] = sum(v for k, v in out.items() if k.endswith("/fixed")) / wrong
    if args.out is not None:
        args.out = Path(args.out)
        args.out.mkdir(parents=True, exist_ok=True)
        if wrong:
            _plot(out, args.out / "spans.png")
        (args.out / "metrics.json").write_text(json.dumps(out, indent=1), "utf-8")
        with (args.out / "rows.jsonl").open("w", encoding="utf-8") as f:
            for r in rows_out:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return out


def _ablate(args: argparse.Namespace, judge, summaries: dict[str, str]) -> dict:
    from editor.judge.span_fix import SpanFixer
    from retrieval.sentences import split
    from training.data.cited import DATA
    from training.eval.guard_ablation import (
        Recorder,
        suite_grades,
        summedits_grades,
        table,
        tally,
    )
    from training.eval.span_rows import human_rows

    recorder = Recorder()
    fixer = SpanFixer(judge, guard=recorder)
    out: dict[str, float] = {}
    suites = [Path(x) for x in args.suite] if args.suite is not None else SUITES
    for suite in [x for x in suites if x.is_file() and x.stat().st_size]:
        rows = [json.loads(x) for x in suite.read_text("utf-8").splitlines() if x.strip()]
        graded = suite_grades(
            rows, fixer.fix, recorder, is_fixed, split, lambda r: article_text(r, summaries)
        )
        out.update({f"ablation:{suite.stem}/{k}": v for k, v in tally(graded).items()})
    if args.rows == "human":
        rows = [r for r in human_rows(Path(args.data) if args.data else DATA)]
        graded = summedits_grades(rows, fixer.fix, recorder)
        out.update({f"ablation:summedits/{k}": v for k, v in tally(graded).items()})
    print(table(out))
    if args.out is not None:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "metrics.json").write_text(json.dumps(out, indent=1), "utf-8")
        (Path(args.out) / "ablation.md").write_text(table(out) + "\n", "utf-8")
    return out


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_cli_args(p, None)
    print(json.dumps(main(p.parse_args()), indent=1))
