"""The restated span families: a claim that says the evidence sentence as a user's text would
(a pronoun resolved, a name as the window writes it, a relative clause lifted) is supported;
with a value swapped it is contradicted, its span on the new value and its fix on the
evidence's; and ``make --restated`` writes them with short windows beside the default ones."""

from __future__ import annotations

import json
import random
from pathlib import Path

from training.data.spans.families import FAMILIES, Context, Sentence, make_window
from training.data.spans.make import make

EDISON = [
    Sentence(
        "Thomas Alva Edison was an American inventor who developed the phonograph in 1877.",
        ents=((0, 18, "PERSON"), (26, 34, "NORP"), (75, 79, "DATE")),
    ),
    Sentence(
        "He founded General Electric in 1892 with partners from Boston.",
        ents=((11, 27, "ORG"), (31, 35, "DATE"), (55, 61, "GPE")),
    ),
    Sentence(
        "Edison registered 1,093 patents in the United States.",
        ents=((0, 6, "PERSON"), (18, 23, "CARDINAL"), (35, 52, "GPE")),
    ),
]
BANK = {"PERSON": ["Nikola Tesla"], "ORG": ["Siemens"], "GPE": ["Lyon"], "NORP": ["French"]}


def context(at: int, seed: int) -> Context:
    window, k, evidence, offsets = make_window(EDISON, at, random.Random(seed))
    return Context("wiki:Edison", window, k, evidence, offsets, BANK, {}, random.Random(seed))


def test_restated_claims_are_supported_and_read_as_a_user_would_write_them():
    claims = {
        r.claim
        for at in range(3)
        for seed in range(40)
        if (r := FAMILIES["sup-restated"](context(at, seed))) is not None
    }
    assert "Thomas Alva Edison developed the phonograph in 1877." in claims  # clause lifted
    assert "Thomas Alva Edison founded General Electric in 1892 with partners from Boston." in (
        claims
    )  # the pronoun resolved to the name the window opens with
    assert claims & {
        "Thomas Edison registered 1,093 patents in the United States.",
        "Thomas Alva Edison registered 1,093 patents in the United States.",
    }  # the name as the window writes it in full
    assert "Edison was an American inventor who developed the phonograph in 1877." in claims


def test_a_restated_claim_with_a_swapped_value_points_at_the_evidence_s_value():
    rows = [
        r
        for at in range(3)
        for seed in range(60)
        if (r := FAMILIES["con-restated"](context(at, seed))) is not None
    ]
    assert len(rows) > 10
    for r in rows:
        (span,) = r.spans
        new, fix = r.claim[span.start : span.end], r.evidence[span.fix_start : span.fix_end]
        assert r.label == "contradicted" and span.tag == "C"
        assert new != fix and fix in " ".join(s.text for s in EDISON)
        # the claim is a restatement: putting the fix back gives a supported restated sentence
        back = r.claim[: span.start] + fix + r.claim[span.end :]
        assert back not in {s.text for s in EDISON}


def test_make_restated_adds_the_families_and_leaves_the_default_rows_alone(tmp_path: Path):
    parsed = tmp_path / "parsed.jsonl"
    docs = [
        {
            "doc": f"wiki:{k}",
            "source": "wiki",
            "sents": [
                {"t": s.text, "e": [list(e) for e in s.ents], "a": [], "n": [], "p": ""}
                for s in EDISON
            ],
        }
        for k in range(30)
    ]
    parsed.write_text("".join(json.dumps(d) + "\n" for d in docs), "utf-8")
    plain = make(parsed, tmp_path / "plain", suffix=".jsonl", progress=False)
    again = make(parsed, tmp_path / "again", suffix=".jsonl", progress=False)
    more = make(parsed, tmp_path / "more", suffix=".jsonl", progress=False, restated=True)
    assert plain["families"] == again["families"]
    assert "sup-restated" not in plain["families"] and "con-restated" not in plain["families"]
    assert more["families"].get("sup-restated") and more["families"].get("con-restated")
