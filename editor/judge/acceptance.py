"""Do no harm: an edit is accepted only when the verifier and the sentence's form allow it.

The agreement gate already asks that the original be judged *contradicted* (not merely
unsupported) before the editor is called. ``EditAcceptance`` then asks of the edit:

- the sentence keeps its form (``form_problem``): an answer does not become a question, no name
  of the revision occurs twice when the original had it once ("Crumb was produced before
  Crumb."), no run of words the edit inserted comes from the user's question (the dialogue
  context) without being in the evidence, and the edit changes words (not only punctuation)
  and keeps the sentence's final punctuation, leaves no bracket or quote open, replaces no name
  the question (a question as context) itself names, and it adds no run of words that replaces
  nothing ("pleaded not guilty" -> "pleaded guilty on Thursday"); an added or dropped negation
  needs an evidence sentence that states the revised polarity (``negation_problem``);
- the verifier rates the revised sentence, decontextualised in the revised passage, supported
  by the same evidence, at least ``min_supported`` and more than the original sentence, and
  does not find it contradicted (``refutes``: a slot the evidence states otherwise, say);
- an evidence sentence states the revised fact, the new words with what the revision says of
  them (``editor.judge.proofs``): a judge that is no gate rule, so the check that flagged a
  span is never all that approves its replacement; the step names the judges other than the
  flagging rule that proved it (``verified_by``).

Otherwise the text stays as it was and the step says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from editor.attribution.base import AttributionModel
from editor.judge.proofs import independent_proofs, proofs
from editor.judge.values import value_problem
from editor.policy import CONTRADICTED_MIN, refutes
from editor.text.document import TextParser
from editor.text.words import TOKEN as _WORD
from editor.text.words import is_question, named_in_question, word_changes

_NEGATION = re.compile(
    r"\b(?:not|never|no|none|nobody|nothing|neither|nor|cannot)\b|n['’]t\b", re.I
)
_NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of\s+|the\s+|de\s+)?[A-Z][\w'’-]*)*")


def _inserted_runs(
    before: str, after: str, tags: tuple[str, ...] = ("replace", "insert"), removed: bool = False
):
    """Runs of words ``after`` has where ``before`` had others (or, ``insert``, none); with
    ``removed``, the runs of ``before`` they took the place of."""
    return [old if removed else new for old, new in word_changes(before, after, tags)]


_ORDINAL = re.compile(
    r"^(?:\d+(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    r"eleventh|twelfth|last)$",
    re.I,
)


_HEMISPHERE = re.compile(r"\bhemisphere\b", re.I)
_YEAR = re.compile(r"\b\d{3,4}s?\b")
_MONTH = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|\bcentury\b", re.I
)


def type_problem(before: str, after: str) -> str | None:
    """Why an edit's replacement is not the same kind of thing as what it replaces: an ordinal
    for a non-ordinal (or back), a person's name for a title ("the King of Pop"), words with no
    year or month for a date ("almost two years" for "January 1, 2018"), or a hemisphere for a
    named place (no country or city is a hemisphere).

    >>> type_problem("He was the 12th president.", "He was 1861 president.")
    "the edit puts '1861' where the text had 'the 12th' (an ordinal)"
    >>> type_problem("He is known as the King of Pop.", "He is known as Aaron Presley.")
    "the edit puts a name, 'Aaron Presley', where the text had a title, 'the King of Pop'"
    >>> type_problem("It is hosted by the United States.", "It is hosted by the Northern Hemisphere.")
    "the edit puts a hemisphere, 'Northern Hemisphere', where the text had a place, 'United States'"
    >>> type_problem("It was placed on January 1, 2018.", "It was placed on almost two years.")
    "the edit puts 'almost two years', no date, where the text had a date, 'January 1 2018'"
    >>> type_problem("It opened in 1990.", "It opened in the early 1970s.") is None
    True
    >>> type_problem("There are 104 species.", "There are 83 species.") is None  # a number fix
    True
    >>> type_problem("He was the 12th president.", "He was the 16th president.") is None
    True
    >>> type_problem("He led the Kuomintang.", "He led the Chinese Communist Party.") is None
    True
    """
    for removed, inserted in word_changes(before, after, ("replace",)):
        # a leading "the" in ``removed`` was dropped too
        old, new = " ".join(removed), " ".join(inserted)
        if any(_ORDINAL.match(w) for w in removed) != any(_ORDINAL.match(w) for w in inserted):
            return f"the edit puts {new!r} where the text had {old!r} (an ordinal)"
        if _YEAR.search(old) and not (re.search(r"\d", new) or _MONTH.search(new)):
            return f"the edit puts {new!r}, no date, where the text had a date, {old!r}"
        if _HEMISPHERE.search(new) and not _HEMISPHERE.search(old) and old[:1].isupper():
            return f"the edit puts a hemisphere, {new!r}, where the text had a place, {old!r}"
        title = removed[0].lower() == "the" and len(removed) > 1 and removed[1][:1].isupper()
        name = len(inserted) >= 2 and all(w[:1].isupper() for w in inserted)
        if title and name and inserted[0].lower() != "the":
            return f"the edit puts a name, {new!r}, where the text had a title, {old!r}"
    return None


def _core(name: str) -> str:
    """A name without its article or possessive ("The Eiffel Tower's" -> "Eiffel Tower")."""
    return re.sub(r"^(?:The|A|An)\s+|['’]s$", "", name)


def _name_count(text: str, name: str) -> int:
    """How often ``name`` stands as a whole name in ``text``: "China" once in "The Great Wall
    of China is in China." (the first is part of a longer name)."""
    return sum(_core(m.group()) == name for m in _NAME.finditer(text))


