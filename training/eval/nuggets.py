"""``purr eval nuggets``: a cited report scored the report-evaluation way (ARGUE).

Rows: ``{id, text, sources?: [{id, text, title?}], nuggets: [{question, answers: [..],
source_ids?, absent?}]}``. A nugget is a piece of information the report should give: a question
with every acceptable answer (of any granularity: "1889", "March 1889"), each attested by
``source_ids``; ``absent: true`` records that the sources hold no answer, so saying so is right.

Per nugget:
- ``answered``: a sentence gives an acceptable answer, found by normalised containment (case,
  punctuation and articles ignored) or, for an answer that is a statement (four words or more),
  by the verifier (the sentence entails it);
- ``supported``: answered by a sentence whose citations support it (the citation checker) and,
  when the nugget names ``source_ids``, cite one of them;
- ``contradicted``: not answered, and a sentence on the question states it otherwise: a date,
  number or name of the answers' kind with none of their values (the verifier's typed slot
  comparison), or, for an answer that is a statement, one the verifier finds contradicted.

Per sentence, the outcome of ARGUE's flowchart (numbered as there): 1 cites a source that does not
support it (penalised); 2 cited and supported, no nugget (left out); 3 cited, supported, reports a
nugget (rewarded); 4 needs no citation and has none (left out); 5 a claim with no citation
(penalised the first time); 6 the same claim again (left out); 7 says something is absent or
unknown and a nugget records that absence (rewarded: it shares two content words or more with
the nugget's question); 8 says so and none does (penalised).

Sentence precision = rewarded / (sentences - left out). Nugget recall (ARGUE's, also written
``supported_nugget_recall``) = supported nuggets / all nuggets, an ``absent`` nugget counting
when a sentence of outcome 7 reports it; ``answered_recall`` counts the nuggets answered with or
without a supporting citation. A nugget counts once however many sentences report it.
"""

from __future__ import annotations

import argparse
import json
import re
import string
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from editor.citations.check import CitationChecker
from editor.citations.document import CitedDocument
from editor.citations.sources import Source, read_sources
from editor.text.nlp import get_nlp
from editor.text.words import content_words
from editor.verdicts import CONTRADICTED, CONTRADICTS, SUPPORTED, SUPPORTS
from training.args import option, read_rows
from training.eval.base import Evaluation, checking_pipeline, stopped
from training.figures import save_figure
from training.jobs.journaled import journal_rows

EVALUATION = Evaluation(
    name="nuggets",
    help="score cited reports against nuggets (ARGUE): nugget recall, sentence precision",
    primary="nugget_recall",
)

REWARDED = {3, 7}
LEFT_OUT = {2, 4, 6}
PENALISED = {1, 5, 8}
OUTCOME_NAMES = {
    1: "cites a source that does not support it",
    2: "supported, reports no nugget",
    3: "supported, reports a nugget",
    4: "needs no citation",
    5: "claim without a citation",
    6: "same claim again",
    7: "absence recorded by a nugget",
    8: "absence not recorded",
}
_ABSENCE = re.compile(
    r"\b(no (information|record|data|details?|mention)|not (known|mentioned|stated|specified|"
    r"reported|recorded|given)|unknown|unclear|do(es)? not (say|mention|state|report|give)|"
    r"could not (find|be found)|nothing is known)\b",
    re.I,
)


