"""Is a text English? The script its letters are written in, then the function words it uses:
a text is refused only on evidence of another language (its letters mostly in another script,
or more of another language's function words than of English's), never for lacking English
words, so short English answers made of names ("Nguyễn Thị Ánh Viên.", "Shah Rukh Khan
starred."), numbers, quotes or code pass.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

ENGLISH = frozenset(
    """the and of to is was that with for it on as are by this which from were has have be at
    or an not his her they he she their been would will its who also than i you we my your me
    can how what do does did here there if so just any all some more most in a""".split()
)
# Function words of other Latin-script languages: articles, pronouns, prepositions,
# conjunctions, auxiliaries. Name particles (de, da, van, von, del, la, le, di, bin, al, ...)
# and anything that is also an English word (die, also, man, war, see, fast, hat, in) are left
# out: a name or an English sentence must never count against the text.
_OTHERS = {
    "German": "und ist nicht ein eine einer eines einem einen das dem des wurde wird sind mit auf"
    " sich auch nach bei aus wie zum zur ich wir sie ihr sein seine dass oder aber noch nur"
    " über ueber für fuer vom im zwischen durch gegen sehr schon bis zu um seit unter vor steht"
    " liegt hatte haben gibt keine kein wo wer",
    "French": "et les des est une dans pour qui sur avec pas sont ont été ete cette ces aux"
    " par mais ou où nous vous ils elles sa ses leur très tres était etait sont entre après",
    "Spanish": "y los las el es fue que en por con una uno para como su sus más mas pero este"
    " esta está esto son era entre también tambien desde hasta sobre muy fueron ha han tiene"
    " tienen hay nació",
    "Italian": "il lo gli della delle degli dei nel nella che è e non per con una uno sono era"
    " anche più piu ma questo questa come dalla sul sulla stato stata tra fra",
    "Portuguese": "os as é e não nao um uma com para por que dos das no na nos nas mais foi"
    " são sao ao também tambem pelo pela seu sua muito entre",
    "Dutch": "het een en is niet met op voor zijn werd wordt ook naar bij uit als maar dat"
    " deze dit wij zij hij ze er nog tot door heeft",
    "Swedish/Danish/Norwegian": "och är var med för att som inte det den ett en av på till"
    " har jag vi de sig om men ikke og er til af på som har det",
    "Polish": "i w z na się nie jest był była to że do jak ale od po przez oraz tak dla",
    "Turkish": "ve bir bu da de için ile olarak olan çok daha gibi ama en",
    "Indonesian/Malay": "dan yang di ke dari ini itu dengan untuk adalah tidak pada juga akan"
    " oleh sebagai",
    "Vietnamese": "và của là có không được trong cho với các những một người này đã",
}
_EXCLUDED = ENGLISH | set(
    # name particles and place-name words: Charles de Gaulle, Los Angeles, Lake Como, São Paulo
    """de da van von der den del della delle degli dei di la le les du dos das do al el bin ibn
    los las como san santa santo são che fra han dan yang cho des"""
    # English words, or words inside English text: et al., non-profit, .com, Jay-Z
    """die also man war see fast hat in an a i o y e so on to me he we be is it at or as no us
    am ten dat ter sa ma per era son come non um com met op er tot door var med till men til
    jest ale z w par""".split()
)
OTHER_WORDS = {lang: frozenset(words.split()) - _EXCLUDED for lang, words in _OTHERS.items()}
# English function words no other listed language writes the same way: a text with one of them
# is not refused on a single foreign word.
STRONG_ENGLISH = ENGLISH - set("in a i is an so on was will me be am die also do".split())
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


@dataclass(frozen=True)
class LanguageCheck:
    """The verdict on a text: English or not, and why not."""

    english: bool
    reason: str | None = None
    language: str | None = None


def _script(letter: str) -> str:
    """The script of a letter as Unicode names it ("LATIN", "CYRILLIC", "CJK", ...)."""
    name = unicodedata.name(letter, "")
    return name.split()[0] if name else "UNKNOWN"


def check_language(text: str) -> LanguageCheck:
    """Whether ``text`` is English, refusing only on evidence of another language.

    >>> check_language("Nguyễn Thị Ánh Viên won the 2017 race.").english
    True
    >>> check_language('"Variety" magazine.').english
    True
    >>> check_language("Der Eiffelturm wurde von 1887 bis 1889 von Gustave Eiffel gebaut.")
    LanguageCheck(english=False, reason='the text looks like German, not English', language='German')
    >>> check_language("東京タワーは1958年に完成した。").reason
    'the text is written mostly in CJK letters, not Latin ones, so not in English'
    """
    # Letters in brackets are often a name's native spelling ("Tokyo (東京)"): judged apart.
    outside = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", text)
    letters = [c for c in outside if c.isalpha()] or [c for c in text if c.isalpha()]
    if letters:
        scripts: dict[str, int] = {}
        for c in letters:
            s = _script(c)
            scripts[s] = scripts.get(s, 0) + 1
        top = max(scripts, key=lambda s: scripts[s])
        latin_words = [w.lower() for w in _WORD.findall(text) if w.isascii()]
        mixed = sum(w in STRONG_ENGLISH for w in latin_words) >= 3  # English quoting a script
        if scripts.get("LATIN", 0) / len(letters) < 0.7 and not mixed:
            return LanguageCheck(
                False,
                f"the text is written mostly in {top} letters, not Latin ones, so not in English",
                top,
            )
    # acronyms (MIT, ALS, NAS) are left out: they are names in any language
    words = [w.lower() for w in _WORD.findall(text) if not (len(w) > 1 and w.isupper())]
    english = sum(w in ENGLISH for w in words)
    strong = sum(w in STRONG_ENGLISH for w in words)
    counts = {lang: sum(w in vocab for w in words) for lang, vocab in OTHER_WORDS.items()}
    lang = max(counts, key=lambda k: counts[k])
    other = counts[lang]
    if (other >= 2 and other > english) or (other >= 1 and strong == 0 and len(words) >= 4):
        return LanguageCheck(False, f"the text looks like {lang}, not English", lang)
    if len(words) >= 12 and english / len(words) < 0.05 and other >= 1:
        return LanguageCheck(False, f"the text looks like {lang}, not English", lang)
    return LanguageCheck(True)
