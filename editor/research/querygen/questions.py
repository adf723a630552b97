"""Pure text functions for verification questions: wh-questions about a named entity or number,
parsing questions out of LLM output, normalised de-duplication.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from spacy.tokens import Span

T = TypeVar("T")

WH_BY_LABEL: dict[str, str] = {
    "PERSON": "who",
    "NORP": "which group",
    "ORG": "which organization",
    "GPE": "where",
    "LOC": "where",
    "FAC": "what",
    "DATE": "when",
    "TIME": "when",
    "CARDINAL": "how many",
    "QUANTITY": "how much",
    "PERCENT": "what percentage",
    "MONEY": "how much money",
    "ORDINAL": "which",
    "EVENT": "what event",
    "LAW": "what law",
    "LANGUAGE": "what language",
}
_PLACE_PREPS = frozenset({"in", "at", "on", "to", "into"})
_TIME_PREPS = frozenset({"in", "on", "at", "during"})
_YEAR = re.compile(r"^(?:the year )?\d{3,4}$")
_LIST_MARKER = re.compile(r"^\s*(?:[-*•]+|\(?\d{1,2}[.)]|q\d*[:.)]|question\s*\d*[:.)])\s*", re.I)
_WORD = re.compile(r"[a-z0-9]+")


def normalize_question(text: str) -> str:
    """The key two questions share when they differ only in case, spacing or punctuation.

    >>> normalize_question("  When was  Marie Curie born? ")
    'when was marie curie born'
    >>> normalize_question("when was Marie Curie born") == normalize_question("When was she born?")
    False
    """
    return " ".join(_WORD.findall(text.lower()))


def dedupe(items: Iterable[T], key: Callable[[Any], str] = normalize_question) -> list[T]:
    """Items in order, dropping any whose ``key`` was seen before (or is empty).

    >>> dedupe(["Who is X?", "who is x", "Where is Y?", "?"])
    ['Who is X?', 'Where is Y?']
    """
    seen: set[str] = set()
    out: list[T] = []
    for item in items:
        k = key(item)
        if k and k not in seen:
            seen.add(k)
            out.append(item)
    return out


def interleave(groups: Sequence[Sequence[T]]) -> list[T]:
    """Round-robin over groups, so a cap keeps at least one item of each group first.

    >>> interleave([[1, 2, 3], [4], [5, 6]])
    [1, 4, 5, 2, 6, 3]
    """
    out: list[T] = []
    for i in range(max((len(g) for g in groups), default=0)):
        out.extend(g[i] for g in groups if i < len(g))
    return out


def parse_questions(output: str) -> list[str]:
    """Questions in LLM output: one per line, list markers removed, cut after the first '?'.

    >>> parse_questions("- Who won the prize?\\n2. When was it built? In 1889.\\nnot a question\\n")
    ['Who won the prize?', 'When was it built?']
    """
    questions: list[str] = []
    for line in output.splitlines():
        line = _LIST_MARKER.sub("", line).strip().strip('"“”').strip()
        if "?" not in line:
            continue
        question = line[: line.index("?") + 1].strip()
        if len(question.split()) >= 3:
            questions.append(question[:1].upper() + question[1:])
    return questions


def entity_question(ent: Span) -> str:
    """A question about ``ent`` made from its sentence by replacing it with a wh-phrase.

    The wh-phrase depends on the entity label (PERSON who, DATE when / in what year, GPE/LOC
    where after a locative preposition, CARDINAL how many, QUANTITY how many <unit>, ...).

    >>> from editor.text.nlp import get_nlp
    >>> doc = get_nlp()("Marie Curie won two Nobel Prizes in 1911.")
    >>> for ent in doc.ents:
    ...     print(ent.label_, "|", entity_question(ent))
    PERSON | Who won two Nobel Prizes in 1911?
    CARDINAL | Marie Curie won how many Nobel Prizes in 1911?
    WORK_OF_ART | Marie Curie won what in 1911?
    DATE | Marie Curie won two Nobel Prizes in what year?
    """
    doc = ent.doc
    start, end = ent.start, ent.end  # tokens replaced by the wh-phrase
    if end - start > 1 and doc[end - 1].tag_ == "POS":
        text_end, possessive = end - 1, True  # NER took the "'s" into the entity
    else:
        text_end, possessive = end, end < len(doc) and doc[end].tag_ == "POS"
        end += int(possessive)
    label = ent.label_
    wh = WH_BY_LABEL.get(label, "what")
    text = doc[start:text_end].text
    prev = doc[start - 1] if start > 0 else None
    prev_word = prev.lower_ if prev is not None else ""
    if label in {"DATE", "TIME"} and prev_word in _TIME_PREPS:
        if _YEAR.match(text):
            wh = "what year"
        else:
            start -= 1  # "on 14 March 1879" -> "when"
    elif label in {"GPE", "LOC"}:
        if prev_word in _PLACE_PREPS:
            start -= 1  # "born in Ulm" -> "born where"
        elif prev_word != "from":
            wh = "what"
    elif label == "CARDINAL":
        wh = "how many" if ent.root.dep_ == "nummod" else "what number"
    elif label == "QUANTITY":
        units = [t.text for t in doc[start:text_end] if t.pos_ in {"NOUN", "PROPN"}]
        wh = f"how many {' '.join(units)}" if units else "how much"
    elif label == "ORDINAL" and prev_word == "the":
        start -= 1  # "the first woman" -> "which woman"
    elif prev is not None and prev.head == ent.root and prev.dep_ in {"det", "nummod"}:
        start -= 1  # "the first", "two Nobel Prizes": the modifier goes with the entity
    if possessive:
        wh = "whose" if label == "PERSON" else f"{wh}'s"
    elif wh == "who" and prev is not None and prev.pos_ == "ADP" and start > 0:
        wh = "whom"
    before = doc[:start].text_with_ws if start > 0 else ""
    after = doc[end:].text if end < len(doc) else ""
    space = " " if after and after[0] not in ",.;:!?" else ""
    question = f"{before}{wh}{space}{after}"
    question = re.sub(r"[\s.!;:,]+$", "", question).strip() + "?"
    return question[:1].upper() + question[1:]
