"""The revision stage with the real shipped attribution model: agreement verdicts, the
substitute editor, the iterative and one-pass loops, edit-size limits, the pipeline's input
limits, timeouts and degradation, and `purr edit` (single and batch)."""

from __future__ import annotations

import json

import pytest
from helpers import CONTRACT_KEYS, run_purr, save_tiny_t5
from llm_helpers import free_port, smollm

from editor.attribution.base import build as build_attribution
from editor.config import AttributionConfig, JudgeConfig, RevisionConfig, load_config
from editor.factory import Components
from editor.inputs import InputError
from editor.judge.acceptance import EditAcceptance
from editor.judge.agreement.llm import LLMAgreement
from editor.judge.agreement.nli import NLIAgreement
from editor.judge.rules import RulesJudge
from editor.pipeline import Pipeline
from editor.revision.editors.fid import FiDEditor
from editor.revision.editors.substitute import SubstituteEditor
from editor.revision.reviser import Reviser
from editor.types import Evidence

TOWER = Evidence(
    "wiki-1",
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was designed and "
    "built by the company of Gustave Eiffel from 1887 to 1889 for the 1889 World's Fair. "
    "It is 330 metres tall.",
    "Eiffel Tower",
    "test",
    None,
    "",
    1.0,
)
CURIE = Evidence(
    "wiki-2",
    "Marie Curie was a Polish-born physicist and chemist who conducted pioneering research on "
    "radioactivity. She was the first woman to win a Nobel Prize and the only person to win "
    "Nobel Prizes in two scientific fields.",
    "Marie Curie",
    "test",
    None,
    "",
    1.0,
)


@pytest.fixture(scope="module")
def nli():
    model = build_attribution(AttributionConfig())  # the shipped model
    model.load()
    return model


def _q(e: Evidence, query: str) -> Evidence:
    return Evidence(e.id, e.text, e.title, e.source, e.url, query, e.relevance)


def test_nli_agreement_verdicts_and_span(nli):
    ag = NLIAgreement(nli)
    text = "Marie Curie was a physicist. The Eiffel Tower was built by Thomas Edison's company."
    a = ag.check(text, "Who built the Eiffel Tower?", TOWER)
    assert a.verdict == "contradicted" and a.opens, a.reason
    assert text[a.span[0] : a.span[1]] == "The Eiffel Tower was built by Thomas Edison's company."
    ok = ag.check("The Eiffel Tower is in Paris.", "Where is the Eiffel Tower?", TOWER)
    assert ok.verdict == "supported" and not ok.opens, ok.reason
    none = ag.check(text, "What is the boiling point of water?", TOWER)
    assert none.verdict == "not_checkable" and none.span is None


def test_proposers_are_asked_in_turn_until_the_judge_applies_one(nli):
    from editor.revision.editors.base import Revision

    def editor(name, write):  # an editor that writes ``write(text)``
        class Written:
            def edit_batch(self, items, context=None):
                return [Revision(write(t), name) for t, _ in items]

        e = Written()
        e.name = name
        return e

    text = "The Eiffel Tower is 250 metres tall."
    fixed = "The Eiffel Tower is 330 metres tall."
    judge = RulesJudge(NLIAgreement(nli), EditAcceptance(nli))
    policy = JudgeConfig(max_edit_chars=20)
    for first, why in [
        (editor("same", lambda t: t), "same: no change"),  # leaves the text as it was
        (editor("long", lambda t: t + " And much, much more was said."), "exceeds the limit"),
        (editor("doubler", lambda t: t.replace("250", "Eiffel Tower")), "doubles the name"),
    ]:
        revised, (step,) = Reviser([first, SubstituteEditor(nli)], judge, None, policy).revise(
            text, [_q(TOWER, text)]
        )
        assert revised == fixed and step.editor == "substitute", step.reason
        assert why in step.reason, step.reason
    never = editor("never", lambda t: pytest.fail("asked after an applied edit"))
    revised, (step,) = Reviser([SubstituteEditor(nli), never], judge, None, policy).revise(
        text, [_q(TOWER, text)]
    )
    assert revised == fixed and step.editor == "substitute"
    settler = editor("answer", lambda t: t.replace("250", "Eiffel Tower"))
    settler.settles = True  # the question's answer: refused, it still closes the sentence
    revised, (step,) = Reviser([settler, never], judge, None, policy).revise(
        text, [_q(TOWER, text)]
    )
    assert revised == text and not step.accepted and "doubles the name" in step.reason