def normalise(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles, single spaces.

    >>> normalise("The  Chrysler Building!")
    'chrysler building'
    """
    text = "".join(c for c in text.lower() if c not in string.punctuation)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def claims_absence(sentence: str) -> bool:
    """Whether a sentence says that something is absent or unknown.

    >>> claims_absence("The sources do not say what it cost."), claims_absence("It cost $1.")
    (True, False)
    """
    return _ABSENCE.search(sentence) is not None


def _same_claim(a: str, b: str) -> bool:
    wa, wb = content_words(a), content_words(b)
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= 0.8


def _contains(sentence: str, answer: str) -> bool:
    s, a = f" {normalise(sentence)} ", normalise(answer)
    return bool(a) and f" {a} " in s


def _slot_conflicts(nug: dict[str, Any], docs: Sequence[Any], skip: Sequence[int]) -> list[int]:
    """Sentences on the nugget's question (two of its content words or more) that state a
    value of the answers' kind (a date, number or name) and none of the answers' values."""
    from editor.claims.slot_values import states_same
    from editor.claims.slots import family, typed_spans

    nlp = get_nlp()
    answers = [a for a in nug.get("answers") or [] if isinstance(a, str) and a.strip()]
    short = [a for a in answers if len(a.split()) < 4]
    if not short:
        return []
    adocs = list(nlp.pipe(short))
    aslots = [(d, s) for d in adocs for s in typed_spans(d)]
    if not aslots:
        return []
    kinds = {family(s.kind) for _, s in aslots}
    q = content_words(nug["question"])
    need = min(2, len(q))
    out = []
    for i, doc in enumerate(docs):
        if i in skip or len(q & content_words(doc.text)) < need:
            continue
        mine = [s for s in typed_spans(doc) if family(s.kind) in kinds]
        if mine and not any(
            states_same(ad, a, doc, s) or states_same(doc, s, ad, a)
            for ad, a in aslots
            for s in mine
        ):
            out.append(i)
    return out


def score_row(checker: CitationChecker, row: dict[str, Any]) -> dict[str, Any]:
    """One report's sentences (flowchart outcomes) and nuggets, and its scores."""
    text = row["text"]
    sources = read_sources(row.get("sources") or []) if row.get("sources") else []
    nuggets = row.get("nuggets") or []
    check = checker.check(text, sources) if sources else None
    doc = CitedDocument.parse(text, [s.id for s in sources])
    claims = [s.claim for s in doc.sentences]
    standalone = (
        [c.standalone for c in check.sentences] if check is not None else checker.standalone(doc)
    )
    claim_docs = list(get_nlp().pipe(claims))  # parsed once for every nugget's slot check
    # answers found by containment; statements also by the verifier, both ways in one batch
    answered_by: list[list[int]] = [[] for _ in nuggets]
    pairs: list[tuple[str, str]] = []
    asked: list[tuple[int, int, str]] = []  # (nugget, sentence, "entails" | "refutes")
    for n, nug in enumerate(nuggets):
        answers = [a for a in nug.get("answers") or [] if isinstance(a, str) and a.strip()]
        for i, claim in enumerate(claims):
            if any(_contains(claim, a) for a in answers):
                answered_by[n].append(i)
                continue
            for a in answers:
                if not content_words(a) & content_words(claim):
                    continue
                if len(a.split()) >= 4:
                    pairs.append((standalone[i], a))
                    asked.append((n, i, "entails"))
                pairs.append((a, standalone[i]))
                asked.append((n, i, "refutes"))
    judged = (
        checker.labels([(Source("", p).evidence("given"), h) for p, h in pairs]) if pairs else []
    )
    contradicted_by: list[list[int]] = [[] for _ in nuggets]
    for n, nug in enumerate(nuggets):
        contradicted_by[n].extend(
            i for i in _slot_conflicts(nug, claim_docs, answered_by[n]) if i not in answered_by[n]
        )
    for (n, i, kind), v in zip(asked, judged, strict=True):
        if kind == "entails" and v.label == SUPPORTS and i not in answered_by[n]:
            answered_by[n].append(i)
        elif kind == "refutes" and v.label == CONTRADICTS:
            contradicted_by[n].append(i)
    checks = check.sentences if check is not None else None
    sentences = []
    seen_uncited: list[str] = []
    for i, s in enumerate(doc.sentences):
        outcome_name = (
            checks[i].outcome
            if checks is not None
            else ("citation_not_supporting" if s.citations else "needs_citation")
        )
        reports = [n for n in range(len(nuggets)) if i in answered_by[n]]
        if claims_absence(s.claim):
            absent = [
                n
                for n, nug in enumerate(nuggets)
                if nug.get("absent")
                and len(content_words(nug["question"]) & content_words(s.claim)) >= 2
            ]
            code, reports = (7, absent) if absent else (8, [])
        elif s.citations:
            code = (
                3
                if outcome_name == SUPPORTED and reports
                else (2 if outcome_name == SUPPORTED else 1)
            )
        elif outcome_name == "needs_none":
            code = 4
        elif any(_same_claim(s.claim, c) for c in seen_uncited):
            code = 6
        else:
            code = 5
            seen_uncited.append(s.claim)
        cited_ok = [
            v.source_id
            for v in (checks[i].verdicts if checks is not None else ())
            if v.label == SUPPORTS
        ]
        sentences.append(
            {
                "text": s.text,
                "citations": list(s.citations),
                "check": outcome_name,
                "outcome": code,
                "outcome_name": OUTCOME_NAMES[code],
                "nuggets": reports if code in REWARDED else [],
                "supporting": cited_ok or (list(s.citations) if outcome_name == SUPPORTED else []),
            }
        )
    results = []
    for n, nug in enumerate(nuggets):
        ids = {str(x) for x in nug.get("source_ids") or []}
        supported = [
            i
            for i in answered_by[n]
            if sentences[i]["outcome"] == 3 and (not ids or ids & set(sentences[i]["supporting"]))
        ]
        absent_ok = [i for i, s in enumerate(sentences) if s["outcome"] == 7 and n in s["nuggets"]]
        answered = bool(answered_by[n]) or bool(absent_ok)
        results.append(
            {
                "question": nug["question"],
                "answered": answered,
                SUPPORTED: bool(supported) or bool(absent_ok),
                CONTRADICTED: not answered and bool(contradicted_by[n]),
                "sentences": sorted(set(answered_by[n]) | set(absent_ok)),
            }
        )
    rewarded = sum(s["outcome"] in REWARDED for s in sentences)
    counted = sum(s["outcome"] not in LEFT_OUT for s in sentences)
    return {
        "id": row.get("id"),
        "sentences": sentences,
        "nuggets": results,
        "sentence_precision": rewarded / counted if counted else None,
        "nugget_recall": sum(r[SUPPORTED] for r in results) / len(results) if results else None,
        "supported_nugget_recall": (
            sum(r[SUPPORTED] for r in results) / len(results) if results else None
        ),
        "answered_recall": sum(r["answered"] for r in results) / len(results) if results else None,
        CONTRADICTED: sum(r[CONTRADICTED] for r in results),
        "rewarded": rewarded,
        "counted": counted,
    }


def summarise(results: Sequence[dict[str, Any]], group: str | None = None) -> dict[str, Any]:
    """Micro-averaged scores over rows, the outcome counts, and per ``group`` field."""

    def block(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
        nug = [n for r in rows for n in r["nuggets"]]
        counted = sum(r["counted"] for r in rows)
        outcomes = {str(k): 0 for k in OUTCOME_NAMES}
        for r in rows:
            for s in r["sentences"]:
                outcomes[str(s["outcome"])] += 1
        return {
            "rows": len(rows),
            "nuggets": len(nug),
            "nugget_recall": round(sum(n[SUPPORTED] for n in nug) / len(nug), 4) if nug else None,
            "supported_nugget_recall": (
                round(sum(n[SUPPORTED] for n in nug) / len(nug), 4) if nug else None
            ),
            "answered_recall": (
                round(sum(n["answered"] for n in nug) / len(nug), 4) if nug else None
            ),
            CONTRADICTED: round(sum(n[CONTRADICTED] for n in nug) / len(nug), 4) if nug else None,
            "sentence_precision": (
                round(sum(r["rewarded"] for r in rows) / counted, 4) if counted else None
            ),
            "outcomes": outcomes,
        }

    out = {"all": block(results)}
    if group:
        keys = sorted({str(r.get(group)) for r in results})
        for k in keys:
            out[k] = block([r for r in results if str(r.get(group)) == k])
    return out


def plot(metrics: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = list(metrics)
    keys = [
        ("nugget_recall", "nugget recall"),
        ("answered_recall", "answered"),
        (CONTRADICTED, CONTRADICTED),
        ("sentence_precision", "sentence precision"),
    ]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    width = 0.8 / len(keys)
    for n, (key, label) in enumerate(keys):
        ax.bar(
            [i + n * width for i in range(len(groups))],
            [metrics[g].get(key) or 0 for g in groups],
            width,
            label=label,
        )
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(groups))])
    ax.set_xticklabels(groups, fontsize=8, rotation=20)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7)
    ax.set_title("nuggets and sentences")
    counts = metrics["all"]["outcomes"]
    bx.bar([f"{k}" for k in counts], list(counts.values()), color="tab:gray")
    bx.set_xlabel("flowchart outcome (1, 5, 8 penalised; 3, 7 rewarded)")
    bx.set_title("sentences by outcome")
    save_figure(fig, path)


