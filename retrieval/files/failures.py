"""A folder written beside its target and swapped in: on any failure the temporary is removed,
and a write the filesystem refused (a full disk, a quota, a read-only or forbidden path) is one
line naming the target, the space needed and the space free, whichever layer hit it.

``retrieval.files.errors.write_errno`` finds the errno however the library that hit it wrapped
it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from retrieval.files.atomic import tree_bytes
from retrieval.files.errors import output_error, write_errno


@contextmanager
def writing(out: Path, tmp: Path) -> Iterator[None]:
    """The block writes ``tmp`` and swaps it in as ``out``; ``tmp`` never outlives it."""
    try:
        yield
    except BaseException as e:
        written = tree_bytes(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
        number = write_errno(e)
        if number is None:
            raise
        refused = OSError(number, os.strerror(number))
        kept = f"{out} is unchanged" if out.exists() else f"nothing was written to {out}"
        raise output_error(refused, out, kept, written, more=True) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


__all__ = ["writing"]
