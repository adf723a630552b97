"""The context a span row is made in: a parsed sentence, the evidence window around it in its
document, and the banks of values drawn from other documents. Standard library only."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from training.data.spans.rows import SpanRow

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")

STOP = frozenset(
    """a an the of in on at to for from by with and or but as is was are were be been being has
    have had it its this that these those which who whom whose their his her he she they them
    there than then also not no into over under about after before during between since
    until while when where what how s""".split()
)


@dataclass(frozen=True)
class Sentence:
    """A parsed sentence: text, entities ``(start, end, label)``, adjectives before a noun
    ``(start, end)``, noun starts a modifier may precede, and a reworded form (or "")."""

    text: str
    ents: tuple[tuple[int, int, str], ...] = ()
    adjs: tuple[tuple[int, int], ...] = ()
    nouns: tuple[int, ...] = ()
    para: str = ""

    @classmethod
    def from_json(cls, d: dict) -> Sentence:
        return cls(
            d["t"],
            tuple((int(a), int(b), str(c)) for a, b, c in d.get("e", ())),
            tuple((int(a), int(b)) for a, b in d.get("a", ())),
            tuple(int(n) for n in d.get("n", ())),
            d.get("p") or "",
        )


@dataclass
class Context:
    """One claim sentence in its window. ``offsets[k]`` is where window sentence k starts in
    ``evidence``; ``at`` is the claim sentence's index in the window."""

    doc: str
    window: list[Sentence]
    at: int
    evidence: str
    offsets: list[int]
    bank: dict[str, list[str]]
    parents: dict[str, list[str]]
    rng: random.Random

    @property
    def sentence(self) -> Sentence:
        return self.window[self.at]

    def row(self, family: str, label: str, claim: str, spans=(), evidence=None) -> SpanRow:
        n = self.rng.getrandbits(40)
        return SpanRow(
            f"{self.doc}:{family}:{n:010x}",
            family,
            label,
            claim,
            self.evidence if evidence is None else evidence,
            self.doc,
            tuple(spans),
        )


WINDOW_CHARS = 520
"""The longest evidence window, in characters (the pipeline judges windows of this size)."""


def make_window(sents: list[Sentence], i: int, rng: random.Random, max_chars: int = WINDOW_CHARS):
    """The window around sentence ``i``: neighbours added at random sides while it fits."""
    a, b = i, i + 1
    size = len(sents[i].text)
    while True:
        sides = [s for s in ("l", "r") if (a > 0 if s == "l" else b < len(sents))]
        if not sides:
            break
        side = rng.choice(sides)
        k = a - 1 if side == "l" else b
        if size + 1 + len(sents[k].text) > max_chars:
            break
        size += 1 + len(sents[k].text)
        a, b = (k, b) if side == "l" else (a, k + 1)
    window = sents[a:b]
    offsets, pos = [], 0
    for s in window:
        offsets.append(pos)
        pos += len(s.text) + 1
    return window, i - a, " ".join(s.text for s in window), offsets


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}
