"""``purr eval edits``: run the pipeline over a dataset and write metrics, per-row results and plots.

Rows: ``{id, text, context?, reference?, evidence?}`` (aliases: ``original`` for text,
``gold`` for reference; ``evidence`` a string or a list). Evidence in a row replaces research.
Other fields are carried through untouched. Resumable: ids already in results.jsonl are skipped.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from retrieval.corpus import read_utf8
from retrieval.files import RowJournal, write_text
from training.args import switch
from training.eval.base import Evaluation, stopped
from training.eval.edits_metrics import EvalRecord, summarise
from training.figures import save_figure

EVALUATION = Evaluation(
    name="edits",
    help="run the pipeline over a dataset: metrics.json, results.jsonl, plots",
    primary="f1_ap",
)

DEFAULT_PAIR = "substitute+causal"
"""The default editor: the substitute editor with the trained causal editor as its fallback."""
PAIRS = (DEFAULT_PAIR, "causal+substitute")
"""The editor pairs ``--editor`` names (the other order: the LLM first, slower on CPU)."""
ORACLE = "oracle"
"""Not an editor: the row's reference is the revision (``ReferenceReviser``), an upper bound."""


def editor_choices() -> list[str]:
    """What ``purr eval edits --editor`` accepts: every registered editor type, the two pairs
    and the oracle."""
    from editor.revision.editors import available

    return [ORACLE, *available(), *PAIRS]


class ReferenceReviser:
    """The revision stage of the oracle: the row's reference is the revision."""

    name = ORACLE

    def __init__(self, reference: str) -> None:
        self.reference = reference

    def revise(self, text: str, evidence: Any, context: str | None = None) -> tuple[str, list]:
        return self.reference, []


def normalise_row(row: Any, lineno: int) -> dict[str, Any]:
    """The row with canonical keys, or ValueError naming the problem."""
    if not isinstance(row, dict):
        raise ValueError(f"line {lineno}: expected a JSON object")
    text = row.get("text", row.get("original"))
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"line {lineno}: field 'text' (or 'original') is missing or empty")
    evidence = row.get("evidence")
    if isinstance(evidence, str):
        evidence = [evidence]
    if evidence is not None and not (
        isinstance(evidence, list) and all(isinstance(e, str) for e in evidence)
    ):
        raise ValueError(f"line {lineno}: field 'evidence' must be a string or a list of strings")
    reference = row.get("reference", row.get("gold"))
    if reference is not None and not isinstance(reference, str):
        raise ValueError(f"line {lineno}: field 'reference' must be a string")
    return {
        "id": str(row.get("id", lineno)),
        "text": text,
        "context": row.get("context"),
        "reference": reference,
        "evidence": evidence,
    }


def read_rows(path: Path) -> tuple[list[tuple[dict, dict]], list[str]]:
    """``(canonical, original)`` row pairs and the errors of the rows that could not be read."""
    lines = read_utf8(path).splitlines()
    rows, errors = [], []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            rows.append((normalise_row(raw, lineno), raw))
        except json.JSONDecodeError as e:
            errors.append(f"line {lineno}: invalid JSON ({e.msg})")
        except ValueError as e:
            errors.append(str(e))
    return rows, errors


def evaluate_row(pipeline, row: dict, editor: str) -> dict[str, Any]:
    """The row's ``EditResult`` as JSON; with the oracle, the pipeline's stages are shared but
    its revision stage is the row's reference."""
    if editor == ORACLE:
        if row["reference"] is None:
            raise ValueError(f"row {row['id']}: the oracle editor needs a 'reference' (or 'gold')")
        from editor.pipeline import Pipeline

        with Pipeline(
            pipeline.components,
            editor=ReferenceReviser(row["reference"]),
            attribution=pipeline.attribution,
            max_evidence=pipeline.max_evidence,
        ) as oracle:
            return oracle.edit(row["text"], row["context"], row["evidence"]).to_json()
    return pipeline.edit(row["text"], row["context"], row["evidence"]).to_json()


