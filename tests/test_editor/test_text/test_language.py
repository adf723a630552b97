"""The language check: short English answers with foreign names, quotes, numbers or code pass;
text in another language is refused with the language named."""

from __future__ import annotations

import pytest

from editor.text.language import check_language

ENGLISH = [
    "Nguyen Thi Anh Vien won the 2017 race.",
    "Nguyễn Thị Ánh Viên won the 2017 race.",
    '"Variety" magazine.',
    "Shah Rukh Khan starred.",
    "Antonín Dvořák.",
    "São Paulo.",
    "Los Angeles Lakers won 17 titles.",
    "Charles de Gaulle founded the Fifth Republic.",
    "Real Betis won La Liga in 1935.",
    "MIT researchers built it.",
    "Tokyo (東京) is the capital of Japan.",
    "The word comes from Greek φέρω, to carry, and was used by the poets.",
    "x = np.zeros((3, 4)); print(x.shape)",
    "Jay-Z married Beyoncé in 2008.",
    "Che Guevara died in Bolivia in 1967.",
    "Dan Brown wrote The Da Vinci Code.",
    "1,250,000",
]
OTHER = [
    ("Der Eiffelturm wurde von 1887 bis 1889 von Gustave Eiffel gebaut.", "German"),
    ("Paris est la capitale de la France.", "French"),
    ("Madrid es la capital de España.", "Spanish"),
    ("La Torre di Pisa è famosa per la sua pendenza.", "Italian"),
    ("Lisboa é a capital de Portugal.", "Portuguese"),
    ("Москва является столицей России.", "CYRILLIC"),
    ("東京タワーは1958年に完成した。", "CJK"),
]


@pytest.mark.parametrize("text", ENGLISH)
def test_short_english_with_foreign_names_quotes_numbers_or_code_passes(text):
    verdict = check_language(text)
    assert verdict.english, verdict.reason


@pytest.mark.parametrize(("text", "language"), OTHER)
def test_other_languages_are_refused_with_the_language_named(text, language):
    verdict = check_language(text)
    assert not verdict.english
    assert language in (verdict.reason or "") and "not" in (verdict.reason or "")
