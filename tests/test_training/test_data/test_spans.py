"""Span rows: the families made from a parsed sentence in its window, the rows' file format,
the document split of ``make``, and the arrays the trainer reads (tags and pointer targets)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from training.data.spans.arrays import label_rows
from training.data.spans.families import FAMILIES, Context, Sentence, make_window
from training.data.spans.make import generate, make
from training.data.spans.real import diff_span
from training.data.spans.rows import Span, SpanRow, read_rows, write_rows

TOKENIZER = Path(__file__).resolve().parents[3] / "editor/models/purr-span-judge/tokenizer.json"

S1 = "The Eiffel Tower was built from 1887 to 1889 in Paris by Gustave Eiffel."
S2 = "It was the tallest structure in the world until 1930 and is the most visited monument."
SENTS = [
    Sentence(
        S1,
        ents=(
            (4, 16, "FAC"),
            (32, 36, "DATE"),
            (40, 44, "DATE"),
            (48, 53, "GPE"),
            (57, 71, "PERSON"),
        ),
    ),
    Sentence(S2, ents=((48, 52, "DATE"),), adjs=(), nouns=(S2.index("structure"),)),
]
BANK = {"PERSON": ["Thomas Edison"], "GPE": ["Lyon"], "ADJ": ["wooden"], "YEAR": ["1750"]}
PARENTS = {"paris": ["france"]}


def context(at: int = 0, seed: int = 0) -> Context:
    window, k, evidence, offsets = make_window(SENTS, at, random.Random(seed))
    return Context(
        "wiki:Eiffel Tower", window, k, evidence, offsets, BANK, PARENTS, random.Random(seed)
    )


def test_a_value_from_the_same_evidence_is_contradicted_and_points_at_the_original():
    rows = [FAMILIES["con-same"](context(seed=s)) for s in range(30)]
    rows = [r for r in rows if r is not None]
    assert rows
    for r in rows:
        (span,) = r.spans
        assert r.label == "contradicted" and span.tag == "C"
        new = r.claim[span.start : span.end]
        assert new in r.evidence  # the wrong value is one the evidence states elsewhere
        fix = r.evidence[span.fix_start : span.fix_end]
        assert fix != new and S1.replace(fix, new, 1) == r.claim


def test_a_claim_more_specific_than_the_evidence_is_never_contradicted():
    r = FAMILIES["nei-specific"](context())
    assert r.label == "not_supported"
    assert "France" in r.evidence and "Paris" not in r.evidence
    assert [r.claim[s.start : s.end] for s in r.spans] == ["Paris"]


def test_every_family_writes_valid_rows_that_round_trip(tmp_path):
    rows = []
    for seed in range(20):
        for at in (0, 1):
            for fam in FAMILIES.values():
                if (r := fam(context(at, seed))) is not None:
                    rows.append(r)
    assert {r.family for r in rows} >= {
        "sup-copy",
        "con-same",
        "con-other",
        "con-number",
        "nei-modifier",
        "nei-dropped",
        "multi",
    }
    path = tmp_path / "rows.jsonl.xz"
    assert write_rows(rows, path) == len(rows)
    assert list(read_rows(path)) == rows


def test_a_span_outside_the_claim_is_refused():
    with pytest.raises(ValueError, match="bad span"):
        SpanRow("x", "f", "contradicted", "short", "ev", "g", (Span(0, 99, "C"),))
    with pytest.raises(ValueError, match="label"):
        SpanRow("x", "f", "maybe", "short", "ev", "g")


def test_make_splits_by_document_and_reports_each_family(tmp_path):
    parsed = tmp_path / "parsed.jsonl"
    docs = []
    for k in range(60):
        sents = [
            {
                "t": s.text.replace("Eiffel", f"Eiffel{k}"),
                "e": [list(e) for e in s.ents],
                "a": [],
                "n": list(s.nouns),
                "p": "",
            }
            for s in SENTS
        ]
        docs.append({"doc": f"wiki:T{k}", "source": "wiki", "sents": sents})
    parsed.write_text("\n".join(json.dumps(d) for d in docs), "utf-8")
    rows = generate(parsed, passes=2, workers=1, progress=False)
    groups = {k: {r.group for r in v} for k, v in rows.items()}
    assert groups["train"] and not (groups["train"] & (groups["dev"] | groups["test"]))
    stats = make(parsed, tmp_path / "out", passes=1, workers=1, suffix=".jsonl", progress=False)
    assert sum(stats["families"].values()) == stats["train"]
    assert abs(sum(stats["shares"].values()) - 1) < 0.01
    assert (tmp_path / "out" / "dev.jsonl").is_file()


def test_tags_and_the_pointer_target_land_on_the_right_tokens():
    ev = "Cleopatra was Queen of Egypt from 51 to 30 BC."
    claim = "Cleopatra was Queen of Egypt from 51 to 30 AD."
    a = claim.index("AD")
    rows = [
        SpanRow(
            "1",
            "con",
            "contradicted",
            claim,
            ev,
            "g",
            (Span(a, a + 2, "C", ev.index("BC"), ev.index("BC") + 2),),
        ),
        SpanRow("2", "nei", "not_supported", claim, ev, "g"),  # spans unknown
    ]
    out = label_rows(rows, str(TOKENIZER), 64)
    assert out["row"] == [0, 0, 1]  # the contradicted row twice: plain and marked
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    plain, marked = out["ids"][0], out["ids"][1]
    tagged = [tok.id_to_token(int(i)) for i, t in zip(plain, out["tags"][0], strict=True) if t > 0]
    assert tagged == ["ad"]
    s, e = out["ptr"][1]
    assert [tok.id_to_token(int(i)) for i in marked[s : e + 1]] == ["bc"]
    assert "«" in [tok.id_to_token(int(i)) for i in marked]
    assert out["ptr"][0] == (-1, -1) and all(t == -100 for t in out["tags"][2])


def test_a_summedits_edit_is_cut_to_whole_words():
    a, b, x, y = diff_span("Profits rose 13.1 percent.", "Profits rose 13.8 percent.")
    assert ("Profits rose 13.1 percent."[a:b], "Profits rose 13.8 percent."[x:y]) == (
        "13.1",
        "13.8",
    )


def test_purr_data_spans_writes_rows_from_the_corpora_split_by_document(dev_data, tmp_path):
    from helpers import run_purr

    out = tmp_path / "spans"
    r = run_purr(
        "data",
        "spans",
        "--out",
        str(out),
        "--limit",
        "40",
        "--passes",
        "1",
        "--workers",
        "1",
        "--data",
        str(dev_data),
    )
    assert r.returncode == 0, r.stderr[-2000:]
    stats = json.loads((out / "summary.json").read_text("utf-8"))
    assert stats["train"] > 100 and stats["real"] > 1000 and stats["command"].startswith("purr")
    train = list(read_rows(out / "train.jsonl.xz"))
    held = {r.group for name in ("dev", "test") for r in read_rows(out / f"{name}.jsonl.xz")}
    assert not held & {r.group for r in train}
    assert {"con-same", "sup-copy"} <= {r.family for r in train}
    bad = run_purr("data", "spans", "--out", str(tmp_path / "x"), "--data", str(tmp_path))
    assert bad.returncode != 0 and "corpus not found; pass --data" in bad.stderr
