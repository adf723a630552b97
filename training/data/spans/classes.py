"""Closed classes of words a value can be swapped within (lower case; matched as whole words).

A claim that puts another member of the same class in a word's place states another value
for the same slot: "the largest hot desert" -> "the largest cold desert". Antonym pairs are
classes of two. Members are matched case-insensitively and written back in the original's case.
"""

from __future__ import annotations

import re

CLASSES: dict[str, tuple[str, ...]] = {
    "direction": (
        "north",
        "south",
        "east",
        "west",
        "northeast",
        "northwest",
        "southeast",
        "southwest",
    ),
    "directional": (
        "northern",
        "southern",
        "eastern",
        "western",
        "northeastern",
        "northwestern",
        "southeastern",
        "southwestern",
        "central",
    ),
    "superlative_size": ("largest", "smallest", "biggest"),
    "superlative_height": ("highest", "lowest", "tallest"),
    "superlative_length": ("longest", "shortest"),
    "superlative_age": ("oldest", "youngest", "newest"),
    "superlative_rank": ("best", "worst"),
    "superlative_pop": ("most populous", "least populous"),
    "comparative": ("larger", "smaller"),
    "comparative_more": ("more", "fewer", "less"),
    "ordinal": (
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "eleventh",
        "twelfth",
    ),
    "century": (
        "1st",
        "2nd",
        "3rd",
        "4th",
        "5th",
        "6th",
        "7th",
        "8th",
        "9th",
        "10th",
        "11th",
        "12th",
        "13th",
        "14th",
        "15th",
        "16th",
        "17th",
        "18th",
        "19th",
        "20th",
        "21st",
    ),
    "era": ("BC", "AD", "BCE", "CE"),
    "month": (
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ),
    "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "season": ("spring", "summer", "autumn", "winter"),
    "continent": (
        "Africa",
        "Asia",
        "Europe",
        "North America",
        "South America",
        "Australia",
        "Antarctica",
        "Oceania",
    ),
    "ocean": ("Atlantic Ocean", "Pacific Ocean", "Indian Ocean", "Arctic Ocean", "Southern Ocean"),
    "sea": (
        "Mediterranean Sea",
        "Black Sea",
        "Caspian Sea",
        "Red Sea",
        "Baltic Sea",
        "North Sea",
        "Caribbean Sea",
        "Arabian Sea",
        "South China Sea",
        "Aegean Sea",
        "Adriatic Sea",
        "Dead Sea",
    ),
    "planet": ("Mercury", "Venus", "Earth", "Mars", "Jupiter", "Saturn", "Uranus", "Neptune"),
    "religion": ("Christian", "Muslim", "Jewish", "Hindu", "Buddhist", "Sikh"),
    "religion_noun": (
        "Christianity",
        "Islam",
        "Judaism",
        "Hinduism",
        "Buddhism",
        "Sikhism",
        "Taoism",
        "Shinto",
    ),
    "denomination": (
        "Catholic",
        "Protestant",
        "Orthodox",
        "Baptist",
        "Methodist",
        "Lutheran",
        "Anglican",
        "Presbyterian",
        "Sunni",
        "Shia",
        "Calvinist",
    ),
    "clergy": (
        "priest",
        "minister",
        "bishop",
        "pastor",
        "rabbi",
        "imam",
        "monk",
        "nun",
        "cardinal",
        "archbishop",
    ),
    "instrument": (
        "piano",
        "guitar",
        "violin",
        "cello",
        "drums",
        "trumpet",
        "saxophone",
        "flute",
        "clarinet",
        "harp",
    ),
    "colour": (
        "red",
        "blue",
        "green",
        "yellow",
        "black",
        "white",
        "orange",
        "purple",
        "brown",
        "grey",
        "gray",
        "pink",
    ),
    "element": (
        "hydrogen",
        "helium",
        "oxygen",
        "nitrogen",
        "carbon",
        "iron",
        "gold",
        "silver",
        "copper",
        "uranium",
        "sodium",
        "calcium",
    ),
    "gas_state": ("solid", "liquid", "gas"),
    "government": ("republic", "monarchy", "empire", "kingdom", "dictatorship", "democracy"),
    "polity": ("Republic", "Empire", "Kingdom"),
    "royal": ("king", "queen", "emperor", "empress", "prince", "princess", "duke", "pope"),
    "office": (
        "president",
        "vice president",
        "prime minister",
        "chancellor",
        "governor",
        "mayor",
        "senator",
    ),
    "profession": (
        "actor",
        "singer",
        "painter",
        "poet",
        "novelist",
        "physicist",
        "chemist",
        "mathematician",
        "philosopher",
        "composer",
        "architect",
        "engineer",
        "astronomer",
        "biologist",
        "economist",
        "lawyer",
        "journalist",
        "director",
    ),
    "sport": (
        "football",
        "basketball",
        "baseball",
        "cricket",
        "tennis",
        "golf",
        "rugby",
        "hockey",
        "boxing",
        "swimming",
    ),
    "animal_class": ("mammal", "bird", "reptile", "amphibian", "fish", "insect"),
    "diet": ("herbivore", "carnivore", "omnivore", "herbivorous", "carnivorous", "omnivorous"),
    "family": (
        "father",
        "mother",
        "son",
        "daughter",
        "brother",
        "sister",
        "uncle",
        "aunt",
        "grandfather",
        "grandmother",
        "husband",
        "wife",
        "nephew",
        "niece",
        "cousin",
    ),
    "gender": ("male", "female"),
    "party": (
        "Democratic",
        "Republican",
        "Labour",
        "Conservative",
        "Liberal",
        "Communist",
        "Socialist",
    ),
    "war_side": ("Allied", "Axis"),
    "language_family": ("Germanic", "Romance", "Slavic", "Celtic", "Semitic", "Turkic"),
    "art_period": (
        "Baroque",
        "Renaissance",
        "Romantic",
        "Classical",
        "Gothic",
        "Modernist",
        "Impressionist",
    ),
}