def test_substitute_editor_swaps_in_the_evidence_span(nli):
    ed = SubstituteEditor(nli)
    assert ed.edit("The Eiffel Tower is 250 metres tall.", [TOWER]).text == (
        "The Eiffel Tower is 330 metres tall."
    )
    out = ed.edit("The Eiffel Tower was designed by the company of Thomas Edison.", [TOWER])
    assert out.text == "The Eiffel Tower was designed by the company of Gustave Eiffel.", out.reason
    named = ed.edit("The Eiffel Tower was built by Thomas Edison's company.", [TOWER])
    assert named.text == "The Eiffel Tower was built by Gustave Eiffel's company.", named.reason
    same = ed.edit("The Eiffel Tower is in Paris.", [TOWER])
    assert same.text == "The Eiffel Tower is in Paris."  # nothing to fix
    assert ed.edit("The Eiffel Tower is in Paris.", []).reason == "no evidence to edit against"


def test_with_a_question_no_name_the_question_names_is_swapped_out_or_in(nli):
    beatles = Evidence(
        "b", "Paul McCartney and Ringo Starr were born in Liverpool.", "", "test", None, "", 1.0
    )
    question = "where was john lennon born"
    ed = SubstituteEditor(nli)
    text = "John Lennon was born in London."
    asked = ed.candidates(text, [beatles], question)
    assert asked and all(t.startswith("John Lennon") for t, _, _ in asked), asked
    assert any("Liverpool" in t for t, _, _ in asked)
    assert any(not t.startswith("John Lennon") for t, _, _ in ed.candidates(text, [beatles]))
    acceptance = EditAcceptance(nli)
    wrong = "Paul McCartney was born in London."
    ok, why = acceptance.check(text, wrong, (0, len(text)), (0, len(wrong)), beatles.text, question)
    assert not ok and "the question itself names" in why, why


def test_substitute_editor_puts_back_two_spans_a_near_copy_exchanged(nli):
    evidence = Evidence(
        "mx",
        "The Mexican War of Independence was an armed conflict and political process resulting "
        "in Mexico's independence from the Spanish Empire. It began in 1810.",
        "Mexican War of Independence",
        "test",
        None,
        "",
        1.0,
    )
    swapped = (  # NER sees no name in "the Spanish Empire's" here
        "The Mexican War of Independence was an armed conflict and political process resulting "
        "in the Spanish Empire's independence from Mexico."
    )
    out = SubstituteEditor(nli).edit(swapped, [evidence])
    assert out.text == (
        "The Mexican War of Independence was an armed conflict and political process resulting "
        "in Mexico's independence from the Spanish Empire."
    ), out.reason
    assert "swapped" in out.reason


@pytest.mark.parametrize("mode", ["iterative", "one-pass"])
def test_reviser_fixes_only_the_contradicted_sentence(nli, mode):
    text = (
        "Marie Curie was a Polish-born physicist. The Eiffel Tower is 500 metres tall. "
        "It is in Paris."
    )
    evidence = [
        _q(CURIE, "Marie Curie was a Polish-born physicist."),
        _q(TOWER, "The Eiffel Tower is 500 metres tall."),
    ]
    reviser = Reviser(
        SubstituteEditor(nli), RulesJudge(NLIAgreement(nli)), RevisionConfig(mode=mode)
    )
    revised, steps = reviser.revise(text, evidence)
    assert revised == text.replace("500", "330")
    by_id = {s.evidence_id: s for s in steps}
    assert by_id["wiki-1"].accepted and by_id["wiki-1"].agrees is False  # the tower: fixed
    assert not by_id["wiki-2"].accepted and by_id["wiki-2"].agrees is True  # Curie: agrees


def test_only_the_words_an_editor_changes_change(nli):
    from editor.revision.editors.base import Revision

    class Regenerator:  # a generating editor: fixes the number, writes plain single spaces
        name = "regenerator"

        def edit_batch(self, items, context=None):
            return [(Revision(" ".join(t.replace("500", "330").split()), "x")) for t, _ in items]

        def edit(self, text, evidence, context=None):
            return self.edit_batch([(text, evidence)], context)[0]

    text = "Marie Curie was a physicist.  The Eiffel Tower is 500\u00a0metres  tall."
    reviser = Reviser(Regenerator(), RulesJudge(NLIAgreement(nli)), RevisionConfig())
    revised, _ = reviser.revise(text, [_q(TOWER, "The Eiffel Tower is 500 metres tall.")])
    assert revised == text.replace("500", "330")  # a double space and a no-break space stay


