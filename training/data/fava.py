"""FAVA-Bench's entity errors as sentence rows for ``purr eval edits``, researched, not given.

FAVA-Bench (``raw/fava/annotations.json``) holds ChatGPT and Llama-2-chat answers with the
errors people tagged inline: ``<entity><delete>British</delete><mark>american</mark></entity>``
is a wrong name and its correction; ``relation``, ``contradictory``, ``invented``,
``unverifiable``, ``subjective`` tag other errors. Only answers whose ``subject`` is the title
of a page of the embedded corpus are kept (``retrieval.titles.aliases``): research can find
their evidence there. Each answer is split into sentences:

- a sentence with one entity error whose correction replaces a few words with a few words
  (not a comment, nor a rewrite), and no other tag, is a wrong row:
  ``answers`` the correction, ``wrong_value`` the wrong words, ``gold`` the sentence fixed
  (the correction takes the wrong words' first capital);
- a sentence with no tag at all is a right row; it must come back unchanged;
- sentences with other errors are left out (no fix to grade an edit by).

The prompt is each row's ``context``; ``evidence`` is absent, so ``purr eval edits`` researches
it. Rows are split dev/test by subject.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from editor.verdicts import CONTRADICTED, SUPPORTED

_ERROR = re.compile(
    r"<(entity|relation|contradictory|unverifiable|invented|subjective|fictional|other|format)>"
    r"(.*?)</\1>",
    re.S,
)
_DELETE = re.compile(r"<delete>(.*?)</delete>", re.S)
_MARK = re.compile(r"<mark>(.*?)</mark>", re.S)
_TAG = re.compile(r"</?[a-z]+>")
MAX_WORDS = 5  # a correction of more words is a comment or a rewrite, not a replacement
_GLUED = re.compile(r"(?<=[a-z0-9)\"][.!?])(?=[A-Z])")  # "network.Training": a lost line break


@dataclass(frozen=True)
class Tagged:
    """One tagged error of an answer: its words in the plain text and the correction."""

    kind: str
    start: int
    end: int
    fix: str | None


def parse(annotated: str) -> tuple[str, list[Tagged]]:
    """The answer as the model wrote it (deleted words kept, corrections dropped) and its
    tagged errors.

    >>> text, errs = parse("It is <entity><delete>British</delete><mark>american</mark></entity>.")
    >>> text, [(e.kind, text[e.start:e.end], e.fix) for e in errs]
    ('It is British.', [('entity', 'British', 'american')])
    >>> parse("Done.Next <invented><delete>made up</delete></invented>.")[0]
    'Done. Next made up.'
    """
    out: list[str] = []
    errors: list[Tagged] = []
    pos, n = 0, 0
    for m in _ERROR.finditer(annotated):
        before = _GLUED.sub(" ", _TAG.sub("", annotated[pos : m.start()]))
        out.append(before)
        n += len(before)
        deleted = _DELETE.search(m.group(2))
        words = _TAG.sub("", deleted.group(1)) if deleted else ""
        mark = _MARK.search(m.group(2))
        fix = " ".join(_TAG.sub("", mark.group(1)).split()) if mark else None
        errors.append(Tagged(m.group(1), n, n + len(words), fix or None))
        out.append(words)
        n += len(words)
        pos = m.end()
    out.append(_GLUED.sub(" ", _TAG.sub("", annotated[pos:])))
    return "".join(out), errors


def _replacement(wrong: str, fix: str) -> bool:
    """Whether a tagged correction replaces the wrong words (a few words for a few words),
    rather than commenting on them or rewriting the passage.

    >>> _replacement("828", "829.8"), _replacement("Honduras", "(not spoken in honduras)")
    (True, False)
    >>> _replacement(".", "the ten most commonly spoken languages in indonesia are: indonesian")
    False
    """

    def short(t: str) -> bool:
        return 0 < len(t.split()) <= MAX_WORDS and any(c.isalnum() for c in t)

    return short(wrong) and short(fix) and not any(c in fix for c in "()[]:;")


def _cased(fix: str, wrong: str) -> str:
    """The correction with the wrong words' first capital.

    >>> _cased("american", "British"), _cased("viking press", "faber")
    ('American', 'viking press')
    """
    return fix[:1].upper() + fix[1:] if wrong[:1].isupper() else fix


def sentence_rows(answer: dict[str, Any], index: int) -> list[dict[str, Any]]:
    """The wrong and right sentence rows of one annotated answer (see the module doc)."""
    from retrieval.sentences import split_spans
    from training.data.real_claims import split_of

    text, errors = parse(answer["annotated"])
    subject = answer.get("subject") or ""
    split = split_of(subject)
    rows = []
    for k, (a, b) in enumerate(split_spans(text)):
        inside = [e for e in errors if e.start < b and e.end > a or a <= e.start < b]
        sentence = text[a:b].strip()
        base = {
            "id": f"fava-{index}-{k}",
            "dataset": "fava",
            "model": answer.get("model"),
            "subject": subject,
            "context": " ".join(answer.get("prompt", "").split()) or None,
            "text": sentence,
            "split": split,
        }
        if not inside:
            rows.append({**base, "wrong": False, "label": SUPPORTED, "answers": []})
            continue
        (e,) = inside if len(inside) == 1 else (None,)
        if e is None or e.kind != "entity" or not e.fix or not a <= e.start < e.end <= b:
            continue
        wrong = text[e.start : e.end].strip()
        if not _replacement(wrong, e.fix):
            continue
        fix = _cased(e.fix, wrong)
        gold = (text[a : e.start] + fix + text[e.end : b]).strip()
        rows.append(
            {
                **base,
                "wrong": True,
                "label": CONTRADICTED,
                "answers": [fix],
                "wrong_value": wrong,
                "unsupported": wrong.split(),
                "gold": gold,
                "reference": gold,
            }
        )
    return rows


def fava_rows(path: Path, titles: Iterable[str]) -> list[dict[str, Any]]:
    """The sentence rows of the answers in ``path`` whose subject is one of ``titles``."""
    from retrieval.titles import aliases

    known = {a for t in titles for a in aliases(t)}
    answers = json.loads(path.read_text("utf-8"))
    rows = []
    for i, answer in enumerate(answers):
        if aliases(answer.get("subject") or "") & known:
            rows.extend(sentence_rows(answer, i))
    return rows
