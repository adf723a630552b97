"""``purr eval language``: the language check (``editor.text.language``) on short English text
that carries foreign names, and on text in other languages, which it must refuse.

English rows, from the corpora (none written here): sentences of 3-20 words from the packaged
Wikipedia summaries and CLAPnq's passages with a letter outside ASCII (names such as "Nguyễn",
"Dvořák", "São Paulo"), and NQ-open's gold answers that hold one, as the bare answers a model
gives ("Pyotr Ilyich Tchaikovsky"). Other languages: ``training/eval/non_english.txt``, short
statements in 20 languages and scripts written here. Metrics: the false-refusal rate on English
(goal 0) and the refusal rate on the others, by language.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from retrieval.files import write_text
from training.args import option
from training.eval.base import Evaluation
from training.figures import save_figure

EVALUATION = Evaluation(
    name="language",
    help="the language check: false refusals of short English text with foreign names, "
    "refusals of other languages",
    primary="english_false_refusal_rate",
    higher_is_better=False,
)
NON_ENGLISH = Path(__file__).with_name("non_english.txt")


def _foreign(text: str) -> bool:
    return any(c.isalpha() and not c.isascii() for c in text)


def english_rows(data: Path, n: int, seed: int = 0) -> list[dict[str, str]]:
    """Up to ``n`` short English texts with a non-ASCII letter, from three corpora in turn."""
    from retrieval.corpus import jsonl_rows, read_wiki_summaries
    from retrieval.sentences import split

    def short(sentences) -> list[str]:
        return [s for s in sentences if 3 <= len(s.split()) <= 20 and _foreign(s)]

    wiki = short(s for d in read_wiki_summaries() for s in split(d.text))
    clapnq = short(
        s for _, r in jsonl_rows(data / "corpus" / "clapnq_dev.jsonl") for s in split(r["text"])
    )
    answers = []
    for name in ("NQ-open.dev.jsonl", "NQ-open.efficientqa.dev.1.1.jsonl"):
        for _, r in jsonl_rows(data / "raw" / "nq_open" / name):
            # an answer with no Latin letter ("功夫") is not English text
            answers += [a for a in r["answer"] if _foreign(a) and re.search("[A-Za-z]", a)]
    rng = random.Random(seed)
    pools = {"wikipedia": wiki, "clapnq": clapnq, "nq-open answer": sorted(set(answers))}
    for pool in pools.values():
        rng.shuffle(pool)
    rows: list[dict[str, str]] = []
    while len(rows) < n and any(pools.values()):
        for source, pool in pools.items():
            if pool and len(rows) < n:
                rows.append({"source": source, "language": "English", "text": pool.pop()})
    return rows


def other_rows(path: Path = NON_ENGLISH) -> list[dict[str, str]]:
    """The statements in other languages: ``language<TAB>text`` lines."""
    rows = []
    for line in path.read_text("utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            language, text = line.split("\t", 1)
            rows.append({"source": "written here", "language": language, "text": text})
    return rows


def run(data: Path, out: Path, n: int, seed: int = 0) -> dict[str, Any]:
    """Check every row, write ``results.jsonl``, ``metrics.json`` and ``language.png``."""
    from editor.text.language import check_language

    rows = english_rows(data, n, seed) + other_rows()
    for r in rows:
        verdict = check_language(r["text"])
        r["refused"] = not verdict.english
        r["reason"] = verdict.reason
    english = [r for r in rows if r["language"] == "English"]
    others = [r for r in rows if r["language"] != "English"]
    by_language: dict[str, list[bool]] = {}
    for r in others:
        by_language.setdefault(r["language"], []).append(r["refused"])
    metrics: dict[str, Any] = {
        "primary": EVALUATION.primary,
        "english_rows": len(english),
        "english_false_refusal_rate": round(sum(r["refused"] for r in english) / len(english), 4),
        "english_false_refusals": [r["text"] for r in english if r["refused"]],
        "english_by_source": {
            s: sum(r["source"] == s for r in english)
            for s in sorted({r["source"] for r in english})
        },
        "other_rows": len(others),
        "other_refusal_rate": round(sum(r["refused"] for r in others) / len(others), 4),
        "other_refusal_by_language": {k: round(sum(v) / len(v), 4) for k, v in by_language.items()},
        "other_passed": [r["text"] for r in others if not r["refused"]],
    }
    out.mkdir(parents=True, exist_ok=True)
    write_text(
        out / "results.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    )
    write_text(out / "metrics.json", json.dumps(metrics, indent=2, ensure_ascii=False) + "\n")
    _plot(metrics, out / "language.png")
    return metrics


def _plot(metrics: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    langs = ["English (false)"] + list(metrics["other_refusal_by_language"])
    rates = [metrics["english_false_refusal_rate"], *metrics["other_refusal_by_language"].values()]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.barh(langs, rates, color=["tab:red"] + ["tab:blue"] * (len(langs) - 1))
    ax.set_xlim(0, 1)
    ax.set_xlabel("share refused")
    ax.set_title("language check: refusals by language")
    save_figure(fig, path)


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    """``purr eval language``'s arguments."""
    p.add_argument("--out", required=True, help="folder for results.jsonl, metrics.json, plot")
    option(p, "--n", int, 600, "English rows (default 600)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data", default=None, help="the data folder (default ../shared/data)")
    common(p)


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval language``."""
    from training.data.nli import default_data_dir

    if args.n < 1:
        raise ValueError(f"--n must be >= 1, got {args.n}")
    data = Path(args.data) if args.data else default_data_dir()
    return run(data, Path(args.out), args.n, args.seed)
