"""``purr bench integrations``: the overhead of the LangChain runnable (``PurrEdit``) and the
LlamaIndex wrapper (``PurrQueryEngine``) against calling ``Pipeline.edit`` directly, on the same
answers and documents, one pipeline, the three paths interleaved row by row: p50 over rows and
runs, each path's ratio to the direct call, and the median of each answer's own ratio. It also
counts rows whose result differs between the paths: the wrappers must not change an edit.

Rows: ``--data`` JSONL with the answer (``sentence`` or ``text``) and its documents
(``evidence``: a string or a list), e.g. ``purr data judge-rows``' BUMP test rows; by default the
planted set's passages, each with its reference passage and two others as the documents.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from training.args import option
from training.bench.base import Benchmark, config_flags, out_flag, save_report

BENCHMARK = Benchmark(
    "integrations", "LangChain and LlamaIndex wrappers against Pipeline.edit (overhead ratio)"
)
PATHS = ("direct", "langchain", "llamaindex")


def bench_rows(data: str | None, n: int) -> list[dict[str, Any]]:
    """``n`` rows ``{answer, documents, question}``."""
    if data:
        from retrieval.corpus import read_utf8

        rows = [json.loads(x) for x in read_utf8(Path(data)).splitlines() if x.strip()]
        out = []
        for r in rows:
            answer, evidence = r.get("sentence") or r.get("text"), r.get("evidence")
            if not isinstance(answer, str) or not evidence:
                continue
            docs = [evidence] if isinstance(evidence, str) else list(evidence)
            out.append({"answer": answer, "documents": docs, "question": r.get("context")})
        if not out:
            raise ValueError(
                f"{data}: no rows with an answer ('sentence' or 'text') and 'evidence'"
            )
        return out[:n]
    from retrieval.corpus import read_wiki_summaries
    from training.data.planted import make_planted

    planted = make_planted(read_wiki_summaries(), n + 2, seed=1, progress=False)
    refs = [r["reference"] for r in planted]
    return [
        {"answer": r["text"], "documents": [refs[i], refs[i + 1], refs[i + 2]], "question": None}
        for i, r in enumerate(planted[:n])
    ]


def bench_integrations(
    rows: list[dict[str, Any]], runs: int, config: str, overrides: list[str], index: str | None
) -> dict[str, Any]:
    from langchain_core.documents import Document
    from llama_index.core.base.response.schema import Response
    from llama_index.core.query_engine import CustomQueryEngine
    from llama_index.core.schema import NodeWithScore, TextNode
    from tqdm import tqdm

    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline
    from serve.integrations.langchain import PurrEdit
    from serve.integrations.llamaindex import PurrQueryEngine

    class Answered(CustomQueryEngine):
        """A query engine whose answer and nodes are fixed: only the wrapper is measured."""

        answer: str
        nodes: list

        def custom_query(self, query_str: str) -> Response:
            return Response(self.answer, list(self.nodes), {})

    pipeline = Pipeline(Components(load_config(config, overrides), index_path=index))
    runnable = PurrEdit(pipeline)

    def direct(row):
        return pipeline.edit(row["answer"], row["question"], evidence=row["documents"]).revised

    def langchain(row):
        docs = [Document(d) for d in row["documents"]]
        value = {"answer": row["answer"], "context": docs, "question": row["question"]}
        return runnable.invoke(value).content

    def llamaindex(row):
        nodes = [NodeWithScore(node=TextNode(text=d), score=1.0) for d in row["documents"]]
        engine = PurrQueryEngine(Answered(answer=row["answer"], nodes=nodes), pipeline)
        return str(engine.query(row["question"] or ""))  # no question: no context

    paths = {"direct": direct, "langchain": langchain, "llamaindex": llamaindex}
    for fn in paths.values():  # warm-up: every model loaded before any timing
        fn(rows[0])
    ms: dict[str, list[float]] = {p: [] for p in PATHS}
    differ, edited = 0, 0
    for run in range(runs):
        for row in tqdm(rows, desc=f"integrations run {run + 1}/{runs}", unit="row"):
            out = {}
            order = PATHS[run % 3 :] + PATHS[: run % 3]  # each path first in turn
            for name in order:
                t = time.perf_counter()
                out[name] = paths[name](row)
                ms[name].append((time.perf_counter() - t) * 1000)
            if run == 0:
                differ += len(set(out.values())) > 1
                edited += out["direct"] != row["answer"]
    direct_ms = np.array(ms["direct"])
    paired = {p: round(float(np.median(np.array(ms[p]) / direct_ms)), 3) for p in PATHS}
    return overhead(len(rows), runs, ms, paired, edited, differ)


def overhead(
    rows: int, runs: int, ms: dict[str, list[float]], paired: Any, edited: int, differ: int
) -> dict[str, Any]:
    """A wrapper-overhead report: rows, passes, each path's p50 and p95 ms (``ms``: per answer),
    its p50 against the direct call's, ``paired`` (the median of each answer's own ratio: the
    same row, run and pipeline state), rows edited, and rows whose result differs by path."""
    p50 = {p: float(np.percentile(v, 50)) for p, v in ms.items()}
    return {
        "rows": rows,
        "runs": runs,
        "ms": {
            p: {"p50": round(p50[p], 1), "p95": round(float(np.percentile(v, 95)), 1)}
            for p, v in ms.items()
        },
        "p50_vs_direct": {p: round(p50[p] / p50["direct"], 3) for p in ms},
        "paired_ratio_p50": paired,
        "rows_edited": edited,
        "rows_whose_result_differs": differ,
    }


def plot_paths(
    report: dict[str, Any], png: Path, paths: tuple[str, ...], colours: list[str]
) -> None:
    """Each path's p50 per answer, its ratio to the direct call above its bar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from retrieval.files import save_png

    fig, ax = plt.subplots(figsize=(1.7 * len(paths), 3))
    values = [report["ms"][p]["p50"] for p in paths]
    ax.bar(paths, values, color=colours)
    for i, p in enumerate(paths):
        ax.text(i, values[i], f"{report['p50_vs_direct'][p]:.3f}x", ha="center", va="bottom")
    ax.set_ylim(0, max(values) * 1.2)  # room for the ratios above the bars
    ax.set_ylabel("p50 ms per answer")
    ax.set_title(f"{report['rows']} answers x {report['runs']} runs")
    fig.tight_layout()
    save_png(fig, png)


