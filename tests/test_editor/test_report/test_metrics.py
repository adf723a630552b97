"""Edit metrics: preservation, F1_AP, PURR's edit categories, closeness to a reference."""

import math

import pytest

from editor.report.metrics import (
    EDIT_CATEGORIES,
    edit_category,
    f1_ap,
    levenshtein,
    levenshtein_closer,
    levenshtein_closer_chars,
    preservation,
)


def test_levenshtein_is_character_level():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3
    assert levenshtein("Zürich", "Zurich") == 1  # one character, not one UTF-8 byte pair


@pytest.mark.parametrize(
    ("original", "revised", "expected"),
    [
        ("Paris is in France.", "Paris is in France.", 1.0),
        ("born in 1990", "born in 1991", 1 - 1 / 12),
        ("The tower is 300 m tall.", "The tower is 330 m tall.", 1 - 1 / 24),
        ("abcd", "ab", 0.5),  # two deletions over four characters
        ("abcd", "abcdefgh", 0.0),  # four insertions: 1 - 4/4
        ("abc", "a completely different and much longer text", 0.0),  # clipped, not negative
        ("", "", 1.0),
        ("", "anything", 0.0),
        ("same", "", 0.0),
    ],
)
def test_preservation_exact(original, revised, expected):
    assert preservation(original, revised) == pytest.approx(expected, abs=1e-12)


def test_preservation_is_one_only_for_identical_texts():
    x = "a" * 10_000
    assert preservation(x, x) == 1.0
    assert preservation(x, x[:-1]) < 1.0


@pytest.mark.parametrize(
    ("attribution", "pres", "expected"),
    [(1.0, 1.0, 1.0), (0.5, 1.0, 2 / 3), (0.8, 0.9, 2 * 0.72 / 1.7), (0.0, 0.9, 0.0), (0, 0, 0.0)],
)
def test_f1_ap_is_the_harmonic_mean(attribution, pres, expected):
    assert f1_ap(attribution, pres) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("a", "p"), [(1.2, 0.5), (0.5, -0.1), (math.nan, 0.5)])
def test_f1_ap_rejects_values_outside_unit_interval(a, p):
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        f1_ap(a, p)


@pytest.mark.parametrize(
    ("before", "after", "pres", "expected"),
    [
        (0.2, 0.9, 0.95, "good"),
        (0.2, 0.9, 0.7, "neutral"),  # good needs Pres > 0.7, strictly
        (0.2, 0.5, 0.95, "neutral"),  # gain of exactly 0.3 is not > 0.3
        (0.6, 0.3, 0.9, "bad"),
        (0.6, 0.5, 0.9, "neutral"),  # a drop of exactly 0.1 is not < -0.1
        (0.95, 0.5, 0.9, "unnecessary"),  # bad edit of an already attributed text
        (0.9, 0.5, 0.9, "bad"),  # Attr_x = 0.9 is not > 0.9
        (0.95, 0.98, 0.9, "neutral"),  # an attributed text changed without loss
        (0.2, 0.9, 0.4, "huge"),  # huge wins over good-looking attribution
        (0.95, 0.1, 0.3, "huge"),  # and over unnecessary / bad
        (0.2, 0.9, 0.5, "neutral"),  # Pres = 0.5 is not huge, but not > 0.7 either
        (0.5, 0.5, 1.0, "unchanged"),
    ],
)
def test_edit_category(before, after, pres, expected):
    assert edit_category(before, after, pres) == expected
    assert expected in EDIT_CATEGORIES


def test_edit_category_changed_flag_overrides_preservation():
    # A change too small to move a float off 1.0 is still a change when the caller says so.
    assert edit_category(0.2, 0.9, 1.0, changed=True) == "good"
    assert edit_category(0.2, 0.9, 0.95, changed=False) == "unchanged"


def test_edit_category_from_real_texts():
    x, y = "Marie Curie was born in 1868.", "Marie Curie was born in 1867."
    assert edit_category(0.1, 0.95, preservation(x, y)) == "good"
    assert edit_category(0.5, 0.5, preservation(x, x)) == "unchanged"


def test_levenshtein_closer_chars_and_relative():
    x, gold = "born in 1990 in Rome", "born in 1991 in Oslo"
    assert levenshtein(x, gold) == 5
    y = "born in 1991 in Rome"  # fixed the year, missed the city
    assert levenshtein_closer_chars(x, y, gold) == 1
    assert levenshtein_closer(x, y, gold) == pytest.approx(0.2)
    assert levenshtein_closer(x, gold, gold) == 1.0  # reached the reference
    assert levenshtein_closer_chars(x, gold, gold) == 5
    # moving away from a correct original: 2 new edits, all added by the edit
    assert levenshtein_closer_chars(gold, "born in 1881 in Oslo", gold) == -2
    assert levenshtein_closer(gold, "born in 1881 in Oslo", gold) == -1.0
    # further from a reference it was already 2 characters from: -(4-2)/4
    assert levenshtein_closer("abcdXY", "abQRXY", "abcdef") == pytest.approx(-0.5)
    assert levenshtein_closer("abc", "abc", "abc") == 0.0
    assert levenshtein_closer("", "", "") == 0.0
