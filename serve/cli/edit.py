"""``purr edit``: one passage (coloured diff, cited revision, evidence, scores; or ``--json``)
or a JSONL batch (``--input in.jsonl --output out.jsonl``: rows ``{id, text, context?,
evidence?}``, other fields carried through, progress bar; rows that cannot be edited go to
``<output>.errors.jsonl`` with the reason and the rest of the file is processed). The output is a
``RowJournal``: a killed run resumes with the same command, no row lost or doubled.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from serve.cli.common import add_ray_args, ray_job
from serve.cli.edit_view import show
from training.args import switch


def register(sub: argparse._SubParsersAction, common) -> None:
    p = sub.add_parser("edit", help="research and revise a passage; print the attribution report")
    p.add_argument("text", nargs="?", default=None, help="the passage (or use --input)")
    p.add_argument("--context", default=None, help="the dialogue the passage answers")
    p.add_argument(
        "--evidence",
        action="append",
        default=None,
        help="evidence text (repeatable; skips research)",
    )
    p.add_argument(
        "--source",
        action="append",
        default=None,
        help="a source the text cites (repeatable; the first is [1]): repair its citations",
    )
    p.add_argument(
        "--sources",
        default=None,
        help="the sources the text cites, a file (JSONL rows or a JSON list of {id, text, "
        "title?, url?}): check each citation and repair what they do not support",
    )
    switch(
        p,
        "--research-uncited",
        "with sources: research the claims they cannot settle in the index and cite what "
        "is found as new sources (citations.research)",
    )
    p.add_argument(
        "--input", default=None, help="JSONL rows {id, text, context?, evidence?, sources?}"
    )
    p.add_argument("--output", default=None, help="JSONL results (with --input)")
    switch(
        p,
        "--retry-degraded",
        "with --input: redo rows an earlier run left 'degraded' (a timeout, an upstream down)",
    )
    p.add_argument(
        "--editor",
        default=None,
        help="editor type alone (substitute, causal, ...) or TYPE+FALLBACK (default: the "
        "config's, substitute+causal)",
    )
    switch(
        p,
        "--apply-unsure",
        "apply the fixes the judge is unsure of too (otherwise printed as 'unsure: ...' "
        "suggestions; judge.apply_unsure)",
    )
    switch(p, "--json", "print the result contract as JSON")
    add_ray_args(p, batch_size=True)
    common(p)
    p.set_defaults(handler=cmd_edit)


def cmd_edit(args: argparse.Namespace) -> int:
    from editor.config import editor_overrides, load_config
    from editor.factory import Components
    from editor.inputs import InputError
    from editor.pipeline import Pipeline

    if (args.text is None) == (args.input is None):
        raise ValueError('pass a passage (purr edit "TEXT") or --input FILE, not both or neither')
    if args.input is not None and (args.source or args.sources):
        raise ValueError("with --input, give each row its own 'sources' field")
    if args.input is not None and args.output is None:
        raise ValueError("--input needs --output FILE for the results")
    overrides = list(args.overrides)
    if args.research_uncited:
        overrides.append("citations.research=true")
    if args.apply_unsure:
        overrides.append("judge.apply_unsure=true")
    if args.editor:
        overrides = [*editor_overrides(args.editor), *overrides]
    cfg = load_config(args.config, overrides)
    if args.verbose:  # what this install leaves out of the config (also: purr info)
        from editor.installed import skipped

        for part in skipped(cfg):
            print(f"purr edit: note: {part}", file=sys.stderr)
    pipeline = Pipeline(Components(cfg, index_path=args.index))
    job = ray_job(args)
    if job is not None and args.input is None:
        raise ValueError("--ray runs batches: pass --input FILE --output FILE")
    if args.input is not None:
        return edit_file(
            pipeline, Path(args.input), Path(args.output), args.retry_degraded, job, args.index
        )
    sources: list[Any] | None = None
    if args.source or args.sources:
        from serve.cli.check import read_sources_file

        sources = list(args.source or [])
        if args.sources:
            sources += read_sources_file(Path(args.sources))
    try:
        result = pipeline.edit(args.text, args.context, args.evidence, sources)
    except InputError as e:
        raise ValueError(str(e)) from None
    if args.json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        show(result)
    return 0


# -- batch ------------------------------------------------------------------------------------


def _row(raw: Any, lineno: int) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ValueError(f"line {lineno}: expected a JSON object")
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"line {lineno}: field 'text' is missing or empty")
    ctx = raw.get("context")
    if ctx is not None and not isinstance(ctx, str):
        raise ValueError(f"line {lineno}: field 'context' must be a string")
    ev = raw.get("evidence")
    if isinstance(ev, str):
        ev = [ev]
    if ev is not None and not (isinstance(ev, list) and all(isinstance(e, str) for e in ev)):
        raise ValueError(f"line {lineno}: field 'evidence' must be a string or a list of strings")
    src = raw.get("sources")
    if src is not None and not isinstance(src, list):
        raise ValueError(f"line {lineno}: field 'sources' must be a list of {{id, text}} objects")
    return {
        "id": str(raw.get("id", lineno)),
        "text": text,
        "context": ctx,
        "evidence": ev,
        "sources": src,
    }


def _edit_one(pipeline, row: dict[str, Any]) -> tuple[str, Any]:
    """``("ok", result json)`` for a parsed row, or ``("error", reason)`` for unusable input."""
    from editor.inputs import InputError

    try:
        result = pipeline.edit(row["text"], row["context"], row["evidence"], row["sources"])
    except InputError as e:
        return "error", str(e)
    return "ok", result.to_json()


def edit_rows_worker(cfg_json: dict[str, Any], index: str | None):
    """A Ray worker: one pipeline, built once, editing batches of parsed rows into
    ``("ok", result json)`` or ``("error", reason)``."""
    from editor.config import PipelineConfig
    from editor.factory import Components
    from editor.pipeline import Pipeline

    pipeline = Pipeline(
        Components(PipelineConfig.model_validate(cfg_json), index_path=index, progress=False)
    )
    pipeline.prepare()

    def run(rows: list[dict[str, Any]]) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        for row in rows:
            out.append(_edit_one(pipeline, row))
        return out

    return run


def _edit_results(pipeline, todo, stop, job, index):
    """(row, raw, ("ok", result json) | ("error", reason)) for every pending row, in order:
    in this process, or on Ray actors with ``job``."""

    if job is None:
        for row, raw in todo:
            if stop.requested:
                return
            yield row, raw, _edit_one(pipeline, row)
        return
    from functools import partial

    from training.jobs.ray_pool import ray_map

    make = partial(edit_rows_worker, pipeline.cfg.model_dump(mode="json"), index)
    batches = (todo[i : i + job.batch_size] for i in range(0, len(todo), job.batch_size))
    rows_only = lambda batch: [row for row, _ in batch]  # noqa: E731
    for batch, results in ray_map(job, make, batches, lambda: stop.requested, payload=rows_only):
        for (row, raw), outcome in zip(batch, results, strict=True):
            yield row, raw, outcome


def edit_file(
    pipeline,
    src: Path,
    dst: Path,
    retry_degraded: bool = False,
    job=None,
    index: str | None = None,
) -> int:
    """Edit every row of ``src`` into ``dst`` through the row journal: rows already there are
    skipped, a cut last line is moved aside and redone, ``retry_degraded`` redoes rows that came
    back degraded. SIGTERM or Ctrl-C finishes the row in hand and prints how to resume. With a
    ``RayJob``, the rows run on Ray actors and this process alone writes them, in order."""
    from tqdm.auto import tqdm

    from editor.factory import first_use_work
    from retrieval.corpus import read_utf8
    from retrieval.files import GracefulStop, RowJournal, write_text
    from serve.cli.common import interrupted
    from training.jobs.ray_pool import session

    if not src.is_file():
        raise ValueError(f"--input {src}: no such file")
    errors_path = dst.with_name(dst.name + ".errors.jsonl")
    rows, errors = [], []
    for lineno, line in enumerate(read_utf8(src).splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            rows.append((_row(raw, lineno), raw))
        except json.JSONDecodeError as e:
            errors.append({"line": lineno, "error": f"line {lineno}: invalid JSON ({e.msg})"})
        except ValueError as e:
            errors.append({"line": lineno, "error": str(e)})
    counts = {"edited": 0, "unchanged": 0, "degraded": 0}
    redo = (lambda r: r.get("status") == "degraded") if retry_degraded else None
    with session(job):
        if job is not None:
            for item in first_use_work(pipeline.components):  # once here, not once per actor
                item.run()
            if pipeline.cfg.research.source != "web":
                _ = pipeline.components.index  # a bad --index fails here, not in every actor
        with RowJournal(dst, redo=redo) as journal, GracefulStop() as stop:
            todo = list(journal.pending(rows, key=lambda pair: pair[0]["id"]))
            with tqdm(total=len(todo), desc="edit", unit="row") as bar:
                for row, raw, (kind, value) in _edit_results(pipeline, todo, stop, job, index):
                    bar.update(1)
                    if kind == "error":
                        errors.append({"line": None, "id": row["id"], "error": value})
                        continue
                    counts[value["status"]] += 1
                    extra = {
                        k: v
                        for k, v in raw.items()
                        if k not in {"text", "context", "evidence", "sources"}
                    }
                    journal.write({**extra, "id": row["id"], **value})
    if errors:
        write_text(errors_path, "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in errors))
    summary = {
        "input_rows": len(rows) + len(errors),
        **journal.summary().to_json(),
        **counts,
        "bad_rows": len(errors),
        "output": str(dst),
        "errors": str(errors_path) if errors else None,
    }
    print(json.dumps(summary, indent=2))
    return interrupted(stop, journal.written) if stop.requested else 0