def plot(report: dict[str, Any], png: Path) -> None:
    plot_paths(report, png, PATHS, ["grey", "tab:green", "tab:purple"])


def row_bench(
    name: str, run: Callable[..., dict[str, Any]], draw: Callable[[dict[str, Any], Path], None]
) -> tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], dict]]:
    """``add_cli_args`` and ``main`` of a wrapper-overhead benchmark over rows (this one,
    ``mcp``): the rows, passes and index as flags; ``run(rows, runs, config, overrides, index)``
    measures and ``draw(report, png)`` plots the saved report."""

    def add_cli_args(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--data",
            default=None,
            help="JSONL rows with 'sentence' or 'text' and 'evidence' (default: planted passages)",
        )
        option(p, "--n", int, 20, "rows")
        option(p, "--runs", int, 3, "passes over the rows")
        p.add_argument("--index", default=None)
        config_flags(p)
        out_flag(p, name)

    def main(args: argparse.Namespace) -> dict[str, Any]:
        if args.n < 1 or args.runs < 1:
            raise ValueError(f"--n and --runs must be >= 1, got {args.n} and {args.runs}")
        rows = bench_rows(args.data, args.n)
        report = run(rows, args.runs, args.config, args.overrides, args.index)
        save_report(report, args.report_file, draw)
        return report

    return add_cli_args, main


add_cli_args, main = row_bench("integrations", bench_integrations, plot)
