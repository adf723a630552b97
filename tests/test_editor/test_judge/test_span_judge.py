"""The shipped span judge on CPU: its pair head, the words it flags, the evidence words its
pointer names, the extractive fix with the judge's acceptance, the span judge in the revision
loop, and bad input (never an exception)."""

from __future__ import annotations

import pytest

from editor.attribution.span_judge import SpanJudge
from editor.config import JudgeConfig, RevisionConfig
from editor.judge.span import SpanJudgeOfFixes
from editor.judge.span_fix import SpanFixer, windows
from editor.judge.span_guard import edit_guard
from editor.report.findings import findings
from editor.revision.editors.identity import IdentityEditor
from editor.revision.reviser import Reviser
from editor.types import Evidence

CLEO = (
    "Cleopatra VII Philopator was Queen of the Ptolemaic Kingdom of Egypt from 51 to 30 BC, "
    "and its last active ruler."
)
WARS = (
    "Star Wars is an American epic space opera media franchise created by George Lucas, "
    "which began with the eponymous 1977 film."
)


@pytest.fixture(scope="module")
def judge():
    j = SpanJudge()
    j.load()
    return j


@pytest.fixture(scope="module")
def fixer(judge):
    return SpanFixer(judge, guard=edit_guard)


def test_the_judge_flags_the_era_and_points_at_the_evidence_s(judge):
    claim = "Cleopatra was Queen of the Ptolemaic Kingdom of Egypt from 51 to 30 AD."
    (j,) = judge.judge_batch([(claim, CLEO)])
    assert j.scores.contradicted > 0.5 > j.scores.supported
    (span,) = j.contradicted_spans()
    assert claim[span.start : span.end] == "AD"
    (fix,) = judge.point_batch([(claim, (span.start, span.end), CLEO)])
    assert CLEO[fix[0] : fix[1]] == "BC"


def test_a_true_paraphrase_is_supported_and_flags_nothing(judge):
    (j,) = judge.judge_batch([("George Lucas created the Star Wars franchise.", WARS)])
    assert j.scores.supported > 0.5 and not j.contradicted_spans()


def test_the_fixer_copies_the_evidence_words_and_the_judge_accepts_them(fixer):
    f = fixer.fix("Star Wars is an American media franchise created by Steven Spielberg.", [WARS])
    assert f.verdict == "contradicted" and f.edited
    assert f.revised == "Star Wars is an American media franchise created by George Lucas."
    assert "verified" in f.reason


def test_a_supported_sentence_comes_back_byte_for_byte(fixer):
    s = "Star Wars  began with the eponymous 1977 film."
    f = fixer.fix(s, [WARS])
    assert f.revised == s and not f.edited


def test_the_span_judge_fixes_a_passage_in_the_revision_loop(fixer):
    ev = Evidence("w1", WARS, "Star Wars", "test", None, "Who created the media franchise?", 1.0)
    text = (
        "Star Wars is a space opera. It is an American media franchise created by Steven Spielberg."
    )
    reviser = Reviser(IdentityEditor(), SpanJudgeOfFixes(fixer), RevisionConfig())
    revised, steps = reviser.revise(text, [ev])
    assert (
        revised
        == "Star Wars is a space opera. It is an American media franchise created by George Lucas."
    )
    assert any(s.accepted for s in steps)
    (found,) = findings(text, steps)  # what was flagged, where, and that the edit fixed it
    assert text[found.start : found.end] == found.text == "Steven Spielberg"
    assert found.kind == "contradicted" and found.fix == "George Lucas" and found.fixed
    assert found.evidence_id == "w1" and found.applicability == "safe"
    assert steps[-1].verdict == "contradicted" and steps[-1].editor == "span"


def test_a_contradiction_left_unfixed_is_reported_with_the_evidence_that_flags_it(fixer):
    ev = Evidence("c1", CLEO, "Cleopatra", "test", None, "When did Cleopatra reign?", 1.0)
    text = "Cleopatra was Queen of the Ptolemaic Kingdom of Egypt from 51 to 30 AD."
    reviser = Reviser(
        IdentityEditor(), SpanJudgeOfFixes(fixer), RevisionConfig(), JudgeConfig(max_edit_chars=1)
    )
    revised, steps = reviser.revise(text, [ev])  # an edit limit of one character: no fix fits
    assert revised == text
    (found,) = [f for f in findings(text, steps) if f.kind == "contradicted"]
    assert (found.text, found.fix, found.fixed) == ("AD", "BC", False)
    assert text[found.start : found.end] == "AD" and "contradicts 'AD'" in found.reason


def test_windows_cover_long_evidence_and_a_pronoun_never_replaces_a_name():
    doc = " ".join(f"Sentence number {i} says something." for i in range(100))
    ws = windows(doc)
    assert all(len(w) <= 520 for w in ws) and ws[0].startswith("Sentence number 0")
    assert "pronoun" in edit_guard("The Mississippi is long.", "It is long.", "It is long.")


