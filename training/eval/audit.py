"""``purr eval audit``: accepted edits for a person to check, and the table of checked ones.

``purr eval audit RESULTS.jsonl [...] --out DIR [--n 50]`` takes the accepted edits of
``purr eval edits`` results (each edited row's accepted steps, taken in turn from each file so
every set is represented) and writes ``DIR/audit.jsonl``: per edit the gate rule, the editor,
the judges that proved it, the question, the sentence before and after, the evidence sentence
that states the revised fact, the gold answers where the row has them, and ``right: null`` for
the person to fill in (``true`` or ``false``, with a ``note``).

``purr eval audit --checked FILE --out DIR`` reads a filled file and reports, per rule, per
editor and per proof, how many checked edits were right (``metrics.json``, ``audit.png``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from retrieval.corpus import read_utf8
from retrieval.files import save_png, write_text
from training.args import option
from training.eval.base import Evaluation

EVALUATION = Evaluation(
    name="audit",
    help="accepted edits sampled for a person to check, and per rule and editor how many of "
    "the checked ones were right",
    primary="right",
)


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    """``purr eval audit``'s arguments."""
    p.add_argument("results", nargs="*", help="results.jsonl files of purr eval edits")
    p.add_argument("--out", required=True, help="folder for audit.jsonl or the report")
    option(p, "--n", int, 50, "edits to sample (default 50)")
    p.add_argument("--checked", default=None, help="a filled audit.jsonl to report on")
    common(p)


def _changed_sentence(before: str, after: str) -> tuple[str, str]:
    """The first sentence an edit changed, before and after."""
    from retrieval.sentences import split

    old, new = split(before), split(after)
    for a, b in zip(old, new, strict=False):
        if a != b:
            return a, b
    return before, after


def edits_of(path: Path) -> list[dict[str, Any]]:
    """The accepted edits of one results file, one record each (see the module doc)."""
    from editor.judge.proofs import stated_by
    from editor.types import Evidence, evidence_text

    out = []
    for line in read_utf8(path).splitlines():
        row = json.loads(line)
        if row.get("revised") == row.get("original"):
            continue
        evidence = {e["id"]: Evidence(**e) for e in row.get("evidence") or ()}
        for step in row.get("steps") or ():
            if not step.get("accepted"):
                continue
            before, after = _changed_sentence(step["before"], step["after"])
            ev = evidence.get(step["evidence_id"])
            premise = evidence_text(ev) if ev is not None else ""
            out.append(
                {
                    "id": row["id"],
                    "file": str(path),
                    "rule": step.get("rule"),
                    "editor": step.get("editor"),
                    "verified_by": step.get("verified_by"),
                    "question": row.get("context"),
                    "before": before,
                    "after": after,
                    "evidence": stated_by(premise, before, after) or premise[:300],
                    "answers": row.get("answers"),
                    "right": None,
                    "note": "",
                }
            )
    return out


def sample(files: list[Path], n: int) -> list[dict[str, Any]]:
    """Up to ``n`` accepted edits, taken in turn from each file."""
    pools = [edits_of(f) for f in files]
    out: list[dict[str, Any]] = []
    while len(out) < n and any(pools):
        for pool in pools:
            if pool and len(out) < n:
                out.append(pool.pop(0))
    return out


def table(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Checked edits and how many were right, overall (primary ``right``, a share) and per
    rule, editor and proof.

    >>> t = table([{"rule": "slot", "editor": "causal", "verified_by": "statement", "right": True},
    ...            {"rule": "nli", "editor": "causal", "verified_by": "statement", "right": False}])
    >>> t["right"], t["by_editor"]["causal"]
    (0.5, {'checked': 2, 'right': 1})
    """
    checked = [r for r in rows if r.get("right") is not None]

    def by(key: str) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for r in checked:
            c = out.setdefault(str(r.get(key)), {"checked": 0, "right": 0})
            c["checked"] += 1
            c["right"] += bool(r["right"])
        return dict(sorted(out.items()))

    right = sum(bool(r["right"]) for r in checked)
    return {
        "primary": "right",
        "checked": len(checked),
        "right": round(right / len(checked), 4) if checked else None,
        "by_rule": by("rule"),
        "by_editor": by("editor"),
        "by_proof": by("verified_by"),
    }


def _plot(report: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [(f"rule: {k}", v) for k, v in report["by_rule"].items()]
    groups += [(f"editor: {k}", v) for k, v in report["by_editor"].items()]
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(groups) + 1.2))
    names = [g for g, _ in groups]
    ax.barh(names, [v["checked"] for _, v in groups], color="#ccc", label="checked")
    ax.barh(names, [v["right"] for _, v in groups], color="#4a8", label="right")
    ax.invert_yaxis()
    ax.set_xlabel("accepted edits")
    ax.legend(loc="lower right")
    ax.set_title(f"hand-checked edits: {report['checked']}, right {report['right']}")
    save_png(fig, out / "audit.png")
    plt.close(fig)


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval audit``."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.checked:
        rows = [json.loads(x) for x in read_utf8(Path(args.checked)).splitlines() if x.strip()]
        report = table(rows)
        write_text(out / "metrics.json", json.dumps(report, indent=2) + "\n")
        _plot(report, out)
        return report
    if not args.results:
        raise ValueError("give results.jsonl files of purr eval edits, or --checked FILE")
    if args.n < 1:
        raise ValueError(f"--n must be >= 1, got {args.n}")
    files = [Path(p) for p in args.results]
    missing = [str(p) for p in files if not p.is_file()]
    if missing:
        raise ValueError(f"no such results file: {', '.join(missing)}")
    rows = sample(files, args.n)
    write_text(out / "audit.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return {"out": str(out / "audit.jsonl"), "edits": len(rows), "files": len(files)}
