"""``purr eval citations``: check and repair on cited answers with known faults.

Rows of ``purr data cited``. For each row the citation repairer runs once (the check, then the
repair): the check's outcome per sentence is compared with the row's truth, and the repaired
text with the row's correctly cited answer. Per fault type:

- ``detect_recall``: faulty sentences the check gives the true outcome (``needs_citation`` for a
  dropped marker, ``citation_not_supporting`` for a wrong source or a contradicted claim);
- ``detect_precision``: of the sentences the check flags (any outcome but ``supported`` and
  ``needs_none``), the share that are faulty;
- ``citation_precision`` / ``citation_recall``: ALCE's, as the check computes them and as the
  truth gives them (mean over rows);
- ``repaired``: faulty rows whose repair gives back the correctly cited answer exactly;
  ``repaired_citation``: the faulty sentence ends up citing the gold source (its wording aside);
- ``unchanged``: for ``correct`` rows, the share that come back byte for byte.

Results go to ``results.jsonl`` (a row journal: a killed run resumes), numbers to
``metrics.json`` and a plot to ``citations.png``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from editor.citations.document import CitedDocument
from editor.citations.repair import CitationRepairer
from editor.citations.results import citation_scores
from editor.citations.sources import read_sources
from editor.verdicts import SUPPORTED
from training.args import option, read_rows
from training.eval.base import Evaluation, checking_pipeline, stopped
from training.figures import save_figure
from training.jobs.journaled import journal_rows

EVALUATION = Evaluation(
    name="citations",
    help="check and repair on cited answers with known faults (rows of `purr data cited`)",
    primary="faulty_repaired",
)

FLAGGED = ("citation_not_supporting", "needs_citation")


def _truth_scores(truth: Sequence[str]) -> tuple[float | None, float | None]:
    return citation_scores(
        [(True, t == SUPPORTED, [t == SUPPORTED] if t != "needs_citation" else []) for t in truth]
    )


def evaluate_row(repairer: CitationRepairer, row: dict[str, Any]) -> dict[str, Any]:
    """One row: the check's outcomes against the truth and the repair against the gold text."""
    sources = read_sources(row["sources"])
    result = repairer.repair(row["text"], sources)
    predicted = [s.outcome for s in result.before.sentences]
    fs = row.get("fault_sentence")
    after_ids: list[str] = []
    if fs is not None:
        doc = CitedDocument.parse(result.revised, [s.id for s in sources])
        if len(doc.sentences) == len(row["truth"]):
            after_ids = list(doc.sentences[fs].citations)
    return {
        "id": row["id"],
        "dataset": row.get("dataset"),
        "fault": row["fault"],
        "fault_sentence": fs,
        "truth": row["truth"],
        "predicted": predicted,
        "aligned": len(predicted) == len(row["truth"]),
        "citation_precision": result.before.citation_precision,
        "citation_recall": result.before.citation_recall,
        "true_citation_precision": _truth_scores(row["truth"])[0],
        "true_citation_recall": _truth_scores(row["truth"])[1],
        "text": row["text"],
        "revised": result.revised,
        "gold_text": row.get("gold_text"),
        "unchanged": result.revised == row["text"],
        "repaired": row.get("gold_text") is not None and result.revised == row["gold_text"],
        "repaired_citation": fs is not None and after_ids == [row.get("gold_source")],
        "changes": [c.action for c in result.changes],
    }


def _mean(xs: Sequence[float | None]) -> float | None:
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), 4) if xs else None


