"""Span rows with a question as context (``training.data.spans.questions``): the wrong answer
is contradicted and points at the evidence's answer, the right one is supported, and without
the answering sentence the answer is unsupported, never contradicted."""

from __future__ import annotations

import random
from pathlib import Path

from tests.test_training.test_data.test_spans import BANK, PARENTS, S1, SENTS
from training.data.spans.arrays import label_rows
from training.data.spans.families import FAMILIES, Context, make_window
from training.data.spans.questions import question_of

TOKENIZER = Path(__file__).resolve().parents[3] / "editor/models/purr-span-judge/tokenizer.json"


def rows(family: str, n: int = 60):
    out = []
    for seed in range(n):
        window, k, evidence, offsets = make_window(SENTS, 0, random.Random(seed))
        ctx = Context("wiki:E", window, k, evidence, offsets, BANK, PARENTS, random.Random(seed))
        if (r := FAMILIES[family](ctx)) is not None:
            out.append(r)
    assert out, family
    return out


def test_a_wrong_answer_is_contradicted_and_points_at_the_right_one():
    for r in rows("qa-wrong"):
        assert r.label == "contradicted" and r.question
        (c,) = [s for s in r.spans if s.tag == "C"]
        wrong, right = r.claim[c.start : c.end], r.evidence[c.fix_start : c.fix_end]
        assert c.tag == "C" and wrong != right and right in S1
        assert right.lower() not in r.question.lower()  # the question does not give it away
        for u in [
            s for s in r.spans if s.tag != "C"
        ]:  # details made up around it are unsupported, not contradicted
            assert u.tag == "U" and r.claim[u.start : u.end] not in r.evidence


def test_a_right_answer_is_supported_in_each_form():
    found = rows("qa-right", 200)
    for r in found:  # supported, unless words are made up around it
        assert r.question and r.label == ("not_supported" if r.spans else "supported")
        assert all(s.tag == "U" and r.claim[s.start : s.end] not in r.evidence for s in r.spans)
    assert {r.label for r in found} == {"supported", "not_supported"}
    forms = {
        ("bare" if r.claim.count(" ") < 3 else "cut" if r.claim in S1 else "full") for r in found
    }
    assert len(forms) >= 2


def test_without_the_answering_sentence_the_answer_is_not_enough():
    for r in rows("qa-unanswered"):
        assert r.label == "not_supported" and S1 not in r.evidence
        assert all(s.tag == "U" for s in r.spans)


def test_the_question_is_read_before_the_claim_and_gets_no_tags():
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    r = next(r for r in rows("qa-wrong") if len(r.spans) == 1)
    out = label_rows([r], str(TOKENIZER), 160)
    plain, marked = out["ids"][0], out["ids"][1]
    q_end = [tok.id_to_token(int(i)) for i in plain].index("[SEP]")
    assert all(t <= 0 for t in out["tags"][0][1:q_end])  # no question token is tagged
    c = r.spans[0]
    tagged = "".join(
        tok.id_to_token(int(i)).lstrip("#")
        for i, t in zip(plain, out["tags"][0], strict=True)
        if t > 0
    )
    assert tagged == r.claim[c.start : c.end].lower().replace(" ", "")
    s, e = out["ptr"][1]
    pointed = "".join(tok.id_to_token(int(i)).lstrip("#") for i in marked[s : e + 1])
    assert pointed == r.evidence[c.fix_start : c.fix_end].lower().replace(" ", "")


def test_question_rows_are_made_only_when_asked(tmp_path):
    import json

    from training.data.spans.make import generate

    parsed = tmp_path / "parsed.jsonl"
    sents = [{"t": s.text, "e": [list(e) for e in s.ents]} for s in SENTS]
    parsed.write_text(json.dumps({"doc": "wiki:E", "sents": sents}) + "\n")
    plain = generate(parsed, passes=3, progress=False)
    asked = generate(parsed, passes=3, progress=False, questions=True)
    every = [r for rows in plain.values() for r in rows]
    assert every and not any(r.question for r in every)
    assert any(r.family.startswith("qa-") for rows in asked.values() for r in rows)


def test_questions_are_written_in_the_forms_users_type():
    s = "Robert McCulloch bought the London Bridge in 1968."
    assert question_of(s, 0, 16, "PERSON", 0.5) == "who bought the london bridge in 1968"
    assert question_of(s, 45, 49, "DATE", 0.95) == "When robert mcculloch bought the london bridge?"
    assert question_of(s, 45, 49, "DATE", 0.1) == "robert mcculloch bought the london bridge in"
    assert question_of(s, 0, 16, "TIME", 0.5) is None
