"""``purr bench edit``: end-to-end latency by stage over 3-sentence passages, each editor
against the identity baseline measured in the same run (p50/p95 over passages); JSON to stdout
and ``--out``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from training.args import option
from training.bench.base import Benchmark, config_flags, out_flag, save_report


def bench_edit(
    passages: list[Any], editors: list[str], config: str, overrides: list[str], index: str | None
) -> dict[str, Any]:
    """Latency by stage of ``Pipeline.edit`` per editor (the identity editor is the baseline:
    research + report without revision), p50/p95 over the passages after one warm-up.
    ``passages``: texts, or (text, context, evidence) rows; an editor ``NAME@KEY=VALUE`` is
    NAME with that setting too (``substitute+causal@judge.reader.enabled=false``)."""
    from editor.config import editor_overrides, load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline

    report: dict[str, Any] = {"passages": len(passages), "editors": {}}
    shared: Components | None = None
    attribution = None
    for name in editors:
        kind, *extra = name.split("@")
        chosen = [f"judge.type={kind[6:]}"] if kind.startswith("judge:") else editor_overrides(kind)
        chosen += extra
        cfg = load_config(config, [*chosen, *overrides])
        comp = Components(cfg, index_path=index, progress=False)
        if shared is not None:  # one index, and one research stage where theirs is the same
            same = all(
                getattr(shared.cfg, k) == getattr(cfg, k)
                for k in ("rerank", "research", "querygen")
            )
            for key in ("index", "reranker", "researcher", "querygen") if same else ("index",):
                if key in shared.__dict__:
                    comp.__dict__[key] = shared.__dict__[key]
        pipe = Pipeline(comp, attribution=attribution)
        rows = [(p, None, None) if isinstance(p, str) else p for p in passages]
        pipe.edit(*rows[0])  # warm-up: loads every model
        stages: dict[str, list[float]] = {}
        statuses: dict[str, int] = {}
        for row in rows:
            r = pipe.edit(*row)
            statuses[r.status] = statuses.get(r.status, 0) + 1
            for k, v in r.timings_ms.items():
                stages.setdefault(k, []).append(v)
            stages.setdefault("total", []).append(sum(r.timings_ms.values()))
        report["editors"][name] = {
            "statuses": statuses,
            "ms": {
                k: {
                    "p50": round(float(np.percentile(v, 50)), 1),
                    "p95": round(float(np.percentile(v, 95)), 1),
                }
                for k, v in stages.items()
            },
        }
        shared, attribution = comp, pipe.attribution
    base = report["editors"].get("identity")
    if base:
        for r in report["editors"].values():
            r["total_p50_vs_identity"] = round(
                r["ms"]["total"]["p50"] / base["ms"]["total"]["p50"], 2
            )
    return report


def bench_passages(data: str | None, n: int) -> list[Any]:
    """``n`` passages: a JSONL file's rows as (``text``, ``context``, ``evidence``), or the
    planted dev set's texts (seed 1)."""
    if data:
        from retrieval.corpus import read_utf8

        rows = [json.loads(x) for x in read_utf8(Path(data)).splitlines() if x.strip()]
        passages = [
            (r["text"], r.get("context"), r.get("evidence"))
            for r in rows
            if isinstance(r, dict) and isinstance(r.get("text"), str)
        ]
    else:
        from retrieval.corpus import read_wiki_summaries
        from training.data.planted import make_planted

        passages = [
            r["text"] for r in make_planted(read_wiki_summaries(), n, seed=1, progress=False)
        ]
    if not passages:
        raise ValueError(f"{data}: no rows with a 'text' string")
    return passages[:n]


BENCHMARK = Benchmark("edit", "latency by stage of purr edit over 3-sentence passages")


def add_cli_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data", default=None, help="JSONL with a 'text' field (default: 20 planted-set passages)"
    )
    option(p, "--n", int, 20, "passages")
    p.add_argument(
        "--editors",
        default="identity,substitute",
        help="comma-separated editor types (X or X+FALLBACK), or judge:NAME for a judge "
        "(judge:span, judge:learned) with the config's editor",
    )
    p.add_argument("--index", default=None)
    config_flags(p)
    out_flag(p, "edit")


def main(args: argparse.Namespace) -> dict[str, Any]:
    if args.n < 1:
        raise ValueError(f"--n must be >= 1, got {args.n}")
    passages = bench_passages(args.data, args.n)
    editors = [e.strip() for e in args.editors.split(",") if e.strip()]
    report = bench_edit(passages, editors, args.config, args.overrides, args.index)
    save_report(report, args.report_file)
    return report
