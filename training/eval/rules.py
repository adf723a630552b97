"""``purr eval rules``: the rules judge with each rule family off in turn, on real errors.

Rows are ``purr data judge-rows`` (BUMP's and SummEdits' summaries: sentences people made wrong,
with their fix, and the same sentences right), each judged against its article as in an edit:
the gate assesses the sentence, the editor proposes where the gate opens, the acceptance
decides. Each rule family (``GATE_RULES``, ``ACCEPTANCE_RULES``; ``judge.rules_off``) is then
turned off alone. A gate family can only change rows the gate opened by it, an acceptance family
only rows the gate opened at all, so only those are judged again.

Per setting: wrong sentences fixed (the applied edit writes the person's fix), harmful edits
(any other applied edit, on a wrong or a right sentence), right sentences unchanged. A family
pays where turning it off costs: fewer fixes or more harmful edits.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from training.args import option
from training.eval.base import Evaluation

EVALUATION = Evaluation(
    name="rules",
    help="the rules judge with each rule family off in turn, on real-error rows",
    primary="harmful_saved",
)


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    p.add_argument("--rows", required=True, help="a split of purr data judge-rows (dev.jsonl)")
    p.add_argument("--out", type=Path, required=True, help="metrics.json, outcomes.jsonl, plot")
    p.add_argument(
        "--datasets",
        default="bump,summedits",
        help="datasets of the rows to judge (comma-separated; default the real ones)",
    )
    option(p, "--limit", int, None, "rows judged (a quick look)")
    common(p, index=False)


def outcome(row: dict[str, Any], applied: str | None) -> str:
    """``fixed``, ``harmful``, ``missed`` (a wrong sentence left) or ``kept`` (a right one).

    >>> row = {"wrong": True, "fix": "It is 5 m."}
    >>> outcome(row, "It is 5 m."), outcome(row, "It is 6 m."), outcome(row, None)
    ('fixed', 'harmful', 'missed')
    >>> outcome({"wrong": False}, None), outcome({"wrong": False}, "It is 7 m.")
    ('kept', 'harmful')
    """
    from training.eval.judge_signals import same

    if applied is None:
        return "missed" if row["wrong"] else "kept"
    return "fixed" if row["wrong"] and same(applied, row.get("fix")) else "harmful"


def tally(outcomes: Iterable[str], right: int) -> dict[str, int]:
    """Counts of one setting: fixed, harmful, right unchanged (of ``right``).

    >>> tally(["fixed", "harmful", "kept", "missed"], 2)
    {'fixed': 1, 'harmful': 1, 'right_unchanged': 1, 'right': 2}
    """
    outs = list(outcomes)
    n = {k: outs.count(k) for k in ("fixed", "harmful", "kept")}
    return {
        "fixed": n["fixed"],
        "harmful": n["harmful"],
        "right_unchanged": n["kept"],
        "right": right,
    }


class RulesRun:
    """The rules judge and its proposers (a ``Reviser``) over rows, with rule families turned
    off on demand."""

    def __init__(self, reviser: Any) -> None:
        self.reviser = reviser
        self.judge = reviser.judge
        gate = self.judge.gate
        while hasattr(gate, "inner"):  # the NLI gate inside the question and reader wrappers
            gate = gate.inner
        self.gate = gate

    def off(self, families: Iterable[str]) -> None:
        from editor.judge.acceptance import ACCEPTANCE_RULES
        from editor.judge.agreement.base import GATE_RULES

        fams = frozenset(families)
        if hasattr(self.gate, "off"):
            self.gate.off = fams & set(GATE_RULES)
        if self.judge.acceptance is not None:
            self.judge.acceptance.off = fams & set(ACCEPTANCE_RULES)

    def judge_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """The gate's rule and the applied sentence (None: unchanged) of one row."""
        from editor.revision.reviser import Target
        from editor.types import Evidence

        ev = Evidence(row["document"], row["evidence"], "", "given", None, row["sentence"], 1.0)
        text, context = row["text"], row.get("context")
        (f,) = self.judge.assess_batch([(text, row["sentence"], ev)], context)
        out: dict[str, Any] = {"rule": f.rule if f.opens else None, "applied": None}
        if not f.opens or f.span is None:
            return out
        a, b = f.span
        (step,) = self.reviser.settle(text, [Target(f.span, f, [ev], row["sentence"], ev)], context)
        if step.accepted:
            out["applied"] = step.after[a : len(step.after) - (len(text) - b)]
        return out


