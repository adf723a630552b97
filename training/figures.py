"""Figure helpers shared by the evaluations, trainers and benchmarks that draw a plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

P = TypeVar("P", str, Path)


def save_figure(fig: Any, path: P) -> P:
    """Lay ``fig`` out, write it to ``path`` as a PNG (atomically, ``save_png``) and close it;
    ``path``."""
    import matplotlib.pyplot as plt

    from retrieval.files import save_png

    fig.tight_layout()
    save_png(fig, path)
    plt.close(fig)
    return path
