"""Fitting the judge's reader head: rows in, a calibrated head with ordered operating points
out, and the rows of a documents set and of real answers split as documented."""

from __future__ import annotations

import json
import random

from editor.judge.reader_head import NAMES, ReaderHead
from training.data.answer_rows import document_rows, real_rows
from training.fit.reader_head import fit, tally, write


def _records(n: int, seed: int) -> list[dict]:
    """Rows whose one candidate is right when its mass is high and the text's is not also
    stated in the evidence (with noise)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        mass, said = rng.random(), rng.random()
        right = rng.random() < mass * (1 - said)
        signals = {name: 0.0 for name in NAMES} | {"c_mass": mass, "said_ev": said}
        out.append({"wrong": right, "candidates": [{"signals": signals, "right": right}]})
    return out


def test_a_head_fitted_on_rows_applies_the_likely_fixes_and_not_the_rest(tmp_path):
    head, points = fit(_records(600, 0), _records(300, 1), 0.9, 0.95)
    assert head.suggest_min <= head.apply_min <= head.prove_min
    sure = {n: 0.0 for n in NAMES} | {"c_mass": 0.95, "said_ev": 0.0}
    unsure = sure | {"c_mass": 0.2, "said_ev": 0.8}
    assert head(sure) > head.apply_min > head(unsure)
    got = tally(_records(300, 2), head)
    assert got["fixed"] > 2 * got["harmful"]
    write(tmp_path, head, points, {"dev": got})
    assert ReaderHead.load(tmp_path) == head
    assert (tmp_path / "reader-operating-point.png").stat().st_size > 0


def test_documents_split_by_id_and_real_answers_by_passage(tmp_path):
    docs = tmp_path / "docs.jsonl"
    rows = [
        {"id": f"doc-{i:03d}", "text": "t", "context": "q?", "evidence": ["e"],
         "answers": ["a"], "wrong": i % 3 == 0, "wrong_value": "w"}
        for i in range(1, 7)
    ]  # fmt: skip
    docs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    split = document_rows(docs)
    assert [r.article for r in split["train"]] == ["doc-002", "doc-004", "doc-006"]
    assert split["train"][2].wrong and split["train"][2].said == "w"
    real = tmp_path / "real.jsonl"
    answers = [
        {"id": str(i), "text": "t", "context": "q?", "answers": ["a"], "wrong": True,
         "evidence_text": f"passage {i % 6}"}
        for i in range(30)
    ]  # fmt: skip
    real.write_text("".join(json.dumps(r) + "\n" for r in answers))
    got = real_rows(real, share_dev=3)
    dev_passages = {r.evidence for r in got["dev"]}
    assert dev_passages and not dev_passages & {r.evidence for r in got["train"]}


def test_a_head_fitted_with_the_verifiers_signals_reads_them():
    from editor.judge.reader_head import VERIFIED

    def rows(n: int, seed: int) -> list[dict]:
        out = _records(n, seed)
        for r in out:  # the verifier supports the right candidate after the edit
            c = r["candidates"][0]
            c["signals"] |= {v: 0.0 for v in VERIFIED} | {"v_after": 0.8 * c["right"] + 0.1}
        return out

    head, _ = fit(rows(600, 0), rows(300, 1), 0.9, 0.95, NAMES + VERIFIED)
    plain, _ = fit(rows(600, 0), rows(300, 1), 0.9, 0.95)
    assert head.verified and not plain.verified
    assert head.right.names[-len(VERIFIED) :] == VERIFIED
    assert tally(rows(300, 2), head)["fixed"] > tally(rows(300, 2), plain)["fixed"]
