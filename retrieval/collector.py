"""Loading without the cyclic garbage collector walking the heap as it grows.

Importing torch, transformers or spaCy and building a model make hundreds of thousands of
objects that live as long as the process. While they are made, Python's collector runs a full
pass each time the heap has grown by a quarter, and every pass walks everything made so far:
about 0.8 s of a 4 s ``import torch, spacy, transformers.modeling_utils`` on a 2-core CPU.
``collector_paused`` turns the collector off for such a burst and then freezes what exists
(``gc.freeze``): later passes skip those objects, which are never garbage anyway.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off, then freeze every object there is and turn
    the collector back on. Where the collector is already off (an enclosing block, another
    thread's load), the block runs as it is and leaves the collector to whoever turned it off.
    Cycles that become garbage inside the block are frozen with the rest: a few MB, once per
    load.

    >>> with collector_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.collect()  # one pass for the whole burst: cycles made in it (frames of caught
        gc.freeze()  # exceptions holding tensors) go now; what stays is frozen
        gc.enable()
