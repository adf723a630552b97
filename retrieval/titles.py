"""Which documents a text names: an index's titles (and their short forms) found in a sentence.

Research asks it first for the pages a sentence is about ("The Rhine flows into the Black Sea."
names *Rhine* and *Black Sea*), so the subject's own page competes for the evidence even when
another page shares more of the sentence's words. Matching is on whole words, case-insensitive;
a match starts with a capital letter or a digit in the text and holds a letter (a name: not the
common noun "water" naming the page *Water*, nor "1,093" the page *1*), and longer names win over
the shorter names inside them. A name also reaches the pages whose title extends it ("Apple"
reaches *Apple* and *Apple Inc.*), so the reranker, not the lookup, picks which of them the
sentence is about.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable

_WORD = re.compile(r"\w+(?:[.-]\w+)*", re.UNICODE)  # "Google's" names Google
_QUALIFIER = re.compile(r"\s*\([^)]*\)\s*$")  # "Queen (band)" -> "Queen"
MAX_WORDS = 8
EXTENDED = 3  # pages whose title extends a name, at most, per name


def aliases(title: str) -> set[str]:
    """The word keys a title is matched by: the title, and the title without a bracketed
    qualifier.

    >>> sorted(aliases("Queen (band)"))
    ['queen', 'queen band']
    """
    out = set()
    for form in (title, _QUALIFIER.sub("", title)):
        words = [w.lower() for w in _WORD.findall(form)]
        if words and len(words) <= MAX_WORDS:
            out.add(" ".join(words))
    return out


class TitleLookup:
    """Document positions by the names of their titles (see the module docstring)."""

    def __init__(self, titles: Iterable[str]):
        self._docs: dict[str, list[int]] = {}
        self._longest = 0
        for i, title in enumerate(titles):
            for key in aliases(title or ""):
                self._docs.setdefault(key, []).append(i)
                self._longest = max(self._longest, key.count(" ") + 1)
        self._keys = sorted(self._docs)

    def __len__(self) -> int:
        return len(self._docs)

    def extending(self, key: str) -> list[int]:
        """Documents whose title starts with the words of ``key`` and goes on, at most
        ``EXTENDED``.

        >>> TitleLookup(["Apple", "Apple Inc.", "Applesauce"]).extending("apple")
        [1]
        """
        out: list[int] = []
        i = bisect_left(self._keys, key + " ")
        while i < len(self._keys) and self._keys[i].startswith(key + " ") and len(out) < EXTENDED:
            out.extend(d for d in self._docs[self._keys[i]] if d not in out)
            i += 1
        return out[:EXTENDED]

    def named(self, text: str, limit: int = 3) -> list[int]:
        """Positions of the documents ``text`` names, in the order it names them: those of its
        first ``limit`` names, each with the documents whose title extends it.

        >>> TitleLookup(["Rhine", "Black Sea", "Sea", "Water"]).named("The Rhine flows into the Black Sea and water.")
        [0, 1]
        >>> TitleLookup(["Google", "Microsoft"]).named("Google's parent company is Microsoft.", 1)
        [0]
        >>> TitleLookup(["1", "1984 (novel)", "Edison"]).named("In 1984 Edison had 1,093 patents.")
        [2]
        >>> TitleLookup(["Apple", "Microsoft", "Apple Inc."]).named("Apple was founded in 1976.", 1)
        [0, 2]
        """
        words = list(_WORD.finditer(text))
        out: list[int] = []
        names, i = 0, 0
        while i < len(words) and names < limit:
            first = words[i].group()
            if not (first[0].isupper() or first[0].isdigit()):
                i += 1
                continue
            for n in range(min(self._longest, len(words) - i), 0, -1):
                key = " ".join(w.group().lower() for w in words[i : i + n])
                found = self._docs.get(key) if any(c.isalpha() for c in key) else None
                if found:
                    out.extend(d for d in found + self.extending(key) if d not in out)
                    names, i = names + 1, i + n
                    break
            else:
                i += 1
        return out
