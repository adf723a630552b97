"""NLI training data for the attribution model: the shared NLI sets, grouped splits, mixtures.

Sources (``NLI_FILES``, read from ``<data_dir>/nli/``; see ``../shared/data/README.md``):
scifact (claim vs rationale sentence), climate-fever (claim vs Wikipedia sentence), wice
(claim vs whole cited web article), summedits (summary vs whole source document). Labels map
to three classes: supported / contradicted / not_supported, with ``partial`` -> not_supported
(only ``supported`` means AIS = 1).

Long premises. wice and summedits premises are whole documents (median 962 and 316 words),
far beyond a 256-token pair. ``window_premise`` keeps the sentences most lexically similar to
the hypothesis (content-word overlap, ties broken by position) until a word budget is full, and
joins them in document order, so the evidence sentence survives truncation. Budget in words:
``premise_word_budget(max_length, hypothesis)`` ~ max_length / 1.4 minus the hypothesis words
(BERT WordPiece averages ~1.3 tokens per English word). This is training-time selection; at
inference ``editor.attribution.nli.ChunkedNLI`` scores contiguous windows and max-pools instead.

Splits. ``split_by_group`` assigns whole groups (documents) to dev by a salted hash, so one
document never lands in both splits: scifact by ``doc_id``, climate-fever by ``title``, wice
and summedits by a hash of the premise (summedits has 162 source documents under 4,681 rows),
synthetic Wikipedia pairs by article. The split does not depend on the seed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import lzma
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from editor.attribution.nli import LABELS
from editor.text.words import NUMBER_WORD, content_words
from editor.verdicts import CONTRADICTED, NOT_SUPPORTED, SUPPORTED
from retrieval.files import atomic_file
from retrieval.sentences import split
from training.data.nli_sources import SHARED, SOURCES, expand

log = logging.getLogger(__name__)

"""The three classes, in the id order the trained classifier uses (``id2label``)."""

LABEL_MAP = {
    SUPPORTED: SUPPORTED,
    CONTRADICTED: CONTRADICTED,
    NOT_SUPPORTED: NOT_SUPPORTED,
    "partial": NOT_SUPPORTED,
}

NLI_FILES = {name: SOURCES[name].path for name in SHARED}
"""The four shared sets (the primary metric's); ``training.data.nli_sources`` lists the rest."""

DEV_FRACTION = 0.15
SPLIT_SALT = "purr-nli-split-v1"


@dataclass(frozen=True)
class NLIExample:
    """One (premise, hypothesis) pair with its label and its split group (source document)."""

    id: str
    source: str
    premise: str
    hypothesis: str
    label: str
    group: str


@dataclass(frozen=True)
class NLISplits:
    """Train and dev examples; no group occurs in both."""

    train: list[NLIExample]
    dev: list[NLIExample]


def default_data_dir() -> Path:
    """``../shared/data`` relative to the project root."""
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


# -- labels, windows, groups --------------------------------------------------------------


def map_label(label: str) -> str:
    """The three-class label of a dataset label.

    >>> [map_label(x) for x in ["supported", "partial", "contradicted", "not_supported"]]
    ['supported', 'not_supported', 'contradicted', 'not_supported']
    """
    try:
        return LABEL_MAP[label]
    except KeyError:
        raise ValueError(
            f"unknown NLI label {label!r}; expected one of {sorted(LABEL_MAP)}"
        ) from None


def premise_word_budget(max_length: int, hypothesis: str, min_words: int = 32) -> int:
    """Premise words that fit beside ``hypothesis`` in a ``max_length``-token pair.

    >>> premise_word_budget(256, "one two three four five")
    175
    """
    return max(min_words, int((max_length - 3) / 1.4) - len(hypothesis.split()))


def window_premise(premise: str, hypothesis: str, max_words: int) -> str:
    """The premise cut to at most ``max_words`` words (about), keeping the sentences that share
    the most content words with the hypothesis, in document order. Short premises are
    returned unchanged; a single over-long best sentence is cut at ``max_words`` words.

    >>> doc = "Filler one here. Filler two here. Paris is in France. Filler three here."
    >>> window_premise(doc, "Paris lies in France.", max_words=6)
    'Paris is in France.'
    """
    if max_words < 1:
        raise ValueError(f"max_words must be >= 1, got {max_words}")
    if len(premise.split()) <= max_words:
        return premise
    sentences = split(premise) or [premise]
    target = content_words(hypothesis, NUMBER_WORD)
    overlap = [len(target & content_words(s, NUMBER_WORD)) for s in sentences]
    order = sorted(range(len(sentences)), key=lambda i: (-overlap[i], i))
    chosen: list[int] = []
    used = 0
    for i in order:
        n = len(sentences[i].split())
        if used + n > max_words:
            if not chosen:  # the best sentence alone is too long: keep its start
                return " ".join(sentences[i].split()[:max_words])
            continue
        chosen.append(i)
        used += n
        if used >= max_words:
            break
    return " ".join(sentences[i] for i in sorted(chosen))


def text_hash(text: str) -> str:
    """A short stable hash of a text (for group keys)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def group_key(source: str, row: Mapping[str, object]) -> str:
    """The split group of a raw row: its document (doc_id, else title, else premise hash), or
    its claim for sources grouped by claim (the FEVER files share one key space)."""
    known = SOURCES.get(source)
    if known is not None and known.group_by == "claim":
        claim = " ".join(str(row["hypothesis"]).lower().split())
        return f"claim:{text_hash(claim)}"
    if row.get("doc_id"):
        return f"{source}:doc:{row['doc_id']}"
    if row.get("title"):
        return f"{source}:title:{row['title']}"
    return f"{source}:premise:{text_hash(str(row['premise']))}"


def is_dev(group: str, dev_fraction: float = DEV_FRACTION, salt: str = SPLIT_SALT) -> bool:
    """Whether a group belongs to dev (salted SHA-1 of the group, uniform in [0, 1))."""
    if not 0.0 <= dev_fraction < 1.0:
        raise ValueError(f"dev_fraction must be in [0, 1), got {dev_fraction}")
    h = int(hashlib.sha1(f"{salt}:{group}".encode()).hexdigest()[:12], 16)
    return h / 16**12 < dev_fraction


def split_by_group(examples: Iterable[NLIExample], dev_fraction: float = DEV_FRACTION) -> NLISplits:
    """Train/dev by group, never by row."""
    train: list[NLIExample] = []
    dev: list[NLIExample] = []
    for ex in examples:
        (dev if is_dev(ex.group, dev_fraction) else train).append(ex)
    return NLISplits(train, dev)


def split_source(
    name: str, examples: list[NLIExample], dev_fraction: float = DEV_FRACTION
) -> NLISplits:
    """A source's train/dev split by its use: ``train`` sets by group, ``dev`` and ``eval``
    sets wholly dev (never trained on). Unknown names (synthetic sets) split by group."""
    known = SOURCES.get(name)
    if known is not None and known.use != "train":
        return NLISplits([], list(examples))
    return split_by_group(examples, dev_fraction)


# -- loading ------------------------------------------------------------------------------


def file_rows(
    path: Path, kind: str, read: Callable[[dict], Any]
) -> Iterator[tuple[int, dict, Any]]:
    """``(line number, row, read(row))`` of a JSONL data file, blank lines skipped; a missing
    file, or a row that is no JSON or that ``read`` fails on (``KeyError``, ``TypeError``,
    ``ValueError``), is a ValueError naming the file and line."""
    if not path.is_file():
        raise ValueError(f"{path}: no such {kind} file; pass --data-dir pointing at shared/data")
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                got = read(row)
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
                raise ValueError(f"{path}:{n}: bad {kind} row ({e})") from None
            yield n, row, got


def load_nli_file(
    path: str | Path,
    source: str,
    *,
    max_length: int | None = 256,
    limit: int | None = None,
) -> list[NLIExample]:
    """Examples of one unified NLI JSONL file; premises windowed to fit ``max_length`` tokens
    (None: kept whole). ``limit`` keeps the first N valid rows."""
    out: list[NLIExample] = []

    def read(row: dict) -> tuple[str, str, str]:
        return str(row["premise"]), str(row["hypothesis"]), map_label(str(row["label"]))

    for n, row, (premise, hypothesis, label) in file_rows(Path(path), "NLI", read):
        if not premise.strip() or not hypothesis.strip():
            log.warning("%s:%d: empty premise or hypothesis, skipped", path, n)
            continue
        if max_length is not None:
            premise = window_premise(
                premise, hypothesis, premise_word_budget(max_length, hypothesis)
            )
        out.append(
            NLIExample(
                id=f"{source}:{row.get('id', n)}",
                source=source,
                premise=premise,
                hypothesis=hypothesis,
                label=label,
                group=group_key(source, row),
            )
        )
        if limit is not None and len(out) >= limit:
            break
    return out


def load_nli_sets(
    data_dir: str | Path | None = None,
    sources: Iterable[str] | None = None,
    *,
    max_length: int | None = 256,
    limit_per_source: int | None = None,
) -> dict[str, list[NLIExample]]:
    """Examples of each named source (``training.data.nli_sources``; aliases expanded; default the
    four shared sets) under ``data_dir``."""
    base = Path(data_dir) if data_dir is not None else default_data_dir()
    if not base.is_dir():
        raise ValueError(
            f"data dir {base} does not exist; pass --data-dir (the shared/data folder)"
        )
    names = expand(list(sources)) if sources is not None else list(NLI_FILES)
    return {
        s: load_nli_file(base / SOURCES[s].path, s, max_length=max_length, limit=limit_per_source)
        for s in names
    }


def build_mixture(
    sets: Mapping[str, list[NLIExample]],
    caps: int | Mapping[str, int] | None = None,
    seed: int = 0,
) -> list[NLIExample]:
    """All sources mixed and shuffled; each source subsampled (seeded) to its cap.

    ``caps``: one cap for every source, or per source (missing sources uncapped).

    >>> ex = [NLIExample(str(i), "a", "p", "h", "supported", str(i)) for i in range(5)]
    >>> len(build_mixture({"a": ex, "b": ex[:2]}, caps={"a": 3}, seed=1))
    5
    """
    rng = random.Random(seed)
    out: list[NLIExample] = []
    for name in sorted(sets):
        rows = list(sets[name])
        cap = caps if isinstance(caps, int) else (caps or {}).get(name)
        if cap is not None:
            if cap < 0:
                raise ValueError(f"cap for source {name!r} must be >= 0, got {cap}")
            if len(rows) > cap:
                rows = rng.sample(rows, cap)
        out.extend(rows)
    rng.shuffle(out)
    return out


def label_counts(examples: Iterable[NLIExample]) -> dict[str, int]:
    """Examples per label, in ``LABELS`` order."""
    c = Counter(ex.label for ex in examples)
    return {label: c.get(label, 0) for label in LABELS}


# -- JSONL --------------------------------------------------------------------------------


def write_jsonl(examples: Iterable[NLIExample], path: str | Path) -> int:
    """Write examples as JSON lines; returns the number written."""
    n = 0
    with atomic_file(path) as tmp, tmp.open("w", encoding="utf-8") as f:
        for ex in examples:
            f.write(json.dumps(asdict(ex), ensure_ascii=False) + "\n")
            n += 1
    return n


def _open_text(path: Path, mode: str):
    """A text file, xz- or gzip-compressed by its suffix (``.xz``, ``.gz``)."""
    if path.suffix == ".xz":
        return lzma.open(path, mode + "t", encoding="utf-8")
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", encoding="utf-8")
    return path.open(mode, encoding="utf-8")


def ids_digest(rows: Iterable[NLIExample]) -> str:
    """SHA-256 of the rows' ids joined by newlines: names which rows, in which order, a file of
    per-row values (a teacher's probabilities) belongs to."""
    return hashlib.sha256("\n".join(r.id for r in rows).encode("utf-8")).hexdigest()


def write_splits(splits: NLISplits, path: str | Path) -> dict[str, int]:
    """Save prepared train and dev examples to one JSONL file (``.xz``/``.gz`` compress), each
    row with its ``split``; ``read_splits`` reads it back. Prepare once, train elsewhere."""
    with atomic_file(path) as tmp, _open_text(tmp, "w") as f:  # whole, or not there
        for split_name, rows in (("train", splits.train), ("dev", splits.dev)):
            for ex in rows:
                f.write(json.dumps({"split": split_name, **asdict(ex)}, ensure_ascii=False) + "\n")
    return {"train": len(splits.train), "dev": len(splits.dev)}


def read_splits(path: str | Path) -> NLISplits:
    """Splits written by ``write_splits``, in their saved order."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such splits file; write one with --save-splits")
    out: dict[str, list[NLIExample]] = {"train": [], "dev": []}
    for n, row in enumerate(_rows(path), 1):
        split_name = row.pop("split", None)
        if split_name not in out:
            raise ValueError(f"{path}:{n}: split {split_name!r} is neither 'train' nor 'dev'")
        out[split_name].append(_example(path, n, row))
    return NLISplits(out["train"], out["dev"])


def _rows(path: Path) -> Iterator[dict]:
    with _open_text(path, "r") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not JSON ({e})") from None


def _example(path: Path, n: int, row: dict) -> NLIExample:
    try:
        ex = NLIExample(**row)
    except TypeError as e:
        raise ValueError(f"{path}:{n}: not an NLIExample row ({e})") from None
    if ex.label not in LABELS:
        raise ValueError(f"{path}:{n}: label {ex.label!r} not in {LABELS}")
    return ex


def read_jsonl(path: str | Path) -> Iterator[NLIExample]:
    """Examples written by ``write_jsonl``."""
    path = Path(path)
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                ex = NLIExample(**json.loads(line))
            except (json.JSONDecodeError, TypeError) as e:
                raise ValueError(f"{path}:{n}: not an NLIExample row ({e})") from None
            if ex.label not in LABELS:
                raise ValueError(f"{path}:{n}: label {ex.label!r} not in {LABELS}")
            yield ex
