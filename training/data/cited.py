"""Cited answers with known faults, from real dev data, for ``purr eval citations``.

``purr data cited --out dev.jsonl [--n 200] [--seed 0] [--wice N]``:

- **CLAPnq** (``raw/clapnq/clapnq_dev_answerable.jsonl``): each grounded long answer, sentence by
  sentence, cites its gold Wikipedia passage; three passages of other questions join it as
  sources (the ids 1-4 in a shuffled order), and the markers are written ``[k]`` or ``[^k]`` in
  turn. The rows rotate through four kinds: ``correct`` (left as built), ``wrong_source`` (one
  sentence's marker points at another passage), ``missing_citation`` (one sentence's marker
  dropped) and ``contradicted`` (one sentence gets a date, number or name changed, its marker
  kept).
- **WiCE** (``nli/wice_claim.jsonl``, dev rows): a real claim citing the web article it was
  written from; annotators judged it ``supported`` (kept as ``correct``) or only partly or not
  supported (``unsupported``); half of each.

Rows: ``{id, text, sources: [{id, title, text}], fault, fault_sentence, truth, gold_text,
nuggets}``;
``truth`` is, per sentence, the outcome a perfect checker gives (``supported``,
``citation_not_supporting``, ``needs_citation``); ``gold_text`` the correctly cited answer a
repair should give back (None for WiCE's unsupported claims, whose fix the source may not hold);
``nuggets`` (CLAPnq only) the question with each sentence of its gold answer as a nugget, for
``purr eval nuggets``.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from editor.citations.markers import format_marker
from editor.text.nlp import get_nlp
from editor.text.words import detokenize
from editor.verdicts import CONTRADICTED, SUPPORTED
from retrieval.sentences import split
from retrieval.types import Document
from training.data.planted import _plant, entity_pool

FAULTS = ("correct", "wrong_source", "missing_citation", CONTRADICTED)
DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def _cite(sentence: str, marker: str) -> str:
    """The sentence with ``marker`` before its closing punctuation."""
    s = sentence.rstrip()
    if s and s[-1] in ".!?":
        return f"{s[:-1].rstrip()} {marker}{s[-1]}"
    return f"{s} {marker}"


def _clean(sentence: str) -> str:
    """CLAPnq's tokenised spacing (" ," " ." "``") written as prose."""
    return detokenize(sentence).strip()