def test_edit_size_limit_rejects_a_runaway_editor(nli, tmp_path):
    words = ["<pad>", "</s>", "<unk>", *"the eiffel tower was completed in 1925 .".split()]
    path = save_tiny_t5(tmp_path / "t5", words)
    tok_model = FiDEditor(str(path), max_new_tokens=40)  # random weights: a long garbage answer
    text = "The Eiffel Tower was completed in 1925."
    reviser = Reviser(tok_model, None, RevisionConfig(gate=False), JudgeConfig(max_edit_chars=10))
    revised, steps = reviser.revise(text, [_q(TOWER, text)])
    assert revised == text
    assert len(steps) == 1 and not steps[0].accepted
    assert "exceeds" in steps[0].reason or "no change" in steps[0].reason


def test_llm_agreement_runs_through_a_real_backend():
    ag = LLMAgreement(smollm(), max_new_tokens=48)
    out = ag.check_batch(
        [
            ("The Eiffel Tower was completed in 1925.", "When was it completed?", TOWER),
            ("The Eiffel Tower is in Paris.", "Where is it?", TOWER),
        ]
    )
    verdicts = {"supported", "contradicted", "not_stated", "not_checkable"}
    assert [a.verdict in verdicts for a in out] == [True, True]
    assert all(a.reason for a in out)
    # the judged sentence is located for the editor, whatever the LLM said
    assert out[0].span == (0, len("The Eiffel Tower was completed in 1925."))
    prompt = ag.render("The text.", "The question?", TOWER, "User: hi")
    assert prompt.endswith(f'Evidence: """Eiffel Tower. {TOWER.text}"""\n')
    assert 'Conversation: """User: hi"""' in prompt and 'Question: """The question?"""' in prompt


def _pipeline(*overrides, attribution=None) -> Pipeline:
    cfg = load_config("default", list(overrides))
    return Pipeline(Components(cfg, progress=False), attribution=attribution)


def test_pipeline_edit_result_contract(nli):
    pipe = _pipeline(attribution=nli)
    r = pipe.edit(
        "The Eiffel Tower was built from 1887 to 1925. It is 330 metres tall.",
        evidence=[TOWER.text],
    )
    data = r.to_json()
    assert r.status == "edited" and "1889" in r.revised and r.revised.endswith("330 metres tall.")
    assert set(data) == CONTRACT_KEYS
    rep = data["report"]
    assert rep["attribution_after"] > rep["attribution_before"]
    assert 0.9 < rep["preservation"] < 1.0 and rep["f1_ap"] is not None
    assert set(data["timings_ms"]) == {"prepare", "parse", "research", "revision", "report"}
    step = next(s for s in data["steps"] if s["accepted"])  # what carried the edit, and its proof
    assert step["rule"] in ("slot", "nli") and step["editor"] and "statement" in step["verified_by"]
    assert not data["hops"]  # no question, no hops


def test_pipeline_no_claims_and_non_english_are_unchanged(nli):
    pipe = _pipeline(attribution=nli)
    r = pipe.edit("Hello! How can I help you today?", evidence=[TOWER.text])
    assert r.status == "unchanged" and r.report.attribution_after is None
    assert all(not s.applicable for s in r.report.sentences)
    de = pipe.edit("Der Eiffelturm wurde von 1887 bis 1889 von Gustave Eiffel gebaut.")
    assert de.status == "unchanged" and "English" in de.warnings[0]


def test_pipeline_input_limits_say_what_to_do(nli):
    pipe = _pipeline("limits.max_chars=200", "limits.max_sentences=3", attribution=nli)
    cases = [
        ("", "empty"),
        ("   ", "empty"),
        (42, "must be a string"),
        ("x" * 201, "over the limit of 200"),
        ("Paris is big. Rome is old. Oslo is cold. Bern is small.", "4 sentences"),
    ]
    for text, message in cases:
        with pytest.raises(InputError, match=message):
            pipe.edit(text)
    with pytest.raises(InputError, match="context must be a string"):
        pipe.edit("Paris is in France.", context=["not", "text"])
    with pytest.raises(InputError, match="evidence must be a list of strings"):
        pipe.edit("Paris is in France.", evidence=[1, 2])
    out = pipe.edit_batch(["", "Paris is in France."], evidence=[None, ["Paris is in France."]])
    assert out[0].result is None and isinstance(out[0].error, InputError)
    assert out[1].error is None and out[1].result.status == "unchanged"