def _unbalanced(text: str) -> bool:
    """Whether a bracket or a double quote of ``text`` is left open (or closed unopened)."""
    quotes = text.count('"') % 2 or text.count("“") != text.count("”")
    quotes = quotes or text.count("``") != text.count("''")  # PTB-style quotes (CLAPnq, WiCE)
    return bool(quotes) or any(text.count(o) != text.count(c) for o, c in ("()", "[]", "{}"))


def form_problem(
    before: str, after: str, context: str | None = None, evidence: str = ""
) -> str | None:
    """Why ``after`` is not an acceptable form of ``before`` (None when it is).

    >>> form_problem("Yes, it opened in 1889.", "Did it open in 1889?")
    'the edit turns a statement into a question'
    >>> form_problem("Cancer was produced before Crumb.", "Crumb was produced before Crumb.")
    "the edit doubles the name 'Crumb'"
    >>> form_problem("The Great Wall of China is in Japan.", "The Great Wall of China is in China.") is None
    True
    >>> form_problem("It opened in 1887.", "It opened in 1889.") is None
    True
    >>> form_problem("It flows 475 km annually.", "It flows 475 km annually")
    'the edit changes only punctuation or spacing'
    >>> form_problem("He pleaded not guilty to it.", "He pleaded guilty on Thursday to it.")
    "the edit adds 'on Thursday', which replaces nothing"
    >>> form_problem("It lies in the west of Cairo.", "It lies in Cairo of the west.") is None
    True
    >>> form_problem("Boroughs:\\n2. Manhattan\\n3. Queens", "Boroughs:\\n3. Manhattan\\n3. Queens")
    "the edit changes the list's markers"
    >>> form_problem("New York City\\n2.", "New York City\\n3.")
    "the edit changes the list's markers"
    >>> form_problem("Reagan was the third president.", "Reagan was the 40th president.",
    ...              "who was the third president of the united states")
    "the edit replaces 'third', which the question itself names"
    >>> form_problem("It was chaired by Ann Lee.", "It was chaired by Committee (2019.")
    'the edit leaves a bracket or quote unclosed'
    >>> form_problem("The Lotus Elite was based in Surrey.", "The Lotus Cortina was based in Surrey.",
    ...              "in what city was the lotus elite car based")
    "the edit replaces 'Elite', which the question itself names"

    """
    if after.rstrip().endswith("?") and not before.rstrip().endswith("?"):
        return "the edit turns a statement into a question"
    if [w.lower() for w in _WORD.findall(before)] == [w.lower() for w in _WORD.findall(after)]:
        return "the edit changes only punctuation or spacing"
    if before.rstrip()[-1:] in ".!?" and after.rstrip()[-1:] not in ".!?":
        return "the edit drops the sentence's final punctuation"
    for found in {m.group() for m in _NAME.finditer(after)}:
        name = _core(found)
        if len(name) < 3 or " " not in name and name.lower() in {"it", "he", "she", "they"}:
            continue
        n_after, n_before = _name_count(after, name), _name_count(before, name)
        if n_after > 1 and n_after > n_before:
            return f"the edit doubles the name {name!r}"
    had = {w.lower() for w in _WORD.findall(before)}
    added = [  # words moved from elsewhere in the sentence (a role swap put back) are not new
        run
        for run in _inserted_runs(before, after, ("insert",))
        if len(run) >= 2 and any(w.lower() not in had for w in run)
    ]
    if added:  # a fix replaces what is wrong; words that replace nothing are news
        return f"the edit adds {' '.join(added[0])!r}, which replaces nothing"
    if _LIST_MARKER.findall(after) != _LIST_MARKER.findall(before):
        return "the edit changes the list's markers"
    if _unbalanced(after) and not _unbalanced(before):
        return "the edit leaves a bracket or quote unclosed"
    if is_question(context):
        assert context is not None
        for run in _inserted_runs(before, after, ("replace", "delete"), removed=True):
            name = " ".join(run)
            value = any(w[:1].isupper() or w[:1].isdigit() or _ORDINAL.match(w) for w in run)
            if value and named_in_question(name, context):
                return f"the edit replaces {name!r}, which the question itself names"
    if context:
        ctx, ev = context.lower(), evidence.lower()
        for run in _inserted_runs(before, after):
            phrase = " ".join(run).lower()
            if len(run) >= 3 and phrase in ctx and phrase not in ev:
                return f"the edit pastes {' '.join(run)!r} from the user's question"
    return None