def run_eval(
    pipeline,
    src: Path,
    out: Path,
    editor: str,
    limit: int | None,
    progress: bool = True,
    stop: Any = None,
    retry_degraded: bool = False,
) -> dict[str, Any]:
    """Edit every row into ``out/results.jsonl`` (a ``RowJournal``: a killed run resumes where
    it stopped), then write ``metrics.json`` and the plots, each in one step. ``stop`` (a
    ``GracefulStop``) ends the rows early; the metrics then cover the rows done.
    ``retry_degraded`` redoes the rows an earlier run left ``degraded``."""
    rows, errors = read_rows(src)
    rows = rows[:limit] if limit else rows
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.jsonl"
    redo = (lambda r: r.get("status") == "degraded") if retry_degraded else None
    with RowJournal(results_path, redo=redo) as journal:
        done: dict[str, dict] = {journal.key(r): r for r in journal.rows}
        todo = list(journal.pending(rows, key=lambda pair: pair[0]["id"]))
        for row, raw in tqdm(todo, desc=f"eval ({editor})", unit="row", disable=not progress):
            if stop is not None and stop.requested:
                break
            try:
                rec = {
                    **raw,
                    "id": row["id"],
                    "reference": row["reference"],
                    **evaluate_row(pipeline, row, editor),
                }
            except ValueError as e:
                errors.append(str(e))
                continue
            journal.write(rec)
            done[row["id"]] = rec
    wanted = {row["id"] for row, _ in rows}
    records = [EvalRecord.from_json(r) for i, r in done.items() if i in wanted]
    metrics = {
        "data": str(src),
        "editor": editor,
        **summarise(records),
        "bad_rows": errors,
        "rows_done": len(records),
        "rows_wanted": len(wanted),
        "resume": journal.summary().to_json(),
    }
    graded = [r for i, r in done.items() if i in wanted and "answers" in r]
    if graded:
        from training.eval.answers_metrics import answer_scores

        metrics["answers"] = answer_scores(graded)
    labelled = [r for i, r in done.items() if i in wanted and "label" in r]
    if labelled:
        from training.eval.claims_metrics import claim_scores

        metrics["claims"] = claim_scores(labelled)
    write_text(out / "metrics.json", json.dumps(metrics, indent=2))
    plot(records, metrics, out)
    return metrics