def summarise(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Metrics per fault type and overall (see the module doc)."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by[f"{r['dataset']}:{r['fault']}"].append(r)
    out: dict[str, Any] = {}
    for kind, rows in sorted(by.items()):
        faulty = [r for r in rows if r["fault_sentence"] is not None and r["aligned"]]
        hit = [
            r["predicted"][r["fault_sentence"]] == r["truth"][r["fault_sentence"]] for r in faulty
        ]
        flagged = [
            (i == r["fault_sentence"])
            for r in rows
            if r["aligned"]
            for i, p in enumerate(r["predicted"])
            if p in FLAGGED
        ]
        m: dict[str, Any] = {
            "rows": len(rows),
            "citation_precision": _mean([r["citation_precision"] for r in rows]),
            "citation_recall": _mean([r["citation_recall"] for r in rows]),
            "true_citation_precision": _mean([r["true_citation_precision"] for r in rows]),
            "true_citation_recall": _mean([r["true_citation_recall"] for r in rows]),
            "false_flags_per_row": round(
                sum(
                    p in FLAGGED and i != r["fault_sentence"]
                    for r in rows
                    if r["aligned"]
                    for i, p in enumerate(r["predicted"])
                )
                / max(1, len(rows)),
                4,
            ),
        }
        if faulty:
            m["detect_recall"] = round(sum(hit) / len(faulty), 4)
            m["detect_precision"] = round(sum(flagged) / len(flagged), 4) if flagged else None
            with_gold = [r for r in faulty if r["gold_text"] is not None]
            if with_gold:
                m["repaired"] = round(sum(r["repaired"] for r in with_gold) / len(with_gold), 4)
                m["repaired_citation"] = round(
                    sum(r["repaired_citation"] for r in with_gold) / len(with_gold), 4
                )
            m["changed"] = round(sum(not r["unchanged"] for r in rows) / len(rows), 4)
        else:
            m["unchanged"] = round(sum(r["unchanged"] for r in rows) / len(rows), 4)
        out[kind] = m
    correct = [r for r in results if r["fault"] == "correct"]
    out["all"] = {
        "rows": len(results),
        "correct_unchanged": _mean([float(r["unchanged"]) for r in correct]),
        "faulty_repaired": _mean(
            [
                float(r["repaired"])
                for r in results
                if r["fault"] != "correct" and r["gold_text"] is not None
            ]
        ),
    }
    return out


def plot(metrics: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = [k for k in metrics if k != "all"]
    series = [
        ("detect_recall", "detected"),
        ("detect_precision", "flag precision"),
        ("repaired", "repaired exactly"),
        ("repaired_citation", "citation repaired"),
        ("unchanged", "correct rows unchanged"),
    ]
    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(kinds)), 4.2))
    width = 0.8 / len(series)
    for n, (key, label) in enumerate(series):
        xs = [i + n * width for i in range(len(kinds))]
        ys = [metrics[k].get(key) or 0 for k in kinds]
        ax.bar(xs, ys, width, label=label)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(kinds))])
    ax.set_xticklabels([k.replace(":", "\n") for k in kinds], fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share")
    ax.set_title("purr check / repair on cited answers with known faults")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    save_figure(fig, path)


def run(
    repairer: CitationRepairer,
    rows: Sequence[dict[str, Any]],
    out: Path,
    progress: bool = True,
    stop: Any = None,
) -> dict[str, Any]:
    """Every row (resuming ``results.jsonl``), then ``metrics.json`` and ``citations.png``.
    ``stop`` (a ``GracefulStop``): when it is requested the row in hand is finished and the
    result says ``interrupted``."""
    from retrieval.files import write_text

    done = journal_rows(
        rows, out, lambda r: evaluate_row(repairer, r), "eval citations", progress, stop
    )
    if done.results is None:
        return {"interrupted": True, "done": done.written}
    metrics = summarise(done.results)
    write_text(out / "metrics.json", json.dumps(metrics, indent=2))
    plot(metrics, out / "citations.png")
    return metrics


def evaluate_evidence_row(pipeline: Any, row: dict[str, Any]) -> dict[str, Any]:
    """One row through ``purr edit --evidence`` (the sources as plain evidence, no citation
    repair): whether the text came back unchanged and every marker kept. A row the pipeline
    refuses (``InputError``) is recorded with its error, unchanged."""
    from editor.citations.document import parse_markers
    from editor.inputs import InputError

    ids = [str(s["id"]) for s in row["sources"]]
    out = {"id": row["id"], "dataset": row.get("dataset"), "fault": row["fault"]}
    try:
        result = pipeline.edit(row["text"], evidence=[s["text"] for s in row["sources"]])
    except InputError as e:
        return {**out, "status": "error", "error": str(e), "unchanged": True, "markers_kept": True}
    before = sorted(m.text for m in parse_markers(row["text"], ids))
    after = sorted(m.text for m in parse_markers(result.revised, ids))
    return {
        **out,
        "status": result.status,
        "unchanged": result.revised == row["text"],
        "markers_kept": before == after,
        "text": row["text"],
        "revised": result.revised,
    }


def run_evidence(
    pipeline: Any, rows: Sequence[dict[str, Any]], out: Path, stop: Any = None
) -> dict[str, Any]:
    """``evaluate_evidence_row`` over the rows (resumable), then ``metrics.json``: per kind the
    share unchanged and the share with every marker kept."""
    from retrieval.files import write_text

    done = journal_rows(
        rows, out, lambda r: evaluate_evidence_row(pipeline, r), "eval edits", stop=stop
    )
    if done.results is None:
        return {"interrupted": True, "done": done.written}
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in done.results:
        by[f"{r['dataset']}:{r['fault']}"].append(r)
    metrics = {
        k: {
            "rows": len(v),
            "unchanged": round(sum(r["unchanged"] for r in v) / len(v), 4),
            "markers_kept": round(sum(r["markers_kept"] for r in v) / len(v), 4),
        }
        for k, v in sorted(by.items())
    }
    write_text(out / "metrics.json", json.dumps(metrics, indent=2))
    return metrics


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    """``purr eval citations``'s arguments."""
    p.add_argument("data", help="JSONL rows of `purr data cited`")
    p.add_argument("--out", required=True, help="folder for results.jsonl, metrics.json, plot")
    option(p, "--limit", int, None, "first N rows only")
    p.add_argument(
        "--via",
        choices=("sources", "evidence"),
        default="sources",
        help="sources: check and repair (default); evidence: plain `purr edit --evidence` with "
        "the sources as evidence (unchanged share, markers kept)",
    )
    common(p)


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval citations``: check and repair each row, or edit it with its sources as
    evidence (``--via evidence``)."""
    from retrieval.files import GracefulStop

    rows = read_rows(
        Path(args.data), ("id", "text", "sources", "fault", "truth"), "see `purr data cited --help`"
    )
    rows = rows[: args.limit] if args.limit else rows
    pipeline, checker = checking_pipeline(args)
    with GracefulStop() as stop:
        if args.via == "evidence":
            metrics = run_evidence(pipeline, rows, Path(args.out), stop=stop)
        else:
            repairer = CitationRepairer(checker, pipeline.editor)
            metrics = run(repairer, rows, Path(args.out), stop=stop)
    if metrics.get("interrupted"):
        metrics["stopped"] = stopped(stop, metrics["done"])
    return metrics
