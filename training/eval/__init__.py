"""The evaluations, ``purr eval NAME`` → ``training/eval/NAME.py`` (the contract is in
``base.py``). ``EVALUATIONS`` is the one list the CLI and the docs read, in the order
``purr eval --help`` shows them.
"""

EVALUATIONS = (
    "edits",
    "attribution",
    "fusion",
    "retrieval",
    "slots",
    "citations",
    "nuggets",
    "factuality",
    "extraction",
    "language",
    "audit",
    "paraphrase",
    "calibration",
    "spans",
    "rules",
    "flags",
    "reader",
    "reader_layers",
    "confidence",
)
"""Module names under ``training.eval``, each with ``EVALUATION``, ``add_cli_args`` and ``main``."""