def negation_problem(before: str, after: str, evidence: str) -> str | None:
    """Why an edit that adds or drops a negation may not stand: only explicit evidence of the
    revised statement licenses it, an evidence sentence that is the original with the negation
    the other way, or one that states the revision's words (nine in ten of them, covering 60%
    of its own) with the revision's polarity.

    >>> negation_problem("It was built not to need mains power.", "It was built to need mains power.",
    ...                  "The lamp was built to run on batteries.")
    "the edit drops 'not', and no evidence sentence states the statement that way"
    >>> negation_problem("No, Dravid did not kick a field goal.", "Dravid did kick a field goal.",
    ...                  "Rahul Dravid was a cricket player. Field goal kicks are part of football.")
    "the edit drops 'No', and no evidence sentence states the statement that way"
    >>> negation_problem("It is not in Paris.", "It is in Paris.", "It is in Paris.") is None
    True
    """
    from editor.claims.flips import negation_only
    from editor.text.words import content_words
    from retrieval.sentences import split

    old, new = len(_NEGATION.findall(before)), len(_NEGATION.findall(after))
    if old == new:
        return None
    words = content_words(after)
    for sentence in split(evidence):
        if negation_only(before, sentence) is not None:
            return None  # the evidence is the original with the negation the other way
        theirs = content_words(sentence)
        shared = len(words & theirs)
        states = shared >= 0.9 * len(words) and shared >= 0.6 * len(theirs)
        if words and states and len(_NEGATION.findall(sentence)) % 2 == new % 2:
            return None
    change = "drops" if new < old else "adds"
    word = (_NEGATION.findall(before if new < old else after) or ["not"])[0]
    return f"the edit {change} {word!r}, and no evidence sentence states the statement that way"


@dataclass(frozen=True)
class Judgement:
    """Acceptance's say on an edit: accepted or not, why, and the judges that proved the
    revision (``nli``, ``slot``, ``statement`` joined by ``+``; None when rejected)."""

    accepted: bool
    reason: str
    proof: str | None = None
    unsure: bool = False
    """rejected only for want of proof (support too low, none better, no sentence states
    it), not because anything refutes the edit or its form: a suggestion, not a wrong edit"""


_LIST_MARKER = re.compile(r"(?m)^[ \t]*(?:\d+[.)]|[-*•+])(?=\s|$)")


ACCEPTANCE_RULES = ("form", "negated", "type", "value", "refuted", "support", "better", "statement")
"""The acceptance's rule families, in the order it asks them: the edit's form, a negation it
adds or drops, a value of another kind, a value the evidence does not hold, the evidence
contradicting the revision, support below ``min_supported``, support no better than the
original's, and an evidence sentence stating the revised fact (``editor.judge.proofs``)."""


