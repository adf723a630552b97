"""``purr eval extraction``: how much of a real page's article main-text extraction keeps and
how much of its furniture it drops.

The hand check (``retrieval/web/extraction_check.json``) gives, for 20 saved article pages, six
verbatim snippets of the article body an extractor should keep and six of page furniture (menus,
footers, banners, related links, comments) it should drop. A snippet counts as kept when at
least ``MATCH`` of its word trigrams occur in the extracted text (after Unicode, quote and
whitespace normalisation; a snippet under three words must occur whole), so a sentence cut or
re-spaced by the extractor is judged by its words.

Methods, measured in the same run on the same pages:

- ``precision`` (what research uses), ``balanced``, ``recall``: trafilatura's three trade-offs
  (``retrieval.web.extract.extract_main_text``);
- ``all-text``: every visible character of ``<body>`` (scripts and styles removed): the
  baseline that keeps the whole article and drops nothing.

For every page (the 20 checked and the rest), also the extracted length as a share of the
visible text and the time it took. Rows go to ``results.jsonl``, numbers to ``metrics.json``,
the plot to ``extraction.png``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from retrieval.web.extract import FAVOR, extract_main_text
from training.args import option
from training.eval.base import Evaluation
from training.figures import save_figure

EVALUATION = Evaluation(
    name="extraction",
    help="main-text extraction of saved web pages against a hand check: article kept, "
    "boilerplate dropped",
    primary="main_kept",
)

CHECK = Path(__file__).resolve().parents[2] / "retrieval" / "web" / "extraction_check.json"
MATCH = 0.8
"""Share of a snippet's word trigrams that must occur in the extraction for it to count."""
METHODS = (*FAVOR, "all-text")

_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-"})


def normalise(text: str) -> str:
    """Text compared word by word: NFKC, straight quotes, one space, lower case.

    >>> normalise("  It’s  “done”\\n now ")
    'it\\'s "done" now'
    """
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r" (?=[,.;:!?)\]])|(?<=[(\[]) ", "", text)  # no space before , . ; ) or after (
    return text.strip().casefold()


