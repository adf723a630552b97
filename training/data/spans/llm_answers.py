"""Span rows from real LLM answers: the judge learns what wrong answers of real models look like.

Rows written from an evidence sentence by rule never read like a small chatbot's answer, which
restates the question around a wrong value and makes things up beside it. ``purr data
real-errors`` writes such answers with their question, gold answers and the passage that states
them; this module labels them for the span judge, with the question as context:

- ``llm-wrong``: contradicted. The answer's value (its first span of the kind the question asks
  for that the question does not name, ``editor.claims.answers.answer_span``) is tagged
  ``C``, with every other place the answer repeats it, and points at the gold answer in the
  evidence window. Kept only where the gold answer there is a span of that kind too.
- ``llm-fixed``: supported; the wrong answer with the gold answer put in, where the window states
  every content word of it.
- ``llm-right``: supported; a right answer whose content words the window states.
- ``llm-unstated``: not supported, no spans (its words are left out of the token loss); a right
  answer with words the window does not state.

Wrong answers of another kind of question ("why", "what type") or without a value of the asked
kind are skipped. The evidence is the window of up to ``WINDOW_CHARS`` characters of whole
sentences around the first sentence that states a gold answer.

``python -m training.data.spans.llm_answers runs/re-train/dev.jsonl runs/re-train/test.jsonl
--out runs/llm-rows`` writes ``train.jsonl`` and ``dev.jsonl`` (a fifth of the evidence
documents) and prints the count of each outcome.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from editor.verdicts import CONTRADICTED, NOT_SUPPORTED, SUPPORTED
from training.data.spans.context import WINDOW_CHARS
from training.data.spans.rows import Span, SpanRow, write_rows


def find(text: str, value: str) -> tuple[int, int] | None:
    """Where ``value`` stands in ``text`` as whole words, case aside.

    >>> find("Lucas created Star Wars.", "star wars")
    (14, 23)
    >>> find("Starwars", "star") is None
    True
    """
    m = re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", text, re.I)
    return None if m is None else (m.start(), m.end())


def window(evidence: str, answers: Iterable[str]) -> tuple[str, str] | None:
    """The evidence window around the first sentence stating one of ``answers`` (grown by whole
    sentences, after then before, to at most ``WINDOW_CHARS``), and that answer; None if none
    is stated.

    >>> window("A is big. B was born in Rome. C ran.", ["rome"])
    ('A is big. B was born in Rome. C ran.', 'rome')
    """
    from retrieval.sentences import split_spans

    spans = split_spans(evidence)
    for answer in answers:
        for i, (s, e) in enumerate(spans):
            if find(evidence[s:e], answer) is None:
                continue
            lo = hi = i
            grew = True
            while grew:
                grew = False
                if hi + 1 < len(spans) and spans[hi + 1][1] - spans[lo][0] <= WINDOW_CHARS:
                    hi, grew = hi + 1, True
                if lo > 0 and spans[hi][1] - spans[lo - 1][0] <= WINDOW_CHARS:
                    lo, grew = lo - 1, True
            return evidence[spans[lo][0] : spans[hi][1]], answer
    return None


def stated(claim: str, evidence: str) -> bool:
    """Whether the evidence has every content word of the claim.

    >>> stated("Freud founded psychoanalysis.", "Psychoanalysis was founded by Freud.")
    True
    """
    from editor.text.words import content_words

    return content_words(claim) <= content_words(evidence)


def span_rows(answers: Iterable[dict[str, Any]], nlp: Any, tally: Counter) -> Iterator[SpanRow]:
    """Span rows of ``purr data real-errors`` rows (see the module doc); ``tally`` counts what
    became of each answer."""
    from editor.claims.answers import ANSWER_KINDS, answer_span
    from editor.claims.slots import typed_spans
    from editor.text.words import question_type

    kinds_in: dict[str, list] = {}  # a question's answers share its window: parse it once
    for r in answers:
        found = window(r["evidence_text"], r["answers"])
        text = r["text"].split("\n")[0].strip()
        if found is None or r["source"] == "strategyqa" or not 8 <= len(text) <= 400:
            tally["skipped: no window, yes/no or length"] += 1
            continue
        win, gold = found
        question, key, group = r["context"], r["id"], "llm:" + r["evidence_title"]
        if not r["wrong"]:
            ok = stated(text, win)
            family, label = ("llm-right", SUPPORTED) if ok else ("llm-unstated", NOT_SUPPORTED)
            tally[family] += 1
            yield SpanRow(key, family, label, text, win, group, (), question)
            continue
        kinds = ANSWER_KINDS.get(question_type(question))
        slot = None if kinds is None else answer_span(nlp(text), question, kinds)
        if kinds is None or slot is None:
            tally["skipped: no value of the asked kind"] += 1
            continue
        fs, fe = find(win, gold) or (-1, -1)
        if win not in kinds_in:
            kinds_in[win] = typed_spans(nlp(win))
        if not any(t.kind in kinds and t.start < fe and fs < t.end for t in kinds_in[win]):
            tally["skipped: gold answer not of the asked kind"] += 1
            continue
        at = [m.span() for m in re.finditer(re.escape(slot.text), text)]
        spans = tuple(Span(a, b, "C", fs, fe) for a, b in at)
        tally["llm-wrong"] += 1
        yield SpanRow(key, "llm-wrong", CONTRADICTED, text, win, group, spans, question)
        fixed = text.replace(slot.text, win[fs:fe])
        if stated(fixed, win):
            tally["llm-fixed"] += 1
            yield SpanRow(f"{key}-fixed", "llm-fixed", SUPPORTED, fixed, win, group, (), question)


def is_dev(group: str) -> bool:
    """A fifth of the evidence documents, fixed by name."""
    return hashlib.md5(group.encode("utf-8")).digest()[0] % 5 == 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("answers", nargs="+", type=Path, help="rows of purr data real-errors")
    p.add_argument("--out", type=Path, required=True, help="folder for train.jsonl, dev.jsonl")
    args = p.parse_args(argv)
    from editor.text.nlp import get_nlp

    rows = [json.loads(line) for f in args.answers for line in f.open(encoding="utf-8")]
    tally: Counter = Counter()
    made = list(span_rows(rows, get_nlp(), tally))
    args.out.mkdir(parents=True, exist_ok=True)
    write_rows([r for r in made if not is_dev(r.group)], args.out / "train.jsonl")
    write_rows([r for r in made if is_dev(r.group)], args.out / "dev.jsonl")
    print(json.dumps({"answers": len(rows), **tally}, indent=2), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
