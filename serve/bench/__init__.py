"""The benchmarks of the service (cold start, crash safety, Ray batches, load, web research).

``BENCHMARKS`` is the one list of every ``purr bench NAME``, here and in ``training.bench``,
that the CLI and the docs read, in the order ``purr bench --help`` shows them.
"""

BENCHMARKS = (
    ("retrieval", "training.bench.retrieval"),
    ("research", "training.bench.research"),
    ("evidence", "training.bench.evidence"),
    ("attribution", "training.bench.attribution"),
    ("span-judge", "training.bench.span_judge"),
    ("edit", "training.bench.edit"),
    ("serve", "serve.bench.serve"),
    ("cold-start", "serve.bench.cold_start"),
    ("batch", "training.bench.batch"),
    ("crash", "serve.bench.crash"),
    ("schema", "serve.bench.schema"),
    ("check", "training.bench.check"),
    ("web", "serve.bench.web"),
    ("milvus", "training.bench.milvus"),
    ("ray", "serve.bench.ray_batch"),
    ("integrations", "serve.bench.integrations"),
    ("mcp", "serve.bench.mcp"),
)
"""``(name, module)``: each module has ``BENCHMARK``, ``add_cli_args`` and ``main``."""