def test_unreachable_llm_degrades_with_the_reason(nli):
    port = free_port()  # nothing listens there
    pipe = _pipeline(
        "editor.type=prompted",
        "revision.gate=false",
        "llm.backend=openai",
        f"llm.base_url=http://127.0.0.1:{port}/v1",
        "llm.model=any",
        "llm.max_retries=0",
        "llm.timeout_s=2",
        attribution=nli,
    )
    text = "The Eiffel Tower was completed in 1925."
    r = pipe.edit(text, evidence=[TOWER.text])
    assert r.status == "degraded" and r.revised == text
    assert "revision failed" in r.warnings[0]


def test_stage_timeout_degrades(nli):
    pipe = _pipeline("limits.revision_timeout_s=0.001", "revision.gate=false", attribution=nli)
    text = "The Eiffel Tower was completed in 1925."
    r = pipe.edit(text, evidence=[TOWER.text])
    assert r.status == "degraded" and r.revised == text and "timed out" in r.warnings[0]


@pytest.mark.integration
def test_cli_edit_single_and_resumable_batch(tmp_path):
    out = run_purr(
        "edit",
        "The Eiffel Tower was completed in 1925 for the World's Fair.",
        "--evidence",
        TOWER.text,
        "--json",
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "edited" and "1889" in data["revised"]
    human = run_purr(
        "edit",
        "The Eiffel Tower was completed in 1925 for the World's Fair.",
        "--evidence",
        TOWER.text,
    )
    assert "1889" in human.stdout and "[1]" in human.stdout and "F1_AP" in human.stdout
    src = tmp_path / "in.jsonl"
    src.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "id": "a",
                        "text": "The Eiffel Tower is 250 metres tall.",
                        "evidence": [TOWER.text],
                        "keep": 1,
                    }
                ),
                json.dumps({"id": "b", "text": ""}),
                "{not json",
                json.dumps(
                    {"id": "c", "text": "The Eiffel Tower is in Paris.", "evidence": TOWER.text}
                ),
            ]
        )
        + "\n"
    )
    dst = tmp_path / "out.jsonl"
    first = run_purr("edit", "--input", str(src), "--output", str(dst))
    assert first.returncode == 0, first.stderr
    rows = [json.loads(x) for x in dst.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "c"] and rows[0]["keep"] == 1
    assert "330" in rows[0]["revised"]
    errors = (tmp_path / "out.jsonl.errors.jsonl").read_text()
    assert "line 2" in errors and "line 3" in errors
    again = run_purr("edit", "--input", str(src), "--output", str(dst))
    assert json.loads(again.stdout)["skipped"] == 2
    assert len(dst.read_text().splitlines()) == 2
    bad = run_purr("edit")
    assert bad.returncode == 2 and "pass a passage" in bad.stderr


def test_pipeline_researches_and_fixes_a_passage_whose_sentences_share_a_snippet(nli, built_index):
    """Both sentences retrieve the same Eiffel Tower snippet; each still gets its own
    (query, evidence) step, so the second sentence's error is checked and fixed."""
    cfg = load_config("default")
    pipe = Pipeline(Components(cfg, index_path=built_index, progress=False), attribution=nli)
    text = "The Eiffel Tower is in Paris. The Eiffel Tower is 250 metres tall."
    r = pipe.edit(text)
    assert r.status == "edited", [s.reason for s in r.steps]
    assert r.revised == "The Eiffel Tower is in Paris. The Eiffel Tower is 330 metres tall."
    assert len(r.steps) >= len(r.queries) == 2
    assert {s.query for s in r.steps} == set(r.queries)
    assert len({e.id for e in r.evidence}) == len(r.evidence)  # the list itself stays unique


def test_a_question_s_answer_is_compared_and_replaced_by_the_evidence_s_answer(nli):
    from editor.judge.agreement.question import QuestionAgreement
    from editor.revision.editors import IdentityEditor
    from editor.revision.editors.answer import AnswerEditor

    question = "who designed the eiffel tower"
    wrong = "The Eiffel Tower was designed by Thomas Edison."
    right = "The Eiffel Tower was designed by Gustave Eiffel's company."
    gate = QuestionAgreement(NLIAgreement(nli))
    said = gate.check(wrong, question, TOWER, question)
    assert said.opens and said.span == (0, len(wrong)), said
    assert not gate.check(right, question, TOWER, question).opens
    editor = AnswerEditor(IdentityEditor(), nli)
    fixed = editor.edit(wrong, [TOWER], question)
    assert fixed.text == "The Eiffel Tower was designed by Gustave Eiffel.", fixed.reason
    assert fixed.reason.startswith("answer: 'Thomas Edison' -> 'Gustave Eiffel'")
    assert editor.edit(right, [TOWER], question).text == right
    assert editor.edit(wrong, [TOWER], None).text == wrong  # no question: the inner editor
