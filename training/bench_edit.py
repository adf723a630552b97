"""``purr bench research``: the queries each generator writes for a passage, and latency by stage."""

from __future__ import annotations

import statistics
import time

DEFAULT_PASSAGE = (
    "The Eiffel Tower was built from 1887 to 1889 as the entrance to the 1889 World's Fair. "
    "It was designed by the company of Gustave Eiffel. It is 330 metres tall."
)


def bench_research(
    text: str,
    index: str | None,
    generators: list[str],
    runs: int,
    config: str,
    overrides: list[str],
) -> dict:
    from editor.config import load_config
    from editor.factory import Components

    report: dict = {"text": text, "runs": runs, "generators": {}}
    shared = None
    for gen in generators:
        cfg = load_config(config, [*overrides, f"querygen.type={gen}"])
        comp = Components(cfg, index_path=index, progress=False)
        if shared is not None:  # reuse the opened index and models across generators
            comp.__dict__["index"] = shared.index
            comp.__dict__["reranker"] = shared.reranker
        results = comp.researcher.research(text)  # warm-up: loads models
        timings = []
        for _ in range(runs):
            t = time.perf_counter()
            run = comp.researcher.run([text])
            total = (time.perf_counter() - t) * 1000
            results, tm = run.results[0], run.timings
            timings.append(
                {
                    "querygen": tm.querygen_ms,
                    "retrieval": tm.retrieval_ms,
                    "rerank": tm.rerank_ms,
                    "total": total,
                }
            )
        report["generators"][gen] = {
            "queries": [qe.query.text for qe in results],
            "evidence": [[f"{e.title}: {e.text[:80]}" for e in qe.evidence] for qe in results],
            "median_ms": {
                k: round(statistics.median(t[k] for t in timings), 1) for k in timings[0]
            },
        }
        shared = comp
    return report
