"""``purr check``: each citation of a cited text checked against its sources (one text, or a
JSONL batch ``--input/--output`` of rows ``{id, text, sources: [{id, text, title?, url?}]}``,
written through the row journal: a killed run resumes)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from editor.verdicts import SUPPORTED
from training.args import switch

_COLOURS = {
    SUPPORTED: "green",
    "citation_not_supporting": "red",
    "needs_citation": "yellow",
    "needs_none": "dim",
    "unchecked": "dim",
}


def register(sub: argparse._SubParsersAction, common) -> None:
    p = sub.add_parser(
        "check", help="check a cited text's citations against its sources ([1], [^2], [1, 3])"
    )
    p.add_argument("text", nargs="?", default=None, help="the cited text (or use --input)")
    p.add_argument(
        "--source",
        action="append",
        default=None,
        help="a source's text (repeatable; the first is [1], the second [2], ...)",
    )
    p.add_argument(
        "--sources", default=None, help="sources file: JSONL rows or a JSON list of {id, text}"
    )
    p.add_argument("--input", default=None, help="JSONL rows {id, text, sources: [...]}")
    p.add_argument("--output", default=None, help="JSONL results (with --input)")
    switch(
        p,
        "--qa",
        "also score QA-based factuality (MAFE): questions from the text answered from the sources",
    )
    p.add_argument(
        "--reference", default=None, help="a reference answer: MAFE's recall of it (implies --qa)"
    )
    switch(p, "--json", "print the check as JSON")
    common(p)
    p.set_defaults(handler=cmd_check)


def read_sources_file(path: Path) -> list[Any]:
    from retrieval.corpus import read_utf8

    if not path.is_file():
        raise ValueError(f"--sources {path}: no such file")
    text = read_utf8(path)
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"--sources {path}: invalid JSON ({e.msg}, line {e.lineno})") from None
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"--sources {path}:{n}: invalid JSON ({e.msg})") from None
    return rows


def cmd_check(args: argparse.Namespace) -> int:
    from editor.config import load_config
    from editor.factory import Components
    from editor.inputs import InputError
    from editor.pipeline import Pipeline

    if (args.text is None) == (args.input is None):
        raise ValueError('pass a text (purr check "TEXT" --source ...) or --input FILE, not both')
    cfg = load_config(args.config, list(args.overrides))
    pipeline = Pipeline(Components(cfg, index_path=args.index))
    if args.input is not None:
        if args.output is None:
            raise ValueError("--input needs --output FILE for the results")
        return check_file(pipeline, Path(args.input), Path(args.output))
    sources: list[Any] = list(args.source or [])
    if args.sources:
        sources += read_sources_file(Path(args.sources))
    if not sources:
        raise ValueError(
            "pass the sources the text cites: --source TEXT (repeatable) or --sources FILE"
        )
    try:
        result = pipeline.check(args.text, sources, args.qa, args.reference)
    except InputError as e:
        raise ValueError(str(e)) from None
    if args.json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        show(result.to_json())
    return 0 if result.status == "checked" else 1


def check_file(pipeline, src: Path, dst: Path) -> int:
    """Check every row of ``src`` into ``dst`` (a row journal); bad rows get ``{id, error}``."""
    from tqdm.auto import tqdm

    from editor.inputs import InputError
    from retrieval.corpus import read_utf8
    from retrieval.files import GracefulStop, RowJournal
    from serve.cli.common import interrupted

    if not src.is_file():
        raise ValueError(f"--input {src}: no such file")
    rows = []
    for n, line in enumerate(read_utf8(src).splitlines(), 1):
        if line.strip():
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as e:
                raw = {"id": str(n), "_error": f"line {n}: invalid JSON ({e.msg})"}
            if not isinstance(raw, dict):
                raw = {"id": str(n), "_error": f"line {n}: expected a JSON object"}
            rows.append((str(raw.get("id", n)), raw))
    counts = {"checked": 0, "degraded": 0, "bad_rows": 0}
    with RowJournal(dst) as journal, GracefulStop() as stop:
        for rid, raw in tqdm(list(journal.pending(rows, key=lambda r: r[0])), desc="check"):
            if stop.requested:
                break
            try:
                if "_error" in raw:
                    raise InputError(raw["_error"])
                result = pipeline.check(
                    raw.get("text"),
                    raw.get("sources", []),
                    bool(raw.get("qa")),
                    raw.get("reference"),
                )
                out = {"id": rid, **result.to_json()}
                counts[result.status] += 1
            except InputError as e:
                out = {"id": rid, "error": str(e)}
                counts["bad_rows"] += 1
            journal.write(out)
    print(json.dumps({**journal.summary().to_json(), **counts, "output": str(dst)}, indent=2))
    return interrupted(stop, journal.written) if stop.requested else 0


def show(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape

    from editor.policy import answers_agree

    console = Console()
    for s in report["sentences"]:
        colour = _COLOURS.get(s["outcome"], "white")
        console.print(f"[{colour}]{s['outcome']:>24}[/] {escape(s['text'])}", highlight=False)
        for v in s["verdicts"]:
            console.print(
                f"{'':>24}   [{escape(v['source_id'])}] {v['label']}: {escape(v['reason'])}",
                highlight=False,
            )

    for f in report.get("findings") or ():  # the words a source flags, with offsets
        whole = any(f["text"] == s["text"] for s in report.get("sentences") or ())
        if f["source_id"] is not None and f["start"] is not None and not whole:
            says = (
                f"the source states {escape(repr(f['fix']))}"
                if f["fix"]
                else "the source does not state it"
            )
            console.print(
                f"[yellow]flagged:[/] {escape(repr(f['text']))} ({f['kind']}, characters "
                f"{f['start']}-{f['end']}) by [{escape(str(f['source_id']))}]; {says}",
                highlight=False,
            )

    def fmt(x):
        return "n/a" if x is None else f"{x:.2f}"

    console.print(
        f"\ncitation precision {fmt(report['citation_precision'])}, citation recall "
        f"{fmt(report['citation_recall'])}"
    )
    if report["unknown_markers"]:
        console.print(
            f"[yellow]markers naming no source:[/] {', '.join(report['unknown_markers'])}"
        )
    qa = report.get("mafe")
    if qa:
        console.print(
            f"QA-based factuality (MAFE): precision {fmt(qa['precision'])} over "
            f"{len(qa['questions'])} questions"
            + (f", recall {fmt(qa['recall'])}" if qa["recall"] is not None else "")
        )
        for q in qa["questions"]:
            if not answers_agree(q["same_value"], q["f1"]):
                console.print(
                    f"  [yellow]{escape(q['question'])}[/] text: {escape(q['expected'])}; "
                    f"sources: {escape(str(q['answer']))}",
                    highlight=False,
                )
    for w in report["warnings"]:
        if not w.startswith("marker ["):
            console.print(f"[yellow]warning:[/] {escape(w)}")
    sys.stdout.flush()
