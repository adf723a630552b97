"""Words shared by the stages: content words, the sentences of a text that answer a query,
and the window of a long evidence that bears on a claim.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from retrieval.sentences import split_spans

WORD = re.compile(r"[a-z0-9]+")
"""A word: a run of lower-case letters and digits ("1,200" is two words)."""
NUMBER_WORD = re.compile(r"[a-z0-9]+(?:[.,'][a-z0-9]+)*")
"""A word that keeps numbers and possessives whole ("1,200", "3.5", "eiffel's")."""
_STOP = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being
    it its this that these those which who whom what when where why how not no than then there
    their they them he she his her we our you your i has have had do does did can could will
    would should may might must also into over under about after before between during such
    whose many much""".split()
)


TOKEN = re.compile(r"[\w'’-]+")
"""A word as edits are compared: letters, digits, apostrophes and hyphens ("Eiffel's")."""


def word_changes(
    before: str, after: str, tags: tuple[str, ...]
) -> list[tuple[list[str], list[str]]]:
    """(run of ``before``, run of ``after``) for each word-level change of a kind in ``tags``
    (``replace``, ``insert``, ``delete``), words compared case-insensitively.

    >>> word_changes("Built by Edison in 1887.", "Built by Eiffel in 1889.", ("replace",))
    [(['Edison'], ['Eiffel']), (['1887'], ['1889'])]
    """
    from difflib import SequenceMatcher

    a, b = TOKEN.findall(before), TOKEN.findall(after)
    ops = SequenceMatcher(a=[w.lower() for w in a], b=[w.lower() for w in b], autojunk=False)
    return [(a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in ops.get_opcodes() if tag in tags]


def content_words(text: str, word: re.Pattern[str] = WORD) -> set[str]:
    """Lower-cased words that are not stop words (digits kept); ``word`` says what a word is.

    >>> sorted(content_words("When was the Eiffel Tower built?"))
    ['built', 'eiffel', 'tower']
    >>> sorted(content_words("It cost 1,200 francs.")), sorted(content_words("It cost 1,200 francs.", NUMBER_WORD))
    (['1', '200', 'cost', 'francs'], ['1,200', 'cost', 'francs'])
    """
    return {w for w in word.findall(text.lower()) if w not in _STOP}


def answering_sentences(text: str, query: str, top: int = 1) -> list[tuple[int, int]]:
    """Character spans of the ``top`` sentences of ``text`` that share the most content words
    with ``query`` (in that order); none when no sentence shares any.

    >>> t = "Paris is in France. The Eiffel Tower was built in 1889."
    >>> [t[a:b] for a, b in answering_sentences(t, "When was the Eiffel Tower built?")]
    ['The Eiffel Tower was built in 1889.']
    """
    target = content_words(query)
    scored = []
    for i, (a, b) in enumerate(split_spans(text)):
        words = content_words(text[a:b])
        if not words:
            continue
        overlap = len(words & target) / len(target | words) if target else 0.0
        if overlap > 0:
            scored.append((-overlap, i, (a, b)))
    scored.sort()
    return [span for _, _, span in scored[:top]]


def focus(evidence: str, claim: str, max_chars: int = 800) -> str:
    """The run of consecutive sentences of ``evidence`` (at most ``max_chars``) sharing the
    most content words with ``claim``: long documents shrink to the snippet-sized window
    trained editors saw in training. Short evidence is returned whole.

    >>> doc = "Paris is in France. " * 30 + "The tower was built in 1889. It is tall."
    >>> focus(doc, "The tower was built in 1887.", 45)
    'The tower was built in 1889. It is tall.'
    """
    if len(evidence) <= max_chars:
        return evidence
    spans = split_spans(evidence)
    target = content_words(claim)
    scores = [len(content_words(evidence[a:b]) & target) for a, b in spans]
    best, best_score = (0, 0), -1
    for i in range(len(spans)):
        j, total = i, 0
        while j < len(spans) and spans[j][1] - spans[i][0] <= max_chars:
            total += scores[j]
            j += 1
        if j > i and total > best_score:
            best, best_score = (i, j), total
    if best_score < 0:  # one sentence longer than the budget
        return evidence[:max_chars]
    i, j = best
    return evidence[spans[i][0] : spans[j - 1][1]]


def gather(sentences: list[str], claim: str, lengths: list[int], budget: int) -> list[int]:
    """Indices (in order) of the sentences that together cover the most of ``claim``'s content
    words within ``budget`` tokens (``lengths`` per sentence): greedily, the sentence adding the
    most words not yet covered, then the one sharing the most; none that adds nothing.
    For a claim that only several sentences of a long document support together.

    >>> s = ["Curie was born in Warsaw.", "It rained.", "She moved to Paris in 1891."]
    >>> gather(s, "Curie, born in Warsaw, moved to Paris in 1891.", [6, 3, 7], 13)
    [0, 2]
    >>> gather(s, "Curie, born in Warsaw, moved to Paris in 1891.", [6, 3, 7], 8)  # one fits
    [0]
    """
    target = content_words(claim)
    words = [content_words(s) & target for s in sentences]
    chosen: list[int] = []
    covered: set[str] = set()
    used = 0
    while True:
        best = max(
            (
                (len(w - covered), len(w), -i)
                for i, w in enumerate(words)
                if i not in chosen and used + lengths[i] <= budget
            ),
            default=None,
        )
        if best is None or best[0] == 0:
            return sorted(chosen)
        chosen.append(-best[2])
        covered |= words[-best[2]]
        used += lengths[-best[2]]


_DETOK = (
    (re.compile(r"``\s*|\s*''"), '"'),
    (re.compile(r"\s+([.,;:!?%)\]}])"), r"\1"),
    (re.compile(r"([(\[{$])\s+"), r"\1"),
    (re.compile(r"\s+('s|'re|'ve|'ll|'d|'m|n't)\b", re.I), r"\1"),
)


def detokenize(text: str) -> str:
    """Tokenised text (Penn Treebank spacing, as in many corpora) written as prose, so an
    editor that copies from it does not copy its spacing.

    >>> detokenize("It aired on Crunchyroll , Daisuki.net ( US ) and `` Toonami '' in 2016 .")
    'It aired on Crunchyroll, Daisuki.net (US) and "Toonami" in 2016.'
    >>> detokenize("class - interest ; it 's")
    "class - interest; it's"
    """
    for pattern, repl in _DETOK:
        text = pattern.sub(repl, text)
    return text


_WH = frozenset("who whom whose what which when where why how".split())
_QUESTION_OPENERS = _WH | frozenset(
    "is are was were do does did can could will would should has have had may might name".split()
)
_PREPOSITIONS = frozenset("in on at for from by to of during".split())


def is_question(text: str | None) -> bool:
    """Whether ``text`` (a dialogue context) is a question: it ends with "?" or opens with a
    question word (NQ's questions have no "?").

    >>> is_question("in what city was the car based"), is_question("Who wrote Hamlet?")
    (True, True)
    >>> is_question("Tell me about Paris."), is_question("In 1990 he moved"), is_question(None)
    (False, False, False)
    """
    if not text or not text.strip():
        return False
    words = [w.lower() for w in text.strip().split()]
    opens = words[0] in _QUESTION_OPENERS or (
        words[0] in _PREPOSITIONS and len(words) > 1 and words[1] in _WH  # "in what city ..."
    )
    return text.rstrip().endswith("?") or (
        opens and len(words) <= 40 and "." not in text.rstrip()[:-1]
    )


def named_in_question(name: str, question: str) -> bool:
    """Whether the question itself names ``name`` (case-insensitive, whole words): a name an
    answer may not have replaced or put in.

    >>> named_in_question("Lotus Elite", "in what city was the lotus elite car based")
    True
    >>> named_in_question("Surrey", "in what city was the lotus elite car based")
    False
    """
    n = " ".join(WORD.findall(name.lower()))
    q = " ".join(WORD.findall(question.lower()))
    return bool(n) and f" {n} " in f" {q} "


_QUESTION_AUX = frozenset(
    "is are was were do does did can could will would has have had should may might".split()
)


_PLACES = (
    r"(capital|capital city|city|country|state|place|town|river|sea|lake|mountain|island|"
    r"continent|region|province)"
)


def question_type(question: str) -> str:
    """The kind of answer a question asks for: person, date, place, number, yes/no, title or
    other.

    >>> [question_type(q) for q in ["who wrote hamlet", "when did ww2 end",
    ...  "where is the eiffel tower", "how many moons does mars have",
    ...  "is a tomato a fruit", "what song won eurovision in 1974", "what is dna"]]
    ['person', 'date', 'place', 'number', 'yes/no', 'title', 'other']
    >>> [question_type(q) for q in ["What is the capital of Peru?", "In which city was it formed?",
    ...  "Until what year did he reign?", "What river flows through Rome?"]]
    ['place', 'place', 'date', 'place']
    """
    q = question.lower().strip()
    first = q.split()[0] if q.split() else ""
    if first in {"who", "whom", "whose"}:
        return "person"
    if first == "when" or re.search(r"\b(what|which) (year|date|day|month|century)\b", q):
        return "date"
    if first == "where" or re.search(rf"\b(what|which) (is the |was the )?{_PLACES}\b", q):
        return "place"
    if re.match(r"how (many|much|long|far|old|tall|big|high)", q) or "what percentage" in q:
        return "number"
    if first in _QUESTION_AUX:
        return "yes/no"
    if re.match(r"(what|which|name the) .*\b(song|film|movie|book|album|show|series|novel)", q):
        return "title"
    return "other"


def _in_word(t: str, i: int) -> bool:
    """A word character at ``i``, or a point or comma inside a number ("13.1", "2,093")."""
    if 0 <= i < len(t) and (t[i].isalnum() or t[i] == "_"):
        return True
    return 0 < i < len(t) - 1 and t[i] in ".," and t[i - 1].isdigit() and t[i + 1].isdigit()


def changed_run(before: str, after: str) -> tuple[int, int, int]:
    """Where the one run of words an edit changed lies: ``(start, end in before, end in
    after)``, grown to whole words and numbers.

    >>> b, a = "It rose 13.1 percent.", "It rose 13.8 percent."
    >>> s, e, f = changed_run(b, a); b[s:e], a[s:f]
    ('13.1', '13.8')
    """
    p = 0
    while p < min(len(before), len(after)) and before[p] == after[p]:
        p += 1
    q = 0
    while q < min(len(before), len(after)) - p and before[-1 - q] == after[-1 - q]:
        q += 1
    while p > 0 and _in_word(before, p - 1):
        p -= 1
    while q > 0 and _in_word(before, len(before) - q):
        q -= 1
    return p, len(before) - q, len(after) - q


def keep_spacing(before: str, after: str) -> str:
    """``after`` with the words it shares with ``before`` written as ``before`` writes them
    and the spacing around them kept (a generating editor writes "80 km" for "80\u00a0km" and
    collapses double spaces): only the words the edit changes change.

    >>> keep_spacing("It is 80\u00a0km  (50\u00a0mi) long.", "It is 80 km (72 mi) long.")
    'It is 80\xa0km  (72\xa0mi) long.'
    >>> keep_spacing("Built in 1887.", "Built  in 1887."), keep_spacing("in 1887.", "Built in 1887.")
    ('Built in 1887.', 'Built in 1887.')
    >>> keep_spacing("It was  built.", "It was not built."), keep_spacing("It was not  built.", "It was built.")
    ('It was  not built.', 'It was  built.')
    """
    words = list(re.finditer(r"\S+", before))
    new = after.split()
    if not words or not new:
        return after
    gaps = [before[: words[0].start()]] + [
        before[a.end() : b.start()] for a, b in zip(words, words[1:], strict=False)
    ]
    out: list[str] = []
    ops = SequenceMatcher(None, [w.group() for w in words], new, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            out.extend(gaps[k] + words[k].group() for k in range(i1, i2))
        elif tag == "replace":
            out.append(gaps[i1] + " ".join(new[j1:j2]))
        elif tag == "insert" and i1 < len(words):  # before word i1: it takes a plain space
            out.append(gaps[i1] + " ".join(new[j1:j2]))
            gaps[i1] = " "
        elif tag == "insert":
            out.append(" " + " ".join(new[j1:j2]))
    return "".join(out) + before[words[-1].end() :]


def fitted(before: str, start: int, end: int, fix: str | None) -> str | None:
    """The evidence's words for the flagged ``before[start:end]``, as words that replace
    exactly that span: where the span is part of a word ("one" of "one-year") and the evidence's
    words carry the rest ("two-year"), the rest is left out ("two").

    >>> fitted("a one-year warranty", 2, 5, "two-year"), fitted("in 1887.", 3, 7, "1889")
    ('two', '1889')
    """
    if not fix:
        return None
    ws, we = start, end
    while ws > 0 and not before[ws - 1].isspace():
        ws -= 1
    while we < len(before) and not before[we].isspace():
        we += 1
    pre, post = before[ws:start], before[end:we]
    if pre and fix.startswith(pre):
        fix = fix[len(pre) :]
    if post and fix.endswith(post):
        fix = fix[: len(fix) - len(post)]
    return fix or None


def trimmed(before: str, start: int, end: int, fix: str) -> str:
    """``fix`` for ``before[start:end]`` less the words it shares with the text on either side
    of the span ("above 85%" for the "90%" of "stays above 90% for"), so that putting it in
    doubles no word.

    >>> trimmed("It stays above 90% for ten minutes.", 15, 18, "above 85%")
    '85%'
    >>> trimmed("It carries up to 300 kg.", 17, 23, "up to 250 kg"), trimmed("in 1887", 3, 7, "1889")
    ('250 kg', '1889')
    """
    words, left, right = fix.split(), before[:start].split(), before[end:].split()
    lower = [w.lower() for w in words]
    head = 0
    for k in range(min(len(words) - 1, len(left)), 0, -1):  # the longest run that ends the left
        if lower[:k] == [w.lower() for w in left[-k:]]:
            head = k
            break
    tail = 0
    for k in range(min(len(words) - 1 - head, len(right)), 0, -1):
        if lower[len(words) - k :] == [w.lower().rstrip(".,;:!?") for w in right[:k]]:
            tail = k
            break
    if not head and not tail:
        return fix
    return " ".join(words[head : len(words) - tail])


def splice(before: str, span: tuple[int, int], text: str) -> tuple[str, tuple[int, int]]:
    """``before`` with ``text`` in place of ``before[span]`` (its spacing kept) and the new
    text's span.

    >>> splice("Built in 1887. Tall.", (0, 14), "Built in 1889.")
    ('Built in 1889. Tall.', (0, 14))
    """
    new = keep_spacing(before[span[0] : span[1]], text)
    return before[: span[0]] + new + before[span[1] :], (span[0], span[0] + len(new))


def changed_words(before: str, after: str) -> set[str]:
    """Lower-cased words of ``after`` that replace or add to words of ``before``.

    >>> sorted(changed_words("Directed by Steven Spielberg.", "Directed by Robert Zemeckis."))
    ['robert', 'zemeckis']
    """
    return {w.lower() for _, new in word_changes(before, after, ("replace", "insert")) for w in new}


def undoes(before: str, after: str, written: set[str]) -> str | None:
    """The first word an edit of ``before`` into ``after`` removes that an earlier accepted edit
    wrote (``written``), or None.

    >>> undoes("Directed by Robert Zemeckis.", "Directed by Steven Spielberg.", {"robert", "zemeckis"})
    'robert'
    """
    removed = [
        w.lower() for old, _ in word_changes(before, after, ("replace", "delete")) for w in old
    ]
    return next((w for w in removed if w in written), None)
