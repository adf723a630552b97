"""Evidence that states a slot less precisely or by another name is no contradiction: places
inside places, aliases and demonyms, a title or body for a person's name, a year for a full
date or a season. Ten of each, and the different values that still are contradictions."""

from __future__ import annotations

import pytest

from editor.claims.slot_check import SlotChecker

GRANULARITY = [  # the claim names a place inside the evidence's
    ("He was born in a town in Bavaria.", "He was born in a town in Germany."),
    ("The company is based in Munich.", "The company is based in Germany."),
    ("The festival takes place in Edinburgh.", "The festival takes place in Scotland."),
    ("She grew up in Texas.", "She grew up in the United States."),
    ("The tower stands in Paris.", "The tower stands in France."),
    ("The band formed in Liverpool in 1960.", "The band formed in England in 1960."),
    ("The mausoleum is in Agra.", "The mausoleum is in India."),
    ("The team plays in Toronto.", "The team plays in Canada."),
    ("The ruins lie near Cusco.", "The ruins lie near Peru."),
    ("The film was shot in Kyoto.", "The film was shot in Japan."),
]
ALIASES = [  # one place, two names (or a demonym)
    ("It was made in the United Kingdom.", "It was made in Britain."),
    ("He moved to the US in 1990.", "He moved to the United States in 1990."),
    ("The painter was Dutch.", "The painter was from the Netherlands."),
    ("The city was formerly called Bombay.", "The city was formerly called Mumbai."),
    ("The treaty was signed in Peking.", "The treaty was signed in Beijing."),
    ("He was born in Holland.", "He was born in the Netherlands."),
    ("The country was then called Burma.", "The country was then called Myanmar."),
    ("She emigrated to America in 1905.", "She emigrated to the United States in 1905."),
    ("The factory opened in Saigon.", "The factory opened in Ho Chi Minh City."),
    ("The summit was held in Kiev.", "The summit was held in Kyiv."),
]
TITLES = [  # a person's name against a title or body
    ("The meeting was chaired by John Smith.", "The meeting was chaired by the Program Committee."),
    ("The report was written by Maria Lopez.", "The report was written by the committee."),
    ("The award was presented by Tom Hanks.", "The award was presented by the academy."),
    ("The law was signed by Angela Merkel.", "The law was signed by the chancellor."),
    ("The bridge was designed by Ove Arup.", "The bridge was designed by the firm."),
    ("The decision was made by Jane Doe.", "The decision was made by the board."),
    ("The song was performed by Adele.", "The song was performed by the orchestra."),
    ("The expedition was led by Ernest Shackleton.", "The expedition was led by the navy."),
    ("The statement was issued by Kofi Annan.", "The statement was issued by the secretariat."),
    ("The team was coached by Pep Guardiola.", "The team was coached by the manager."),
]
DATES = [  # a year (or season) against a fuller date, and back
    ("She was born on 4 July 1950.", "She was born in 1950."),
    ("She was born in 1950.", "She was born on 4 July 1950."),
    ("The club won the league in the 1911–12 season.", "The club won the league in 1911."),
    ("The bridge opened in March 1889.", "The bridge opened in 1889."),
    ("The war ended in 1945.", "The war ended on 2 September 1945."),
    ("The treaty was signed in the spring of 1648.", "The treaty was signed in 1648."),
    ("The album came out in late 1969.", "The album came out in 1969."),
    ("The city has about 300 inhabitants.", "The city has 318.9 inhabitants."),
    ("The station opened in the 1920s.", "The station opened in 1925."),
    ("The company was founded in 1976.", "The company was founded on 1 April 1976."),
]
STILL_CONTRADICTED = [  # different values at the same level
    ("He moved to France in 1990.", "He moved to Germany in 1990."),
    ("Kilimanjaro is a volcano in Kenya.", "Kilimanjaro is a volcano in Tanzania."),
    ("Pablo Picasso was an Italian painter.", "Pablo Picasso was a Spanish painter."),
    ("The tower stands in Rome.", "The tower stands in Paris."),
    ("She was born in 1952.", "She was born on 4 July 1950."),
]


@pytest.fixture(scope="module")
def checker():
    return SlotChecker()


@pytest.mark.parametrize(("claim", "evidence"), GRANULARITY)
def test_a_coarser_place_is_less_specific_evidence_not_a_contradiction(checker, claim, evidence):
    v = checker.check(claim, evidence)
    assert v.found == "unsaid" and v.less_specific, v.reason
    assert "less specific" in v.reason


@pytest.mark.parametrize(("claim", "evidence"), ALIASES)
def test_two_names_of_one_place_agree(checker, claim, evidence):
    v = checker.check(claim, evidence)
    assert v.found == "matches", v.reason


@pytest.mark.parametrize(("claim", "evidence"), TITLES)
def test_a_title_or_body_for_a_name_is_not_a_contradiction(checker, claim, evidence):
    v = checker.check(claim, evidence)
    assert v.found != "differs", v.reason


@pytest.mark.parametrize(("claim", "evidence"), DATES)
def test_dates_of_different_precision_agree(checker, claim, evidence):
    v = checker.check(claim, evidence)
    assert v.found != "differs", v.reason


@pytest.mark.parametrize(("claim", "evidence"), STILL_CONTRADICTED)
def test_different_values_are_still_contradictions(checker, claim, evidence):
    assert checker.check(claim, evidence).found == "differs"