def clapnq_rows(
    path: Path, n: int, seed: int, progress: bool = True, faults: tuple[str, ...] = FAULTS
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    raw = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    raw = [r for r in raw if r.get("output") and r["output"][0].get("answer") and r["passages"]]
    rng.shuffle(raw)
    nlp = get_nlp()
    pool = entity_pool(
        [
            Document(str(i), r["passages"][0]["title"], r["passages"][0]["text"])
            for i, r in enumerate(raw)
        ],
        nlp,
        len(raw),
    )
    rows: list[dict[str, Any]] = []
    bar = tqdm(total=n, desc="cited rows (CLAPnq)", disable=not progress)
    for k, r in enumerate(raw):
        if len(rows) >= n:
            break
        sentences = [_clean(s) for s in split(r["output"][0]["answer"])]
        sentences = [s for s in sentences if len(s.split()) >= 4]
        if not sentences or len(sentences) > 6:
            continue
        gold = r["passages"][0]
        others = rng.sample([x for j, x in enumerate(raw) if j != k], 3)
        docs = [gold, *(o["passages"][0] for o in others)]
        order = list(range(4))
        rng.shuffle(order)
        sources = [
            {"id": str(order.index(d) + 1), "title": docs[d]["title"], "text": docs[d]["text"]}
            for d in range(4)
        ]
        sources.sort(key=lambda s: int(s["id"]))
        gold_id = str(order.index(0) + 1)
        wrong_id = str(order.index(1) + 1)
        style = "caret" if len(rows) % 2 else "bracket"
        fault = faults[len(rows) % len(faults)]
        at = rng.randrange(len(sentences))
        cited = [_cite(s, format_marker([gold_id], style)) for s in sentences]
        gold_text = " ".join(cited)
        text_sentences = list(cited)
        truth = [SUPPORTED] * len(sentences)
        if fault == "wrong_source":
            text_sentences[at] = _cite(sentences[at], format_marker([wrong_id], style))
            truth[at] = "citation_not_supporting"
        elif fault == "missing_citation":
            text_sentences[at] = sentences[at]
            truth[at] = "needs_citation"
        elif fault == CONTRADICTED:
            doc = nlp(sentences[at])
            ents = [(e.text, e.start_char, e.end_char, e.label_) for e in doc.ents]
            planted = None
            for kind in rng.sample(["date", "number", "entity"], 3):
                planted = _plant(sentences[at], ents, pool, rng, kind) if ents else None
                if planted:
                    break
            if planted is None:
                continue
            text_sentences[at] = _cite(planted[0], format_marker([gold_id], style))
            truth[at] = "citation_not_supporting"
        rows.append(
            {
                "id": f"clapnq-{r['id']}",
                "dataset": "clapnq",
                "question": r["input"],
                "text": " ".join(text_sentences),
                "sources": sources,
                "fault": fault,
                "fault_sentence": None if fault == "correct" else at,
                "truth": truth,
                "gold_text": gold_text,
                "gold_source": gold_id,
                "nuggets": [
                    {"question": r["input"], "answers": [s], "source_ids": [gold_id]}
                    for s in sentences
                ],
            }
        )
        bar.update()
    bar.close()
    return rows


def wice_rows(
    path: Path, n: int, seed: int, faults: tuple[str, ...] = ("correct", "unsupported")
) -> list[dict[str, Any]]:
    """``n`` WiCE dev claims citing their article: half judged supported (``correct``), half
    not or only partly supported (``unsupported``), or all of the one kind ``faults`` names."""
    rng = random.Random(seed)
    raw = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    raw = [r for r in raw if str(r["id"]).startswith("dev")]
    rng.shuffle(raw)
    n_bad = 0 if "unsupported" not in faults else n if "correct" not in faults else n // 2
    good = [r for r in raw if r["label"] == SUPPORTED][: n - n_bad]
    bad = [r for r in raw if r["label"] != SUPPORTED][:n_bad]
    rows = []
    for r in sorted(good + bad, key=lambda r: r["id"]):
        article = r["premise"]
        title = ""
        m = re.match(r"\(meta data\) TITLE:\s*(.*?)(?: Skip to content|\n|$)", article)
        if m:
            title = m.group(1).strip()
        ok = r["label"] == SUPPORTED
        cited = _cite(r["hypothesis"], "[1]")
        rows.append(
            {
                "id": f"wice-{r['id']}",
                "dataset": "wice",
                "text": cited,
                "sources": [{"id": "1", "title": title, "text": article}],
                "fault": "correct" if ok else "unsupported",
                "fault_sentence": None if ok else 0,
                "truth": [SUPPORTED if ok else "citation_not_supporting"],
                "gold_text": cited if ok else None,
                "gold_source": "1",
                "wice_label": r["label"],
                "nuggets": [],
            }
        )
    return rows


def make_cited(
    n: int = 200,
    seed: int = 0,
    wice: int = 60,
    data: Path = DATA,
    progress: bool = True,
    faults: tuple[str, ...] = (*FAULTS, "unsupported"),
) -> list[dict[str, Any]]:
    """``n`` CLAPnq rows and ``wice`` WiCE rows (see the module doc), the kinds in ``faults``
    only."""
    unknown = [f for f in faults if f not in (*FAULTS, "unsupported")]
    if unknown or not faults:
        raise ValueError(
            f"faults {unknown or faults} unknown; choose from {', '.join(FAULTS)}, unsupported"
        )
    clap = tuple(f for f in faults if f in FAULTS)
    wice_kinds = tuple(f for f in faults if f in ("correct", "unsupported"))
    n = n if clap else 0
    wice = wice if wice_kinds else 0
    path = data / "raw" / "clapnq" / "clapnq_dev_answerable.jsonl"
    if not path.is_file():
        raise ValueError(f"{path}: not found; pass --data DIR (the folder that holds raw/)")
    rows = clapnq_rows(path, n, seed, progress, clap) if n else []
    if wice:
        wpath = data / "nli" / "wice_claim.jsonl"
        if not wpath.is_file():
            raise ValueError(f"{wpath}: not found; pass --wice 0 or --data DIR")
        rows += wice_rows(wpath, wice, seed, wice_kinds)
    return rows


__all__ = ["FAULTS", "make_cited"]