def ablate(
    run: RulesRun,
    rows: Sequence[dict[str, Any]],
    progress: Callable[[Iterable, str], Iterable] = lambda xs, _: xs,
) -> dict[str, Any]:
    """Outcomes per setting (``none`` and each family off) and the counts of each."""
    from editor.judge.acceptance import ACCEPTANCE_RULES
    from editor.judge.agreement.base import GATE_RULES

    run.off(())
    base = [run.judge_row(r) for r in progress(rows, "all rules")]
    settings: dict[str, list[dict[str, Any]]] = {"none": base}
    for fam in (*GATE_RULES, *ACCEPTANCE_RULES):
        touched = [
            i
            for i, b in enumerate(base)
            if (b["rule"] == fam if fam in GATE_RULES else b["rule"] is not None)
        ]
        run.off([fam])
        redone = {i: run.judge_row(rows[i]) for i in progress(touched, f"{fam} off")}
        settings[fam] = [redone.get(i, b) for i, b in enumerate(base)]
    run.off(())
    right = sum(not r["wrong"] for r in rows)
    counts = {
        name: tally((outcome(r, o["applied"]) for r, o in zip(rows, outs, strict=True)), right)
        for name, outs in settings.items()
    }
    return {"settings": settings, "counts": counts}


def verdict(counts: dict[str, dict[str, int]]) -> dict[str, str]:
    """Per family, whether it pays: ``pays`` where turning it off loses fixes or adds harmful
    edits, ``no cost`` where nothing changes, ``costs`` where off is no worse on both.

    >>> verdict({"none": {"fixed": 5, "harmful": 3}, "a": {"fixed": 4, "harmful": 3},
    ...          "b": {"fixed": 5, "harmful": 3}, "c": {"fixed": 6, "harmful": 2}})
    {'a': 'pays', 'b': 'no cost', 'c': 'costs'}
    """
    none = counts["none"]
    out = {}
    for fam, c in counts.items():
        if fam == "none":
            continue
        d_fix, d_harm = c["fixed"] - none["fixed"], c["harmful"] - none["harmful"]
        if d_fix == 0 and d_harm == 0:
            out[fam] = "no cost"
        elif d_fix >= 0 and d_harm <= 0:
            out[fam] = "costs"
        else:
            out[fam] = "pays"
    return out


def main(args: argparse.Namespace) -> dict[str, Any]:
    from tqdm import tqdm

    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline

    path = Path(args.rows)
    if not path.is_file():
        raise ValueError(f"{path} not found; make rows with `purr data judge-rows --out DIR`")
    wanted = {d.strip() for d in args.datasets.split(",") if d.strip()}
    rows = [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]
    rows = [r for r in rows if r.get("dataset") in wanted][: args.limit]
    if not rows:
        raise ValueError(f"no rows of {sorted(wanted)} in {path}")
    cfg = load_config(args.config, [*args.overrides, "judge.type=rules"])
    reviser = Pipeline(Components(cfg)).editor
    run = RulesRun(reviser)
    found = ablate(run, rows, lambda xs, d: tqdm(xs, desc=d, unit="row"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "outcomes.jsonl").open("w", encoding="utf-8") as f:
        for i, r in enumerate(rows):
            per = {k: v[i] for k, v in found["settings"].items()}
            f.write(json.dumps({"id": r["id"], "wrong": r["wrong"], **per}) + "\n")
    report = {
        "rows": str(path),
        "datasets": sorted(wanted),
        "n": len(rows),
        "counts": found["counts"],
        "verdict": verdict(found["counts"]),
    }
    (out / "metrics.json").write_text(json.dumps(report, indent=2))
    _plot(found["counts"], out / "ablation.png")
    return report


def render(report: dict[str, Any]) -> str:
    lines = [
        f"{report['n']} rows of {', '.join(report['datasets'])} from {report['rows']}",
        "off        fixed  harmful  right unchanged  verdict",
    ]
    for name, c in report["counts"].items():
        v = report["verdict"].get(name, "")
        lines.append(
            f"{name:<10} {c['fixed']:>5}  {c['harmful']:>7}  "
            f"{c['right_unchanged']:>7} / {c['right']:<6} {v}"
        )
    return "\n".join(lines)


def _plot(counts: dict[str, dict[str, int]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(counts)
    none = counts["none"]
    fig, ax = plt.subplots(figsize=(8, 4))
    x = range(len(names))
    ax.bar(
        [i - 0.2 for i in x],
        [counts[n]["fixed"] - none["fixed"] for n in names],
        0.4,
        label="fixed",
    )
    ax.bar(
        [i + 0.2 for i in x],
        [counts[n]["harmful"] - none["harmful"] for n in names],
        0.4,
        label="harmful",
    )
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(list(x), names, rotation=45, ha="right")
    ax.set_ylabel("change with the family off")
    ax.set_title("The rules judge, each rule family off (real-error rows)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
