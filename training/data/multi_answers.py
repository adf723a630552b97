"""Answers of several sentences against their own document, made from a documents set
(``training/eval/documents.jsonl``): two answers about one document joined into one, with one
wrong fact or none.

For two rows on one document with different questions, each row's right answer (its text, or
for a wrong row its first fix) and, for a wrong row, its wrong answer:
- ``two-part``: both questions asked as one ("How much does the T4 weigh, and how long does it
  run?"), one of the two sentences wrong;
- ``other-sentence``: only the first row's question asked, the wrong fact in the second sentence
  (a detail the question does not ask for);
- ``answering``: only the first row's question asked, the wrong fact in its own sentence;
- ``right``: both sentences right, with the two-part question.
Each row keeps the shape of the documents set (``text``, ``context``, ``evidence``,
``answers``, ``wrong``, ``error_type``, ``span``, ``fixed``), so ``purr eval edits`` reads it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _right(r: dict[str, Any]) -> str:
    return r["fixed"][0] if r["wrong"] else r["text"]


def joined_question(first: str, second: str) -> str:
    """Two questions asked as one.

    >>> joined_question("How much does it weigh?", "How long does it run?")
    'How much does it weigh, and how long does it run?'
    """
    tail = second.strip()
    return f"{first.strip().rstrip('?')}, and {tail[:1].lower()}{tail[1:]}"


def _row(
    rid: str, kind: str, question: str, parts: tuple[str, str], doc: str, wrong: Any
) -> dict[str, Any]:
    text = " ".join(parts)
    row: dict[str, Any] = {"id": rid, "text": text, "context": question, "evidence": [doc]}
    if wrong is None:
        return row | {"answers": [], "wrong": False, "error_type": "right", "fixed": [text]}
    bad, good_sentence = wrong
    fixed = text.replace(bad["text"], good_sentence)
    value = bad.get("wrong_value")  # where the other sentence states it too, no check on it
    return row | {
        "answers": bad["answers"],
        "wrong": True,
        "error_type": kind,
        "span": bad.get("span"),
        "wrong_value": value if value and value.lower() not in fixed.lower() else None,
        "fixed": [fixed],
    }


def multi_answers(rows: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The rows (see the module doc), in a fixed order."""
    by_doc: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_doc.setdefault(r["evidence"][0], []).append(r)
    n = 0
    for doc, group in by_doc.items():
        questions = {r["context"] for r in group}
        if len(questions) < 2:
            continue
        wrong = [r for r in group if r["wrong"]]
        for a in wrong:
            b = next((r for r in group if r["context"] != a["context"]), None)
            if b is None or a["text"] in _right(b):
                continue
            both = joined_question(a["context"], b["context"])
            fix = (a, _right(a))
            n += 1
            yield _row(f"multi-{n:03d}", "two-part", both, (_right(b), a["text"]), doc, fix)
            n += 1
            yield _row(f"multi-{n:03d}", "other-sentence", b["context"], (_right(b), a["text"]),
                       doc, fix)  # fmt: skip
            n += 1
            yield _row(
                f"multi-{n:03d}", "answering", a["context"], (a["text"], _right(b)), doc, fix
            )
        firsts = sorted(questions)
        a = next(r for r in group if r["context"] == firsts[0])
        b = next(r for r in group if r["context"] == firsts[1])
        n += 1
        question = joined_question(a["context"], b["context"])
        yield _row(f"multi-{n:03d}", "right", question, (_right(a), _right(b)), doc, None)


def write_multi_answers(documents: Path, out: Path) -> dict[str, int]:
    """Write the rows made from ``documents`` to ``out``; the count of each kind."""
    rows = [json.loads(x) for x in documents.read_text("utf-8").splitlines() if x.strip()]
    made = list(multi_answers(rows))
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in made), "utf-8")
    counts: dict[str, int] = {}
    for r in made:
        counts[r["error_type"]] = counts.get(r["error_type"], 0) + 1
    return counts
