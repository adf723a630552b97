"""``purr eval slots``: how well the slot checks (``editor.claims.slot_check``) catch planted
errors and leave correct sentences alone, on a planted dev set (``purr data planted``).

Each row's evidence is its source article (the Wikipedia summary its title names) or, with
``results``, the evidence a ``purr eval edits`` run retrieved for it. Recall: the share of
planted errors whose sentence is called ``contradicted``, by error type. False contradictions:
the share of the sentences of correct passages called ``contradicted``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from editor.attribution.verifier import judge_batch
from editor.claims.slot_check import SlotChecker
from editor.policy import refutes
from retrieval.files import write_text
from retrieval.sentences import split
from training.args import switch
from training.eval.base import Evaluation
from training.figures import save_figure

EVALUATION = Evaluation(
    name="slots",
    help="slot-level contradiction checks on a planted dev set: recall by error type",
    primary="recall_min",
)


@dataclass(frozen=True)
class Judged:
    """A check of one claim sentence, read as the slot check's observation: ``differs`` (the
    evidence refutes it) or ``unsaid``, and why."""

    found: str
    reason: str


class VerifierCheck:
    """The verifier (any attribution model) as a checker: a sentence ``differs`` when,
    against one of the evidence texts, ``editor.policy.refutes`` holds (the fused
    verifier's slot check names the span the evidence states otherwise, or P(contradicted) is at
    least 0.7 and above P(supported)): the rule the agreement gate and the report use."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def check(self, sentence: str, texts: Sequence[str]) -> Judged:
        scores, slots = judge_batch(self.model, [(t, sentence) for t in texts])
        for slot in slots:  # the fused verifier: a slot check that names the span counts
            if slot is not None and slot.names_a_difference:
                return Judged("differs", slot.reason)
        worst = max(scores, key=lambda s: s.contradicted)
        if refutes(worst):
            return Judged("differs", f"P(contradicted) {worst.contradicted:.2f}")
        best = max(s.supported for s in scores)
        return Judged(
            "unsaid", f"P(contradicted) {worst.contradicted:.2f}, P(supported) {best:.2f}"
        )


def planted_sentence(row: dict[str, Any]) -> str | None:
    """The sentence of a planted row that holds its error (for a role swap "A ... B", the
    sentence holding both names, A first)."""
    parts = [p for p in str(row.get("wrong", "")).split(" ... ") if p]
    for sentence in split(row["text"]):
        if parts and all(p in sentence for p in parts):
            if len(parts) == 1 or sentence.index(parts[0]) < sentence.index(parts[1]):
                return sentence
    return None


def evaluate_slots(
    rows: Sequence[dict[str, Any]],
    evidence: dict[str, list[str]],
    checker: SlotChecker | VerifierCheck | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Recall of contradictions by error type and the false-contradiction rate; ``evidence``
    maps a row id to its evidence texts. Rows without evidence are counted as skipped."""
    checker = checker or SlotChecker()
    caught: dict[str, list[bool]] = defaultdict(list)
    correct: list[bool] = []
    missed: list[dict[str, str]] = []
    false: list[dict[str, str]] = []
    skipped = 0
    for row in tqdm(rows, desc="slot checks", unit="row", disable=not progress):
        texts = evidence.get(str(row["id"]))
        if not texts:
            skipped += 1
            continue
        if row.get("planted"):
            sentence = planted_sentence(row)
            if sentence is None:
                skipped += 1
                continue
            verdict = checker.check(sentence, texts)
            hit = verdict.found == "differs"
            caught[str(row.get("error_type"))].append(hit)
            if not hit:
                missed.append({"id": row["id"], "sentence": sentence, "why": verdict.reason})
            continue
        for sentence in split(row["text"]):
            verdict = checker.check(sentence, texts)
            correct.append(verdict.found == "differs")
            if correct[-1]:
                false.append({"id": row["id"], "sentence": sentence, "why": verdict.reason})
    recall = {k: round(sum(v) / len(v), 4) for k, v in sorted(caught.items())}
    return {
        "primary": "recall_min",
        "recall_by_type": recall,
        "rows_by_type": {k: len(v) for k, v in sorted(caught.items())},
        "recall_min": min(recall.values()) if recall else None,
        "false_contradiction_rate": round(sum(correct) / len(correct), 4) if correct else None,
        "correct_sentences": len(correct),
        "skipped_rows": skipped,
        "missed": missed,
        "false_contradictions": false,
    }


def source_evidence(rows: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """Each row's source article from the packaged Wikipedia summaries, by its title."""
    from retrieval.corpus import read_wiki_summaries

    docs = {d.title: d.text for d in read_wiki_summaries()}
    return {str(r["id"]): [docs[r["title"]]] for r in rows if r.get("title") in docs}


def retrieved_evidence(results: Path) -> dict[str, list[str]]:
    """The evidence a ``purr eval edits`` run retrieved for each row (its results.jsonl)."""
    out = {}
    for line in results.read_text("utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            out[str(rec["id"])] = [e["text"] for e in rec.get("evidence") or []]
    return out


def plot(report: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = list(report["recall_by_type"])
    values = [report["recall_by_type"][k] for k in kinds]
    fig, ax = plt.subplots(figsize=(5, 3))
    bars = ax.bar(kinds, values, color="tab:blue")
    ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.axhline(0.95, color="grey", linewidth=0.8, linestyle="--")
    rate = report["false_contradiction_rate"]
    title = "contradiction recall by error type"
    if rate is not None:
        title += f"\nfalse contradictions on correct sentences: {rate:.1%}"
    ax.set(ylim=(0, 1.05), ylabel="recall", title=title)
    save_figure(fig, png)


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    """``purr eval slots``'s arguments."""
    p.add_argument("data", help="JSONL rows of `purr data planted`")
    p.add_argument(
        "--results",
        default=None,
        help="results.jsonl of a `purr eval edits` run: check against the evidence it retrieved "
        "(default: each row's source article)",
    )
    p.add_argument("--out", required=True, help="folder for metrics.json and slots.png")
    switch(
        p,
        "--verifier",
        "judge with the configured verifier (attribution model; the fused one by default) "
        "instead of the slot checks alone",
    )
    p.add_argument("--config", default="default", help="preset or YAML (with --verifier)")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval slots``: recall by error type and the false contradictions."""
    src = Path(args.data)
    if not src.is_file():
        raise ValueError(f"{src}: no such file; make one with `purr data planted --out FILE`")
    rows = [json.loads(line) for line in src.read_text("utf-8").splitlines() if line.strip()]
    if args.results:
        evidence = retrieved_evidence(Path(args.results))
    else:
        evidence = source_evidence(rows)
    checker = None
    if args.verifier:
        from editor.attribution.base import build
        from editor.config import load_config

        checker = VerifierCheck(build(load_config(args.config, args.overrides).attribution))
    report = evaluate_slots(rows, evidence, checker)
    report["checker"] = "verifier" if args.verifier else "slot checks"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "metrics.json", json.dumps(report, indent=2, ensure_ascii=False))
    plot(report, out / "slots.png")
    return report


def render(report: dict[str, Any]) -> str:
    """The report without the lists of missed rows and false contradictions."""
    shown = {k: v for k, v in report.items() if k not in {"missed", "false_contradictions"}}
    return json.dumps(shown, indent=2)
