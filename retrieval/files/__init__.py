"""Durable files for every long job: the one JSONL row journal (``jsonl``), artefacts written
beside their target and renamed into place (``atomic``), graceful stops on SIGTERM/Ctrl-C
(``interrupt``) and the one-line messages for a full disk or an unwritable path (``errors``).
"""

from retrieval.files.atomic import (
    atomic_dir,
    atomic_file,
    save_png,
    swap_in,
    temp_sibling,
    write_bytes,
    write_text,
)
from retrieval.files.errors import OutputError, output_error
from retrieval.files.interrupt import GracefulStop
from retrieval.files.jsonl import JournalSummary, RowJournal, read_rows

__all__ = [
    "GracefulStop",
    "JournalSummary",
    "OutputError",
    "RowJournal",
    "atomic_dir",
    "atomic_file",
    "output_error",
    "read_rows",
    "save_png",
    "swap_in",
    "temp_sibling",
    "write_bytes",
    "write_text",
]