ANTONYMS: tuple[tuple[str, str], ...] = (
    ("hot", "cold"),
    ("warm", "cool"),
    ("wet", "dry"),
    ("high", "low"),
    ("large", "small"),
    ("big", "small"),
    ("long", "short"),
    ("old", "new"),
    ("ancient", "modern"),
    ("early", "late"),
    ("before", "after"),
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("increases", "decreases"),
    ("rise", "fall"),
    ("rose", "fell"),
    ("won", "lost"),
    ("win", "lose"),
    ("victory", "defeat"),
    ("upper", "lower"),
    ("inner", "outer"),
    ("maximum", "minimum"),
    ("major", "minor"),
    ("private", "public"),
    ("internal", "external"),
    ("positive", "negative"),
    ("north", "south"),
    ("east", "west"),
    ("freshwater", "saltwater"),
    ("domestic", "foreign"),
    ("urban", "rural"),
    ("legal", "illegal"),
    ("natural", "artificial"),
    ("first", "last"),
    ("entered", "left"),
    ("born", "died"),
    ("birth", "death"),
    ("founded", "dissolved"),
    ("opened", "closed"),
    ("light", "heavy"),
    ("heavier", "lighter"),
    ("higher", "lower"),
    ("longer", "shorter"),
    ("older", "younger"),
    ("deep", "shallow"),
    ("wide", "narrow"),
    ("rich", "poor"),
    ("strong", "weak"),
    ("elected", "defeated"),
    ("independent", "dependent"),
    ("import", "export"),
    ("imports", "exports"),
    ("acquired", "sold"),
    ("buy", "sell"),
    ("maternal", "paternal"),
    ("predator", "prey"),
    ("liberal", "conservative"),
)


def _all_classes() -> list[tuple[str, tuple[str, ...]]]:
    out = list(CLASSES.items())
    out += [(f"antonym:{a}/{b}", (a, b)) for a, b in ANTONYMS]
    return out


CLASS_LIST = _all_classes()
_MEMBER = {}
for _name, _members in CLASS_LIST:
    for _m in _members:
        _MEMBER.setdefault(_m.lower(), []).append(_name)
_PATTERN = re.compile(
    r"(?<![\w-])("
    + "|".join(re.escape(m) for m in sorted(_MEMBER, key=len, reverse=True))
    + r")(?![\w-])",
    re.IGNORECASE,
)
_BY_NAME = dict(CLASS_LIST)


def matches(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, class name)`` of every closed-class word in ``text``.

    >>> matches("the largest hot desert")
    [(4, 11, 'superlative_size'), (12, 15, 'antonym:hot/cold')]
    """
    out = []
    for m in _PATTERN.finditer(text):
        for name in _MEMBER[m.group().lower()]:
            out.append((m.start(), m.end(), name))
    return out


def members(name: str) -> tuple[str, ...]:
    return _BY_NAME[name]


def in_case_of(word: str, like: str) -> str:
    """``word`` written in the case of ``like``.

    >>> in_case_of("cold", "Hot"), in_case_of("bc", "AD"), in_case_of("Mars", "earth")
    ('Cold', 'BC', 'mars')
    """
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    if like.islower():
        return word.lower()
    return word
