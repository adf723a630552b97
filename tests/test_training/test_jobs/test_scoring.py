"""`purr score`: single texts and JSONL batches, through the real CLI, on a tiny NLI model."""

import json

import pytest
from helpers import run_purr, save_tiny_bert_nli


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory):
    path = tmp_path_factory.mktemp("nli") / "tiny"
    return save_tiny_bert_nli(path, {0: "entailment", 1: "neutral", 2: "contradiction"})


def purr(*args, model=None):
    sets = ["--set", "attribution.type=hf", "--set", f"attribution.model={model}"] if model else []
    return run_purr(*args, *sets)


@pytest.mark.integration
def test_score_one_text_json(tiny_nli, tmp_path):
    ev_file = tmp_path / "ev.txt"
    ev_file.write_text("Marie Curie won the Nobel Prize in Chemistry in 1911.")
    r = purr(
        "score",
        "Marie Curie won the 1911 Nobel Prize. Is that right?",
        "--evidence",
        "Curie was a physicist.",
        str(ev_file),
        "--json",
        model=tiny_nli,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["evidence"][1].startswith("Marie Curie won")  # the file was read
    assert [s["applicable"] for s in out["sentences"]] == [True, False]
    s0 = out["sentences"][0]
    assert 0 <= s0["attribution"] <= 1 and s0["evidence"] in out["evidence"]
    assert out["attribution"] == pytest.approx(s0["attribution"])  # the question is left out


@pytest.mark.integration
def test_score_batch_reports_bad_rows_and_keeps_going(tiny_nli, tmp_path):
    rows = [
        {
            "id": "a",
            "text": "The tower is 330 metres tall.",
            "evidence": ["The Eiffel Tower is 330 metres tall."],
        },
        {"id": "b", "text": "The Amazon River flows through Brazil.", "evidence": []},
        {"id": "c", "text": "Missing evidence field."},
        "not an object",
        {
            "id": "d",
            "text": "Many snippets.",
            "evidence": [f"Snippet number {i}." for i in range(1000)],
            "context": "User: hi",
        },
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken\n")
    r = purr("score", "--input", str(src), "--output", str(tmp_path / "out.jsonl"), model=tiny_nli)
    assert r.returncode == 0, r.stderr
    assert "scored 3 rows" in r.stdout and "3 rows had errors" in r.stdout
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [o["id"] for o in out] == ["a", "b", "c", 4, "d", 6]
    assert out[1]["attribution"] == 0.0  # applicable sentence, no evidence
    assert (
        "'evidence'" in out[2]["error"]
        and "JSON object" in out[3]["error"]
        and "invalid JSON" in out[5]["error"]
    )
    assert out[4]["sentences"][0]["evidence"].startswith("Snippet number")


@pytest.mark.integration
@pytest.mark.parametrize(
    "args, message",
    [
        (["score", "", "--evidence", "x"], "text is empty"),
        (["score", "--input", "{tmp}/missing.jsonl", "--output", "{tmp}/o.jsonl"], "no such file"),
        (["score", "--input", "{tmp}/latin.jsonl", "--output", "{tmp}/o.jsonl"], "not valid UTF-8"),
        (["score", "text", "--input", "{tmp}/latin.jsonl"], "not both"),
    ],
)
def test_score_user_errors(tiny_nli, tmp_path, args, message):
    (tmp_path / "latin.jsonl").write_bytes(b'{"text": "caf\xe9"}\n')
    r = purr(*[a.format(tmp=tmp_path) for a in args], model=tiny_nli)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


@pytest.mark.integration
def test_missing_model_folder_says_how_to_get_one(tmp_path):
    missing = tmp_path / "no-model"
    r = run_purr("score", "A claim.", "--evidence", "x", "--set", f"attribution.model={missing}")
    assert r.returncode == 2 and "attribution" in r.stderr and "Traceback" not in r.stderr
    assert "no config.json" in r.stderr


@pytest.mark.integration
def test_shipped_model_scores_out_of_the_box(tmp_path):
    r = run_purr(
        "score",
        "The Eiffel Tower was completed in 1889. It was completed in 1925.",
        "--evidence",
        "The Eiffel Tower was built from 1887 to 1889.",
        "--json",
        env={"PURR_CACHE_DIR": str(tmp_path)},
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    first, second = (s["attribution"] for s in data["sentences"])
    assert first > 0.5 > second