def run(
    checker: CitationChecker,
    rows: Sequence[dict[str, Any]],
    out: Path,
    group: str | None = None,
    progress: bool = True,
    stop: Any = None,
) -> dict[str, Any]:
    """Every row into ``results.jsonl`` (a row journal: a killed run resumes), then
    ``metrics.json`` and ``nuggets.png``."""
    from retrieval.files import write_text

    def one(row: dict[str, Any]) -> dict[str, Any]:
        result = score_row(checker, row)
        if group:
            result[group] = row.get(group)
        return result

    done = journal_rows(rows, out, one, "eval nuggets", progress, stop)
    if done.results is None:
        return {"interrupted": True, "done": done.written}
    metrics = summarise(done.results, group)
    write_text(out / "metrics.json", json.dumps(metrics, indent=2))
    plot(metrics, out / "nuggets.png")
    return metrics


def add_cli_args(p: argparse.ArgumentParser, common: Callable[..., None]) -> None:
    """``purr eval nuggets``'s arguments."""
    p.add_argument(
        "data", help="JSONL rows {id, text, sources?, nuggets: [{question, answers, ...}]}"
    )
    p.add_argument("--out", required=True, help="folder for results.jsonl, metrics.json, plot")
    p.add_argument("--group", default=None, help="a row field to score by as well (e.g. fault)")
    option(p, "--limit", int, None, "first N rows only")
    common(p)


def _is_nugget(x: Any) -> bool:
    return isinstance(x, dict) and isinstance(x.get("question"), str)


def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``purr eval nuggets`` over a file of cited reports with their nuggets."""
    from retrieval.files import GracefulStop

    rows = read_rows(Path(args.data), ("id", "text", "nuggets"), "see `purr eval nuggets --help`")
    for n, row in enumerate(rows, 1):
        if not isinstance(row["nuggets"], list) or not all(_is_nugget(x) for x in row["nuggets"]):
            msg = "'nuggets' must be a list of {question, answers} objects"
            raise ValueError(f"{args.data}: row {n}: {msg}")
    rows = rows[: args.limit] if args.limit else rows
    _, checker = checking_pipeline(args)
    with GracefulStop() as stop:
        metrics = run(checker, rows, Path(args.out), args.group, stop=stop)
    if metrics.get("interrupted"):
        metrics["stopped"] = stopped(stop, metrics["done"])
    return metrics
