"""``purr bench mcp``: the overhead of an MCP tool call (``edit_answer`` through the official
SDK's client and server: JSON-RPC, argument validation, the service's worker thread, the result
built and serialised) against calling ``Pipeline.edit`` directly, on the same answers and
documents, one pipeline, the two paths interleaved row by row (each first in turn): p50 over
rows and runs, the ratio, the median of each answer's own ratio, and the rows whose revision
differs between the paths (the tool must not change an edit).

Rows as ``purr bench integrations`` reads them (``--data``, or the planted set's passages with
three reference passages as the documents). The client talks to the server in process (the
SDK's memory transport), so the two paths share the models, the index and the cores.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from serve.bench.integrations import overhead, plot_paths, row_bench
from training.bench.base import Benchmark

BENCHMARK = Benchmark("mcp", "an MCP edit_answer call against Pipeline.edit (overhead ratio)")
PATHS = ("direct", "mcp")


def bench_mcp(
    rows: list[dict[str, Any]], runs: int, config: str, overrides: list[str], index: str | None
) -> dict[str, Any]:
    import anyio
    from mcp import Client
    from tqdm import tqdm

    from editor.config import load_config
    from editor.factory import Components
    from editor.pipeline import Pipeline
    from serve.edit.service import EditService
    from serve.mcp.server import build_server
    from serve.mcp.tools import AgentTools
    from serve.settings import ServeSettings

    pipeline = Pipeline(Components(load_config(config, overrides), index_path=index))
    # no research cache: a repeated row costs the tool what it costs the direct call
    service = EditService(pipeline, ServeSettings(research_cache=0, warmup=False))
    server = build_server(AgentTools(service))
    ms: dict[str, list[float]] = {p: [] for p in PATHS}
    differ = edited = 0

    def direct(row: dict[str, Any]) -> str:
        return pipeline.edit(row["answer"], row["question"], evidence=row["documents"]).revised

    async def run_all() -> None:
        nonlocal differ, edited
        async with Client(server, read_timeout_seconds=600) as client:

            async def tool(row: dict[str, Any]) -> str:
                args: dict[str, Any] = {"text": row["answer"]}
                args["documents"] = [{"text": d} for d in row["documents"]]
                if row["question"]:
                    args["question"] = row["question"]
                result = await client.call_tool("edit_answer", args)
                if result.is_error:
                    raise RuntimeError(f"edit_answer failed: {result.structured_content}")
                return str(result.structured_content["revised"])

            direct(rows[0]), await tool(rows[0])  # warm-up: every model loaded before timing
            for run in range(runs):
                for row in tqdm(rows, desc=f"mcp run {run + 1}/{runs}", unit="row"):
                    out = {}
                    for name in PATHS if run % 2 == 0 else PATHS[::-1]:
                        t = time.perf_counter()
                        out[name] = direct(row) if name == "direct" else await tool(row)
                        ms[name].append((time.perf_counter() - t) * 1000)
                    if run == 0:
                        differ += out["direct"] != out["mcp"]
                        edited += out["direct"] != row["answer"]

    try:
        anyio.run(run_all)
    finally:
        service.close()
    paired = float(np.median(np.array(ms["mcp"]) / np.array(ms["direct"])))
    return overhead(len(rows), runs, ms, round(paired, 3), edited, differ)


def plot(report: dict[str, Any], png: Path) -> None:
    plot_paths(report, png, PATHS, ["grey", "tab:blue"])


add_cli_args, main = row_bench("mcp", bench_mcp, plot)
