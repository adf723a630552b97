"""Multi-hop research: a question whose answer lies on a bridge entity's page.

"Who directed the film that won Best Picture at the 67th Academy Awards?" names its subject only
by description: "the film that won Best Picture at the 67th Academy Awards". Searching the
whole question finds the ceremony's page, which names the film but not its director. Research
in hops does what a reader does:

1. ``bridge`` finds the description in the question's parse: a noun phrase with a relative or
   participial clause ("the film that won ...", "the company founded by ...") that is not itself
   what the question asks for (it sits under a preposition or is the verb's object);
2. hop 1 researches the description alone; ``MultiHop.entity`` reads the name it stands for from
   the hop's best evidence (the page's title, or a name in its best sentence, of the kind the
   description's noun asks for, not named in the description);
3. hop 2 researches the question with the description replaced by that name ("Who directed
   Forrest Gump?").

The hops' queries lead the research (generator ``hop 1`` and ``hop 2``, the bridge as the
``focus``), so the result lists them with the entity each found (``EditResult.hops``).

A comparison question ("Which is older, the Eiffel Tower or the Statue of Liberty?") gets a
query for each side (generator ``comparison``), so the evidence speaks of both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from editor.result import Hop
from editor.text.words import content_words
from editor.types import Evidence, Query

PERSON_NOUNS = {
    "person", "man", "woman", "director", "author", "writer", "actor", "actress", "singer",
    "player", "president", "king", "queen", "leader", "founder", "inventor", "composer",
    "artist", "painter", "scientist", "poet", "producer", "coach", "captain", "wife",
    "husband", "son", "daughter", "father", "mother", "emperor", "ruler", "architect",
    "physicist", "chemist", "mathematician", "explorer", "philosopher", "engineer",
    "sculptor", "novelist", "playwright", "musician", "astronaut", "general", "pope",
}  # fmt: skip
PLACE_NOUNS = {
    "country", "city", "town", "state", "nation", "island", "river", "mountain", "region",
    "capital", "province", "place", "continent", "village", "county", "lake", "sea",
}  # fmt: skip
ORG_NOUNS = {
    "company", "team", "band", "club", "party", "organization", "organisation", "university",
    "school", "group", "firm", "network", "agency", "league", "army",
}  # fmt: skip
TITLE_NOUNS = {
    "film", "movie", "book", "novel", "song", "album", "show", "series", "play", "game",
    "ship", "opera", "painting", "poem", "musical", "building", "bridge", "tower",
    "museum", "temple", "palace", "stadium", "church", "cathedral", "statue", "monument",
}  # fmt: skip

KIND_LABELS = {
    "person": {"PERSON"},
    "place": {"GPE", "LOC", "FAC"},
    "org": {"ORG"},
    "title": {"WORK_OF_ART", "PERSON", "ORG", "PRODUCT", "EVENT", "FAC"},
}
"""The spaCy entity labels a bridge of each kind may have ("title": a film, book or ship, which
the small NER model often calls a person or an organisation)."""

PLACE_LEVELS = {
    "country": "country",
    "nation": "country",
    "continent": "continent",
    "city": "inside",
    "town": "inside",
    "capital": "inside",
    "village": "inside",
}
"""The gazetteer level (``editor.claims.places``) of the place a head noun names."""


@dataclass(frozen=True)
class Bridge:
    """A question's description of its subject: its text, its head noun and the kind of name
    it stands for (``person``, ``place``, ``org`` or ``title``)."""

    description: str
    head: str
    kind: str


def noun_kind(noun: str) -> str | None:
    """The kind of name a description's head noun stands for (None: no name).

    >>> noun_kind("director"), noun_kind("country"), noun_kind("band"), noun_kind("film")
    ('person', 'place', 'org', 'title')
    >>> noun_kind("decision") is None
    True
    """
    noun = noun.lower()
    for kind, nouns in (
        ("person", PERSON_NOUNS),
        ("place", PLACE_NOUNS),
        ("org", ORG_NOUNS),
        ("title", TITLE_NOUNS),
    ):
        if noun in nouns:
            return kind
    return None


def bridge(doc: Any) -> Bridge | None:
    """The description in the parsed question ``doc`` that names the subject through another
    fact, or None: a common noun of a known kind, not itself named, with a relative clause (or
    else a participial modifier), and not what the question asks for: a preposition's or the
    verb's object, or the subject where a wh-word asks for something else ("In what year was
    the company founded by ... incorporated?")."""
    # a wh-word of the question's own ("In which city ..."), not a relative clause's ("that")
    asks_other = any(t.tag_ in ("WDT", "WRB") and t.head.dep_ != "relcl" for t in doc)
    words = [t for t in doc if not t.is_punct]
    for token in doc:
        if token.pos_ != "NOUN":
            continue
        subject = token.dep_ in ("nsubj", "nsubjpass", "attr") and asks_other
        if token.dep_ not in ("pobj", "dobj") and not subject:
            continue
        clause = [c for c in token.children if c.dep_ == "relcl"] or [
            c for c in token.children if c.dep_ == "acl"
        ]
        kind = noun_kind(token.lemma_ or token.text)
        if not clause or kind is None:
            continue
        last = max(token.i, clause[0].right_edge.i)
        # "In which city was the band that recorded X formed?": the small parser hangs the
        # main verb, the question's last word, on the clause
        end = doc[last]
        if end.i == words[-1].i and end.tag_ in ("VB", "VBN", "VBD") and end.i != clause[0].i:
            last -= 1
        span = doc[token.left_edge.i : last + 1]
        if span[0].tag_ == "PRP$" or any(t.tag_ in ("WDT", "WP") and t.i < token.i for t in span):
            continue  # "its decision ...", or "which film ..." asking for the film itself
        if any(c.dep_ == "compound" or c.pos_ == "PROPN" for c in token.lefts):
            continue  # a named thing ("the orinoco river located on a map")
        text = span.text.rstrip(" ?.")
        if len(content_words(text)) >= 3:
            return Bridge(text, token.text, kind)
    return None