def plot(records: list[EvalRecord], metrics: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scored = [
        r.result.report
        for r in records
        if r.result.report is not None and r.result.report.attribution_after is not None
    ]
    fig, ax = plt.subplots(figsize=(5, 4.5))
    grid = np.linspace(0.001, 1, 200)
    p, a = np.meshgrid(grid, grid)
    f = 2 * p * a / (p + a)
    cs = ax.contour(p, a, f, levels=[0.2, 0.4, 0.6, 0.7, 0.8, 0.9], colors="grey", linewidths=0.6)
    ax.clabel(cs, fmt="F1_AP %.1f", fontsize=6)
    ax.scatter(
        [r.preservation for r in scored],
        [float(r.attribution_after or 0.0) for r in scored],
        s=8,
        alpha=0.4,
        label="rows",
    )
    if metrics.get("preservation") is not None:
        ax.scatter(
            [metrics["preservation"]],
            [metrics["attribution_after"]],
            marker="*",
            s=200,
            c="red",
            label=f"mean ({metrics['editor']})",
        )
    ax.set(
        xlim=(0, 1.02),
        ylim=(0, 1.02),
        xlabel="preservation (Pres_Lev)",
        ylabel="attribution after (auto-AIS)",
    )
    ax.legend(fontsize=7, loc="lower left")
    save_figure(fig, out / "attribution_vs_preservation.png")
    fig, ax = plt.subplots(figsize=(5, 3))
    cats = metrics["edit_categories"]
    ax.bar(list(cats), list(cats.values()), color="tab:blue")
    ax.set(ylim=(0, 1), ylabel="share of rows", title=f"edit categories ({metrics['editor']})")
    save_figure(fig, out / "edit_categories.png")


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    """``purr eval edits``'s arguments; ``common`` adds the shared ``--config/--set/-v``."""
    p.add_argument("data", help="JSONL rows {id, text, context?, reference?, evidence?}")
    p.add_argument("--out", required=True)
    p.add_argument(
        "--index",
        default=None,
        help="index for rows without evidence (default: the Wikipedia index)",
    )
    p.add_argument(
        "--editor",
        choices=editor_choices(),
        default=None,
        help="editor alone, or a pair (substitute+causal, causal+substitute; default: the "
        "config's editor); oracle: the row's reference as the revision",
    )
    p.add_argument("--limit", type=int, default=None)
    switch(
        p,
        "--retry-degraded",
        "redo rows an earlier run of this --out left 'degraded' (a deadline, an upstream down)",
    )
    p.add_argument(
        "--probe",
        choices=["ablation"],
        default=None,
        help="ablation: factual-ablation probe of a fid/causal editor on `purr data make` rows",
    )
    common(p, index=False)


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval edits`` (or its ``--probe ablation``); the metrics it prints."""
    from editor.config import dump_config, editor_name, editor_overrides, load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline
    from retrieval.files import GracefulStop

    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit must be >= 1, got {args.limit}")
    src = Path(args.data)
    if not src.is_file():
        raise ValueError(f"{src}: no such file")
    overrides = list(args.overrides)
    if args.editor is not None:
        choice = "identity" if args.editor == ORACLE else args.editor
        overrides = [*editor_overrides(choice), *overrides]
    cfg = load_config(args.config, overrides)
    if args.probe == "ablation":
        return _probe(cfg, src, Path(args.out), args.limit)
    editor = args.editor if args.editor == ORACLE else editor_name(cfg.editor)
    out = Path(args.out)
    if not args.retry_degraded:  # which keeps the rows on purpose and redoes the degraded
        _same_config(out, dump_config(cfg))
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "config.yaml", dump_config(cfg))
    pipeline = Pipeline(Components(cfg, index_path=args.index))
    with GracefulStop() as stop:
        metrics = run_eval(
            pipeline, src, out, editor, args.limit, stop=stop, retry_degraded=args.retry_degraded
        )
    if stop.requested:
        metrics["stopped"] = stopped(stop, metrics["resume"]["written"])
    return metrics


def _same_config(out: Path, config: str) -> None:
    """Refuse to resume into ``out`` when its rows were written under another configuration
    (a resumed run skips the rows already there, and would report them as this run's)."""
    saved, results = out / "config.yaml", out / "results.jsonl"
    if not (saved.is_file() and results.is_file() and results.stat().st_size):
        return
    if saved.read_text("utf-8") != config:
        raise ValueError(
            f"{out} holds rows edited under another configuration ({saved} differs), and a "
            f"resumed run would report them as its own: give a new --out, delete {results} to "
            "start over, or pass --retry-degraded to keep its rows and redo only the degraded"
        )


def render(report: dict[str, Any]) -> str:
    """What ``purr eval edits`` prints: the metrics, and the first rows it could not read."""
    if "margins" in report:  # the ablation probe
        return json.dumps({k: v for k, v in report.items() if k != "margins"}, indent=2)
    text = json.dumps({k: v for k, v in report.items() if k != "bad_rows"}, indent=2)
    if report["bad_rows"]:
        text += f"\n{len(report['bad_rows'])} rows skipped: {report['bad_rows'][:3]}"
    return text


def _probe(cfg: Any, src: Path, out: Path, limit: int | None) -> dict[str, Any]:
    from editor.revision.editors.base import build as build_editor
    from training.data.seeds import read_editor_rows
    from training.eval.probe import ablation_probe, write_probe

    if cfg.editor.type not in {"fid", "causal"}:
        raise ValueError(
            f"--probe ablation scores a trained editor: use --editor fid or causal "
            f"(got {cfg.editor.type})"
        )

    def no_model() -> Any:  # fid and causal editors need neither an attribution model nor an LLM
        raise RuntimeError("not used by trained editors")

    editor = build_editor(cfg.editor, no_model, no_model, cfg.llm)
    rows = read_editor_rows(src)[:limit]
    report = ablation_probe(editor, rows, getattr(editor, "max_evidence", 4))
    write_probe(report, out)
    return report
