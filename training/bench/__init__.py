"""The benchmarks of the research and training code, ``purr bench NAME`` (the contract is in
``base.py``; ``serve.bench.BENCHMARKS`` lists every benchmark)."""