class EditAcceptance:
    """The verifier's and the form's say on each edit (see the module doc). ``off``: rule
    families not asked (``ACCEPTANCE_RULES``; ``judge.rules_off``, for ablations)."""

    def __init__(
        self,
        attribution: AttributionModel,
        min_supported: float = 0.5,
        decontextualize=True,
        parser: TextParser | None = None,
        off: frozenset[str] = frozenset(),
        contradicted_min: float = CONTRADICTED_MIN,
    ) -> None:
        self.attribution = attribution
        self.parser = parser or TextParser()
        self.min_supported = min_supported
        self.contradicted_min = contradicted_min
        self.decontextualize = decontextualize
        self.off = off

    def _standalone(self, passage: str, span: tuple[int, int], context: str | None) -> str:
        """The sentence at ``span`` of ``passage``, decontextualised in it."""
        sentence = passage[span[0] : span[1]].strip()
        if not self.decontextualize or not sentence:
            return sentence
        return self.parser.parse(passage, context).standalone(sentence)

    def check(self, *args: Any, **kwargs: Any) -> tuple[bool, str]:
        """Whether an edit may stand, and why: ``judge``'s verdict without its proof."""
        j = self.judge(*args, **kwargs)
        return j.accepted, j.reason

    def judge(
        self,
        before: str,
        after: str,
        span_before: tuple[int, int],
        span_after: tuple[int, int],
        evidence: str,
        context: str | None = None,
        rule: str | None = None,
    ) -> Judgement:
        """The acceptance's judgement of an edit flagged by the gate's ``rule`` (``Step.rule``;
        None: any proof counts)."""
        old, new = before[span_before[0] : span_before[1]], after[span_after[0] : span_after[1]]
        on = set(ACCEPTANCE_RULES) - self.off
        problem = (
            ("form" in on and form_problem(old, new, context, evidence))
            or ("negated" in on and negation_problem(old, new, evidence))
            or ("type" in on and type_problem(old, new))
            or ("value" in on and value_problem(old, new, evidence))
        )
        if problem:
            return Judgement(False, f"rejected: {problem}")
        h_old = self._standalone(before, span_before, context)
        h_new = self._standalone(after, span_after, context)
        problem = "form" in on and form_problem(h_old, h_new)  # "it" resolved: a doubled name
        if problem:
            return Judgement(False, f"rejected: {problem}")
        pairs = [(evidence, h_old), (evidence, h_new)]
        verify = getattr(self.attribution, "verify_batch", None)
        if verify is not None:
            (v_old, v_new) = verify(pairs)
            s_old, s_new, slot_new = v_old.scores, v_new.scores, v_new.slot
            nli_old, nli_new = v_old.nli, v_new.nli
        else:
            s_old, s_new = self.attribution.score_batch(pairs)
            nli_old, nli_new, slot_new = s_old, s_new, None
        if "refuted" in on and refutes(s_new, slot_new, self.contradicted_min):
            why = (
                slot_new.reason
                if slot_new is not None and slot_new.names_a_difference
                else (f"P(contradicted) {s_new.contradicted:.2f}")
            )
            return Judgement(False, f"rejected: the evidence contradicts the revision too ({why})")
        if "support" in on and s_new.supported < self.min_supported:
            return Judgement(
                False,
                (
                    f"rejected: the evidence does not support the revision "
                    f"(P(supported) {s_new.supported:.2f} < {self.min_supported:g})"
                ),
                unsure=True,
            )
        if "better" in on and s_new.supported <= s_old.supported:
            return Judgement(
                False,
                (
                    f"rejected: the revision is no better supported than the original "
                    f"({s_new.supported:.2f} <= {s_old.supported:.2f})"
                ),
                unsure=True,
            )
        found = proofs(nli_old, nli_new, slot_new, evidence, h_old, h_new, self.min_supported)
        if "statement" in on and "statement" not in found:
            return Judgement(
                False,
                "rejected: no evidence sentence states the revised fact (the new words with "
                "what the revision says of them)",
                unsure=True,
            )
        shown = independent_proofs(found, rule)
        return Judgement(
            True,
            f"verified: P(supported) {s_old.supported:.2f} -> {s_new.supported:.2f}; "
            f"proved by {', '.join(shown)}",
            "+".join(shown),
        )