class MultiHop:
    """Finds a question's bridge and the entity hop 1's evidence names for it (see the module
    doc). ``place_level`` tells a country from a city (the gazetteer's ``level``); without it
    any place name of the sentence will do."""

    def __init__(self, nlp: Any = None, place_level: Callable[[str], str | None] | None = None):
        self._nlp = nlp
        self.place_level = place_level

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            from editor.text.nlp import get_nlp

            self._nlp = get_nlp()
        return self._nlp

    def bridge(self, question: str) -> Bridge | None:
        return bridge(self.nlp(question))

    def comparison(self, question: str) -> list[str]:
        """A query for each side of a comparison question, or none (see ``compared``)."""
        return compared(question)

    def entity(self, b: Bridge, evidence: Sequence[Evidence]) -> str | None:
        """The name the description ``b`` stands for, read from hop 1's ``evidence`` (best
        first): the evidence's page itself where the description does not name it and asks
        for a title or the page's first sentence calls it by the description's noun ("Queen
        are a British rock band"), else the first name of the description's kind, not named in
        it, in the evidence sentences sharing most of its words."""
        from retrieval.sentences import split

        described = content_words(b.description)
        level = PLACE_LEVELS.get(b.head.lower()) if b.kind == "place" else None
        for e in evidence[:1]:
            name = re.sub(r"\s*\([^)]*\)$", "", e.title or "")  # "Queen (band)" -> "Queen"
            lead = split(e.text)[:1]
            said = described - {b.head.lower()}
            # the page is itself the thing described: its first sentence calls it a <head>, or
            # it is a person's page that says what the description says of them
            about = bool(lead) and (
                b.head.lower() in content_words(lead[0])
                or b.kind == "person"
                and name.split()[-1] in lead[0].split()[:5]  # "Sir Alexander Fleming was"
                and len(said & content_words(e.text)) * 2 >= len(said)
            )
            if name and not content_words(name) & said and (b.kind == "title" or about):
                if not (level and self.place_level and self.place_level(name) != level):
                    return name
            # "a song by the British rock band Queen": the noun, then the name
            named = re.search(rf"\b{re.escape(b.head)}\s+((?:[A-Z][\w'&.-]*\s?)+)", e.text)
            if named and not content_words(named.group(1)) & said:
                return named.group(1).strip()
            sentences = sorted(split(e.text), key=lambda s: -len(content_words(s) & described))
            for sentence in sentences:
                for ent in self.nlp(sentence).ents:
                    words = content_words(ent.text)
                    if ent.label_ not in KIND_LABELS[b.kind] or not words or words & described:
                        continue
                    if level and self.place_level and self.place_level(ent.text) != level:
                        continue
                    return ent.text
        return None


_COMPARISON = re.compile(
    r"^(?P<head>.*?\b(?:\w+er|more \w+|less \w+|first|earlier|later|last)\b.*?)[,:]?\s+"
    r"(?P<a>(?:the\s+)?[A-Z0-9][^,?]*?)\s+or\s+(?P<b>(?:the\s+)?[A-Z0-9][^,?]*?)\s*\??$",
)


def compared(question: str) -> list[str]:
    """For a comparison question ("Which is older, the Eiffel Tower or the Statue of
    Liberty?"), one query per side: the side with what the question asks of it; none for other
    questions. Each side is researched, so the evidence covers both.

    >>> compared("Which is older, the Eiffel Tower or the Statue of Liberty?")
    ['the Eiffel Tower older', 'the Statue of Liberty older']
    >>> compared("Who was born first, Marie Curie or Albert Einstein?")
    ['Marie Curie born first', 'Albert Einstein born first']
    >>> compared("Is it red or blue?"), compared("Where was Marie Curie born?")
    ([], [])
    """
    m = _COMPARISON.match(" ".join(question.split()))
    if m is None:
        return []
    asked = " ".join(
        w for w in re.findall(r"[\w'-]+", m.group("head")) if w.lower() not in _QUESTION_WORDS
    )
    return [f"{m.group(side).strip()} {asked}".strip() for side in ("a", "b")]


_QUESTION_WORDS = {"which", "who", "what", "is", "was", "are", "were", "of", "the", "these"}


def hop_query(question: str, b: Bridge, entity: str) -> str:
    """The question with its description replaced by the name hop 1 found.

    >>> b = Bridge("the film that won Best Picture in 1995", "film", "title")
    >>> hop_query("Who directed the film that won Best Picture in 1995?", b, "Forrest Gump")
    'Who directed Forrest Gump?'
    """
    return " ".join(question.replace(b.description, entity).split())


def hops_of(queries: Sequence[Query]) -> tuple[Hop, ...]:
    """The hops among a research run's ``queries`` (generator ``hop N``), in order.

    >>> hops_of([Query("the film that won", "hop 1", focus="Forrest Gump"), Query("q", "sentence")])
    (Hop(number=1, query='the film that won', found='Forrest Gump'),)
    """
    out = [
        Hop(int(q.generator.split()[1]), q.text, q.focus)
        for q in queries
        if q.generator.startswith("hop ")
    ]
    return tuple(sorted(out, key=lambda h: h.number))