@pytest.mark.parametrize(
    "before, after, evidence, why",
    [  # edits the span judge made on real claims (purr data real-claims dev)
        (
            "The plan includes a share repurchase program and reducing net debt below $25 billion.",
            "The plan includes a share repurchase program and fall net debt below $25 billion.",
            "It expects net debt to fall below $25 billion.",
            "another form",
        ),
        (
            "A keen tennis player, he lives in Leicestershire with his wife.",
            "A keen tennis player, I lives in Leicestershire with his wife.",
            "A keen tennis player, I live in Leicestershire with my wife.",
            "own voice",
        ),
        ("The Sahara is the largest cold desert.", "The Sahara is the largest hot desert.",
         "The Sahara is the largest hot desert.", None),
        ("He was a Catholic priest.", "He was a Baptist priest.", "He was a Baptist priest.", None),
    ],
)  # fmt: skip
def test_the_guards_stop_an_edit_that_breaks_the_grammar_or_copies_the_author_s_voice(
    before, after, evidence, why
):
    problem = edit_guard(before, after, evidence)
    assert (problem is None) if why is None else (why in problem)


@pytest.mark.parametrize(
    "claim, evidence, unchanged",
    [
        ("", WARS, True),
        ("Star Wars was created by George Lucas.", "", True),
        ("Star Wars was created by Steven Spielberg.", "Star Wars ist eine Filmreihe.", True),
        ("word " * 2000 + "end.", WARS, True),
        ("Star Wars was created by Steven Spielberg.", WARS * 600, False),
        ("Who created Star Wars?", WARS, True),
    ],
)
def test_bad_input_gets_a_verdict_never_an_error(fixer, claim, evidence, unchanged):
    f = fixer.fix(claim, [evidence])
    assert f.verdict in {"supported", "contradicted", "not_stated"}
    if unchanged:  # nothing the evidence proves wrong: the text comes back as it was
        assert f.revised == claim
    else:  # the long evidence still states the fix within a window
        assert "George Lucas" in f.revised


@pytest.mark.parametrize(
    "title, claim",
    [
        ("Cleopatra", "Cleopatra was Queen of the Ptolemaic Kingdom of Egypt from 51 to 30 AD."),
        ("Star Wars", "Star Wars is an American media franchise created by Steven Spielberg."),
        ("Star Wars", "Star Wars is a media franchise created by George Lucas."),
    ],
)
def test_one_evidence_sentence_and_the_whole_summary_give_the_same_verdict(fixer, title, claim):
    from retrieval.corpus import read_wiki_summaries
    from retrieval.sentences import split

    summary = next(d.text for d in read_wiki_summaries() if d.title == title)
    words = set(claim.lower().split())
    sentence = max(split(summary), key=lambda s: len(words & set(s.lower().split())))
    alone, whole = fixer.fix(claim, [sentence]), fixer.fix(claim, [summary])
    assert alone.verdict == whole.verdict


def test_a_question_is_read_only_by_a_judge_trained_with_questions(tmp_path, fixer):
    import json
    import shutil

    from editor.attribution.span_judge import default_path

    assert not fixer.judge.reads_questions  # the shipped judge reads the claim alone
    claim = CLEO.replace("BC", "AD")
    alone = fixer.fix(claim, [CLEO])
    asked = fixer.fix(claim, [CLEO], "when was cleopatra queen of egypt")
    assert (asked.verdict, asked.revised, asked.supported) == (
        alone.verdict,
        alone.revised,
        alone.supported,
    )
    copy = tmp_path / "judge"
    shutil.copytree(default_path(), copy)
    config = json.loads((copy / "config.json").read_text("utf-8"))
    (copy / "config.json").write_text(json.dumps({**config, "purr_reads_questions": True}))
    assert SpanJudge(str(copy)).reads_questions
    (copy / "config.json").write_text("{broken")
    assert not SpanJudge(str(copy)).reads_questions


SAHARA = (
    "The Sahara is a desert spanning North Africa. With an area of 9,200,000 square "
    "kilometres, it is the largest hot desert in the world and the third-largest overall."
)


def test_a_cited_sentence_gets_the_words_its_source_does_not_state(fixer):
    from dataclasses import replace

    from editor.citations.check import locate
    from editor.citations.results import CheckResult, SentenceCheck, SourceLabel
    from editor.citations.sources import Source

    text = "The Sahara is the largest cold desert in the world [1]."
    v = SourceLabel("1", "not_enough", 0.2, "", "the source does not say it")
    s = SentenceCheck(
        text, text.replace(" [1]", ""), ("1",), "citation_not_supporting", False, (v,), (False,)
    )
    by_id = {"1": Source("1", SAHARA)}
    located = locate(s, by_id, fixer)
    assert located.verdicts[0].values == ("cold", "")  # not_enough: located, no fix claimed
    (f,) = CheckResult(text, (located,), 0.0, 0.0, ()).findings()
    assert (text[f["start"] : f["end"]], f["kind"], f["fix"]) == ("cold", "not_supported", None)
    supported = replace(s, outcome="supported")
    assert locate(supported, by_id, fixer) is supported  # only what the citations fail