def _trigrams(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def kept(snippet: str, text: str, grams: set[tuple[str, ...]] | None = None) -> bool:
    """Whether ``snippet`` survives in ``text`` (both normalised): whole, or ``MATCH`` of its
    word trigrams.

    >>> kept("The tower opened in 1889 to the public", "the tower opened in 1889 to all")
    False
    >>> kept("The tower opened in 1889 for visitors", "so the tower opened in 1889 for visitors.")
    True
    """
    words = normalise(snippet).split()
    if len(words) < 3 or " ".join(words) in normalise(text):
        return " ".join(words) in normalise(text)
    grams = grams if grams is not None else _trigrams(normalise(text).split())
    need = _trigrams(words)
    return sum(g in grams for g in need) / len(need) >= MATCH


def visible_text(html: str) -> str:
    """Every visible character of ``<body>``: scripts, styles, noscript and templates removed."""
    import lxml.html

    try:
        root = lxml.html.document_fromstring(html)
    except Exception:  # lxml raises several types on markup it cannot read at all
        return ""
    for el in root.xpath("//script|//style|//noscript|//template"):
        el.drop_tree()
    body = root.find("body")
    return " ".join((body if body is not None else root).itertext())  # blocks stay apart


def _method(name: str) -> Callable[[str, str], str]:
    if name == "all-text":
        return lambda html, url: visible_text(html)
    return lambda html, url: extract_main_text(html, url, favor=name)[1]


def read_page(path: Path) -> str:
    """A saved page as the fetcher would decode it: its declared charset, else UTF-8."""
    from retrieval.web.fetch import sniff_charset

    raw = path.read_bytes()
    enc = sniff_charset(raw) or "utf-8"
    try:
        return raw.decode(enc, errors="replace")
    except LookupError:
        return raw.decode("utf-8", errors="replace")


def load_check(path: Path = CHECK) -> dict[str, dict[str, Any]]:
    """The hand check, by page file name."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: cannot read the hand check ({e})") from None
    pages = data.get("pages") if isinstance(data, dict) else None
    if not isinstance(pages, list) or not pages:
        raise ValueError(f"{path}: expected {{'pages': [{{url_name, main, boilerplate}}, ...]}}")
    out = {}
    for n, p in enumerate(pages, 1):
        if not all(isinstance(p.get(k), list) for k in ("main", "boilerplate")):
            raise ValueError(f"{path}: page {n} needs 'main' and 'boilerplate' lists")
        out[p["url_name"]] = p
    return out


def score_page(text: str, check: dict[str, Any] | None) -> dict[str, Any]:
    """Counts of the checked snippets one extraction kept (empty without a check)."""
    if check is None:
        return {}
    grams = _trigrams(normalise(text).split())
    main = [kept(s, text, grams) for s in check["main"]]
    boiler = [kept(s, text, grams) for s in check["boilerplate"]]
    return {
        "main_kept": sum(main),
        "main_total": len(main),
        "boilerplate_dropped": len(boiler) - sum(boiler),
        "boilerplate_total": len(boiler),
        "main_missed": [s for s, k in zip(check["main"], main, strict=True) if not k],
        "boilerplate_kept": [s for s, k in zip(check["boilerplate"], boiler, strict=True) if k],
    }


def run(
    pages_dir: Path,
    out: Path,
    check_path: Path = CHECK,
    methods: tuple[str, ...] = METHODS,
    repeats: int = 3,
) -> dict[str, Any]:
    """Extract every page of ``pages_dir`` with each method; write and return the metrics."""
    from retrieval.files import write_text

    check = load_check(check_path)
    if not pages_dir.is_dir():
        raise ValueError(
            f"{pages_dir}: no such folder; pass --pages pointing at saved HTML pages "
            "(shared/data/web/pages)"
        )
    files = sorted(p for p in pages_dir.iterdir() if p.suffix in (".html", ".htm"))
    if not files:
        raise ValueError(f"{pages_dir}: no .html pages")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {list(METHODS)}")
    missing = sorted(set(check) - {p.name for p in files})
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for path in tqdm(files, desc="eval extraction", unit="page"):
        html = read_page(path)
        url = "https://" + path.name.removesuffix(".html")
        visible = len(re.sub(r"\s+", " ", visible_text(html)).strip())
        for name in methods:
            fn = _method(name)
            took = []
            for _ in range(repeats):
                t = time.perf_counter()
                text = fn(html, url)
                took.append((time.perf_counter() - t) * 1000)
            chars = len(re.sub(r"\s+", " ", text).strip())
            rows.append(
                {
                    "page": path.name,
                    "method": name,
                    "checked": path.name in check,
                    "chars": chars,
                    "share_of_visible": round(chars / visible, 4) if visible else 0.0,
                    "ms": round(statistics.median(took), 2),
                    **score_page(text, check.get(path.name)),
                }
            )
    write_text(
        out / "results.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    )
    metrics = summarise(rows, methods)
    metrics.update(
        pages=len(files),
        checked_pages=len(check) - len(missing),
        missing_checked_pages=missing,
        match=MATCH,
        repeats=repeats,
        check=str(check_path),
    )
    write_text(out / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    plot(rows, metrics, methods, out / "extraction.png")
    return metrics


def summarise(rows: list[dict[str, Any]], methods: tuple[str, ...]) -> dict[str, Any]:
    """Pooled and per-page figures by method."""
    by: dict[str, Any] = {}
    for name in methods:
        mine = [r for r in rows if r["method"] == name]
        checked = [r for r in mine if r["checked"]]
        main = sum(r["main_kept"] for r in checked)
        main_n = sum(r["main_total"] for r in checked)
        drop = sum(r["boilerplate_dropped"] for r in checked)
        drop_n = sum(r["boilerplate_total"] for r in checked)
        by[name] = {
            "main_kept": round(main / main_n, 4) if main_n else None,
            "boilerplate_dropped": round(drop / drop_n, 4) if drop_n else None,
            "pages_all_main_kept": sum(r["main_kept"] == r["main_total"] for r in checked),
            "pages_all_boilerplate_dropped": sum(
                r["boilerplate_dropped"] == r["boilerplate_total"] for r in checked
            ),
            "pages_empty": sum(r["chars"] == 0 for r in mine),
            "median_share_of_visible": statistics.median(r["share_of_visible"] for r in mine),
            "median_ms": statistics.median(r["ms"] for r in mine),
        }
    base = by.get("all-text", {}).get("median_ms")
    for m in by.values():
        m["ms_ratio_to_all_text"] = round(m["median_ms"] / base, 2) if base else None
    return {"methods": by}


def plot(rows: list[dict[str, Any]], metrics: dict[str, Any], methods, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8), width_ratios=[1, 2.2])
    m = metrics["methods"]
    xs = range(len(methods))
    ax1.bar(
        [x - 0.2 for x in xs], [m[k]["main_kept"] or 0 for k in methods], 0.4, label="article kept"
    )
    ax1.bar(
        [x + 0.2 for x in xs],
        [m[k]["boilerplate_dropped"] or 0 for k in methods],
        0.4,
        label="boilerplate dropped",
    )
    ax1.set_xticks(list(xs), methods)
    ax1.set_ylim(0, 1.2)
    ax1.set_title(f"hand check, {metrics['checked_pages']} pages")
    ax1.legend(loc="upper center", ncol=2, fontsize=8)
    first = methods[0]
    mine = sorted(
        (r for r in rows if r["method"] == first and r["checked"]), key=lambda r: r["page"]
    )
    names = [r["page"].removesuffix(".html")[:28] for r in mine]
    ys = range(len(mine))
    ax2.barh(
        [y - 0.2 for y in ys],
        [r["main_kept"] / r["main_total"] for r in mine],
        0.4,
        label="article kept",
    )
    ax2.barh(
        [y + 0.2 for y in ys],
        [r["boilerplate_dropped"] / max(r["boilerplate_total"], 1) for r in mine],
        0.4,
        label="boilerplate dropped",
    )
    ax2.set_yticks(list(ys), names, fontsize=7)
    ax2.invert_yaxis()
    ax2.set_xlim(0, 1.05)
    ax2.set_title(f"per page ({first})")
    ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=2, fontsize=8)
    save_figure(fig, path)


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    """``purr eval extraction``'s arguments."""
    p.add_argument("--out", required=True, help="folder for results.jsonl, metrics.json, plot")
    p.add_argument(
        "--pages",
        default=None,
        help="folder of saved .html pages (default ../shared/data/web/pages)",
    )
    p.add_argument(
        "--check",
        default=None,
        help="hand check JSON (default retrieval/web/extraction_check.json)",
    )
    p.add_argument("--methods", default=None, help="comma-separated subset of the methods")
    option(p, "--repeats", int, 3, "timed runs per page (median)")
    common(p)


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval extraction`` over the saved pages."""
    from training.data.nli import default_data_dir

    if args.repeats < 1:
        raise ValueError(f"--repeats must be >= 1, got {args.repeats}")
    pages = Path(args.pages) if args.pages else default_data_dir() / "web" / "pages"
    methods = tuple(m.strip() for m in args.methods.split(",")) if args.methods else METHODS
    check = Path(args.check) if args.check else CHECK
    if not check.is_file():
        raise ValueError(f"{check}: no such hand-check file")
    return run(pages, Path(args.out), check, methods, args.repeats)
