"""Slot-level contradiction checks: the cases a user meets (a wrong year range, a wrong crew
member, a wrong prize year, hedged quantities, swapped roles, a negation), on real spaCy."""

from __future__ import annotations

from datetime import date

import pytest

from editor.claims.slot_check import SlotChecker
from editor.claims.slots import approximate, date_range, quantity

EIFFEL = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is "
    "named after the engineer Gustave Eiffel, whose company designed and built the tower from "
    "1887 to 1889."
)
APOLLO = (
    "Apollo 11 was the American spaceflight that first landed humans on the Moon. Commander Neil "
    "Armstrong and Lunar Module Pilot Buzz Aldrin landed the Apollo Lunar Module Eagle on July 20, "
    "1969."
)
CURIE = (
    "Marie Curie was a Polish and naturalised-French physicist and chemist. She won the Nobel "
    "Prize in Physics in 1903 and the Nobel Prize in Chemistry in 1911."
)
HEIGHT = "The tower is 330 metres (1,083 ft) tall, about the same height as an 81-storey building."


@pytest.fixture(scope="module")
def checker() -> SlotChecker:
    return SlotChecker()


@pytest.mark.parametrize(
    ("claim", "evidence", "reason"),
    [
        (
            "The company of engineer Gustave Eiffel designed and built it from 1887 to 1895.",
            EIFFEL,
            "'1887 to 1895' vs '1887 to 1889'",
        ),
        (
            "Commander Neil Armstrong and Lunar Module Pilot John Glenn landed the Eagle.",
            APOLLO,
            "'John Glenn' vs 'Buzz Aldrin'",
        ),
        ("Marie Curie won the Nobel Prize in Chemistry in 1921.", CURIE, "'1921' vs '1911'"),
        ("The Eiffel Tower is 250 metres tall.", HEIGHT, "'250 metres' vs '330 metres'"),
        (
            "Buzz Aldrin and Neil Armstrong landed the Eagle.",
            "Neil Armstrong and Buzz Aldrin landed the Eagle.",
            "trade places",
        ),
        (
            "The tower was not designed by Gustave Eiffel's company.",
            "The tower was designed by Gustave Eiffel's company.",
            "negates",
        ),
        (  # NER finds "the Spanish Empire" only in the evidence; the near-copy shows the swap
            "The war resulted in the Spanish Empire's independence from Mexico.",
            "The war resulted in Mexico's independence from the Spanish Empire.",
            "trade places",
        ),
        (  # NER reads this evidence's range as two years: they are joined into one
            "The Eiffel Tower was built from 1887 to 1925.",
            "It was designed and built by the company of Gustave Eiffel from 1887 to 1889 for "
            "the 1889 World's Fair.",
            "'1887 to 1925' vs '1887 to 1889'",
        ),
        (  # a swap inside a list, an article on one name only
            "Eastern Arabia includes parts of the United Arab Emirates, Iraq, Kuwait and Bahrain.",
            "It includes parts of Bahrain, Iraq, Kuwait and the United Arab Emirates.",
            "trade places",
        ),
        (  # a one-letter symbol NER does not see
            "N is a chemical element; it has symbol Nitrogen and atomic number 7.",
            "Nitrogen is a chemical element; it has symbol N and atomic number 7.",
            "trade places",
        ),
        (  # ordinals by rank: a word against a word, and "the 12th" (NER: a date) against "16th"
            "Jupiter is the sixth planet from the Sun.",
            "Jupiter is the fifth planet from the Sun, and the largest in the Solar System.",
            "'sixth' vs 'fifth'",
        ),
        (
            "Abraham Lincoln was the 12th president of the United States.",
            "Abraham Lincoln was the 16th president of the United States, serving from 1861.",
            "'the 12th' vs '16th'",
        ),
        (  # a negation added inside a longer sentence, the rest word for word
            "The term feeling is not closely related to, but not the same as, emotion.",
            "The term feeling is closely related to, but not the same as, emotion.",
            "the claim negates",
        ),
    ],
)
def test_contradictions_name_both_spans(checker, claim, evidence, reason):
    verdict = checker.check(claim, evidence)
    assert verdict.found == "differs", verdict
    assert reason in verdict.reason
    if verdict.claim_span is not None and "trade" not in reason:
        start, end = verdict.claim_span
        assert claim[start:end] in verdict.reason


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("The company of engineer Gustave Eiffel designed and built it from 1887 to 1889.", EIFFEL),
        ("Gustave Eiffel's company built the tower in 1888.", EIFFEL),
        ("Lunar Module Pilot Buzz Aldrin landed the Eagle on July 20, 1969.", APOLLO),
        ("Marie Curie won the Nobel Prize in Chemistry in 1911.", CURIE),
        ("The Eiffel Tower is about 300 metres tall.", HEIGHT),  # hedged: within 10%
        ("The tower is 0.33 km tall.", HEIGHT),  # the same length in other units
        # a paraphrase that only reorders two names is not a role swap
        ("France's capital is Paris.", "Paris is the capital of France."),
        ("Mars is the fourth planet from the Sun.", "Mars is the 4th planet from the Sun."),
    ],
)
def test_what_the_evidence_states_is_consistent(checker, claim, evidence):
    assert checker.check(claim, evidence).found == "matches"


def test_it_speaks_only_where_the_evidence_does(checker):
    unrelated = checker.check("Marie Curie was born in Warsaw in 1867.", HEIGHT)
    assert unrelated.found == "unsaid"
    # a date the evidence never states, beside one it confirms, is not called wrong
    extra = checker.check("She won the Nobel Prize in Physics in 1903 in Stockholm.", CURIE)
    assert extra.found == "matches"
    assert checker.check("", CURIE).found == "unsaid"
    assert checker.check("Curie won in 1903.", []).found == "unsaid"


def test_slot_values():
    assert date_range("on 20 July 1969") == (date(1969, 7, 20), date(1969, 7, 20))
    assert date_range("March 1889") == (date(1889, 3, 1), date(1889, 3, 31))
    assert quantity("7,300", " tonnes") == (7_300_000.0, "kilogram")
    assert quantity("39.7", " million speakers") == (39_700_000.0, None)
    assert approximate("It is roughly ") and not approximate("It is ")


def test_a_batch_gives_the_verdicts_of_one_check_at_a_time():
    pairs = [
        ("Marie Curie won the Nobel Prize in Chemistry in 1921.", CURIE),
        ("The Eiffel Tower is 250 metres tall.", HEIGHT),
        ("Marie Curie won the Nobel Prize in Chemistry in 1921.", [CURIE, HEIGHT]),
        ("Marie Curie was born in Warsaw in 1867.", HEIGHT),
        (
            "She won the Nobel Prize in Physics in 1903 and the Nobel Prize in Chemistry in 1911.",
            CURIE,
        ),
        ("", CURIE),
    ]
    one_by_one = [SlotChecker().check(c, e) for c, e in pairs]
    batched = SlotChecker(cache_size=2).check_batch(pairs)  # a cache smaller than the batch
    assert batched == one_by_one
    assert [v.found for v in batched] == [
        "differs",
        "differs",
        "differs",
        "unsaid",
        "matches",
        "unsaid",
    ]
    assert batched[4].verbatim and not batched[0].verbatim


def test_the_difference_named_is_the_predicate_not_the_subjects_other_name(checker):
    # one person's two names are no reason; the birthplace is
    v = checker.check(
        "Marie Curie was born in Paris.",
        "Maria Sklodowska was born in Warsaw, in the Kingdom of Poland, in 1867.",
    )
    assert v.found == "differs" and v.reason == "'Paris' vs 'Warsaw'"
