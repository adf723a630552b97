"""Answers, not spans: a reader spreads its probability over nested spans of one answer ("308",
"308 points", "just 308"), so one span's probability is not a confidence. ``by_answer`` groups a
reading's spans by their typed value (the numbers a span states, in order, else its normalised
words) and sums each group's probability; ``Calibration`` maps that mass to the probability of
being right, fitted on a dev split (``purr eval reader-calibration``).

Grouping by value, not by substring: "Gustave Eiffel" and "Eiffel" stay two answers (a
fragment never borrows the mass of the name it is part of), while "July 2019" and "2019" state
the same value at two granularities and count once.
"""

from __future__ import annotations

import json
import math
import re
import string
from dataclasses import dataclass
from pathlib import Path

from editor.reader.base import Answer, Reading

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def value_of(text: str) -> tuple[str, ...]:
    """The typed value a span states: its numbers (separators dropped), else its words lower
    cased without punctuation or articles.

    >>> value_of("308 points"), value_of("just 308"), value_of("port 8,080 and 9100")
    (('#', '308'), ('#', '308'), ('#', '8080', '9100'))
    >>> value_of("the Roman Empire"), value_of("Roman Empire!")
    (('roman', 'empire'), ('roman', 'empire'))
    """
    numbers = [n.replace(",", "") for n in _NUMBER.findall(text)]
    if numbers:
        return ("#", *numbers)
    words = "".join(c for c in text.lower() if c not in string.punctuation)
    return tuple(_ARTICLES.sub(" ", words).split())


def by_answer(reading: Reading) -> tuple[Answer, ...]:
    """The reading's answers, one per value, best first: each the most probable span of its
    value, with the summed probability of every span stating it (capped at 1).

    >>> r = Reading("q", (Answer("308", 0, 3, 0.38), Answer("four", 9, 13, 0.2),
    ...                   Answer("308 points", 0, 10, 0.14)), 0.1)
    >>> [(a.text, round(a.probability, 2)) for a in by_answer(r)]
    [('308', 0.52), ('four', 0.2)]
    """
    groups: dict[tuple[str, ...], list[Answer]] = {}
    for a in reading.answers:
        groups.setdefault(value_of(a.text), []).append(a)
    out = []
    for spans in groups.values():
        top = max(spans, key=lambda a: a.probability)
        mass = min(1.0, sum(a.probability for a in spans))
        out.append(Answer(top.text, top.start, top.end, mass))
    return tuple(sorted(out, key=lambda a: -a.probability))


@dataclass(frozen=True)
class Calibration:
    """A map from a probability to the share right, fitted on a dev split: Platt scaling
    (``sigmoid(a * logit(p) + b)``) or, with ``xs``/``ys``, an isotonic step curve
    (interpolated between its points).

    >>> Calibration(1.0, 0.0)(0.3), Calibration(xs=(0.1, 0.5), ys=(0.4, 0.8))(0.3)
    (0.3, 0.6)
    """

    a: float = 1.0
    b: float = 0.0
    fitted_on: str = ""
    xs: tuple[float, ...] = ()
    ys: tuple[float, ...] = ()

    def __call__(self, p: float) -> float:
        if self.xs:
            return round(float(_interp(p, self.xs, self.ys)), 6)
        p = min(max(p, 1e-6), 1 - 1e-6)
        z = min(max(self.a * math.log(p / (1 - p)) + self.b, -30.0), 30.0)
        return round(1 / (1 + math.exp(-z)), 6)

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        d = json.loads(Path(path).read_text("utf-8"))
        return cls(
            float(d.get("a", 1.0)),
            float(d.get("b", 0.0)),
            str(d.get("fitted_on", "")),
            tuple(d.get("xs", ())),
            tuple(d.get("ys", ())),
        )

    def save(self, path: str | Path) -> None:
        data = {"a": self.a, "b": self.b, "xs": self.xs, "ys": self.ys, "fitted_on": self.fitted_on}
        Path(path).write_text(json.dumps(data, indent=2) + "\n", "utf-8")


def _interp(p: float, xs: tuple[float, ...], ys: tuple[float, ...]) -> float:
    if p <= xs[0]:
        return ys[0]
    for k in range(1, len(xs)):
        if p <= xs[k]:
            t = (p - xs[k - 1]) / (xs[k] - xs[k - 1]) if xs[k] > xs[k - 1] else 1.0
            return ys[k - 1] + t * (ys[k] - ys[k - 1])
    return ys[-1]
