"""FiD-T5 and causal editors on tiny models built from configs: fusion, masking, training
signal, LoRA adapters, loading through the config registry."""

from __future__ import annotations

import pytest
from helpers import save_tiny_t5

from editor.config import EditorConfig, load_config
from editor.llm.loading import load_causal
from editor.research.given import given_evidence
from editor.revision.editors.base import build as build_editor
from editor.revision.editors.causal import CausalEditor, render_causal
from editor.revision.editors.fid import FiDEditor, encode_fid, fid_loss, fid_passages, load_seq2seq

YEARS = [str(y) for y in range(1900, 1920)]
THINGS = ["tower", "bridge", "castle", "museum"]
WORDS = [
    "<pad>",
    "</s>",
    "<unk>",
    "claim",
    "evidence",
    "context",
    ":",
    ".",
    "the",
    "was",
    "built",
    "in",
    "is",
    "old",
    *THINGS,
    *YEARS,
]


@pytest.fixture(scope="module")
def t5_path(tmp_path_factory):
    return save_tiny_t5(tmp_path_factory.mktemp("fid-t5"), WORDS, d_model=64, init=1.0)


def test_fid_passages_pair_the_claim_with_each_snippet():
    got = fid_passages("the tower was built in 1901 .", ["a", "b"], context="user : hi")
    assert got == [
        "claim: the tower was built in 1901 . context: user : hi evidence: a",
        "claim: the tower was built in 1901 . context: user : hi evidence: b",
    ]
    assert fid_passages("x", []) == ["claim: x"]


def test_encode_fid_masks_missing_passages_and_is_batch_invariant(t5_path):
    import torch

    tok, model = load_seq2seq(str(t5_path), None, "cpu")
    one = ["claim: the tower was built in 1901 evidence: the tower was built in 1905"]
    two = [one[0], "claim: the tower was built in 1901 evidence: the bridge was built in 1907"]
    with torch.inference_mode():
        s_alone, m_alone = encode_fid(model, tok, [one], 64)
        s_batch, m_batch = encode_fid(model, tok, [one, two], 64)
    n = m_alone.shape[1]
    width = s_batch.shape[1] // 2  # tokens per passage in the batch
    assert m_batch[0, width:].sum() == 0  # the first example's missing second passage
    assert m_batch[1].sum() == 2 * m_alone.sum()  # both passages of the second are real
    assert torch.allclose(s_batch[0, :n], s_alone[0], atol=1e-5)
    # generation does not depend on what else is in the batch
    editor = FiDEditor(model, tok, max_new_tokens=8)
    ev1 = given_evidence(["the tower was built in 1905"])
    ev2 = given_evidence(["the tower was built in 1905", "the bridge was built in 1907"])
    alone = editor.edit("the tower was built in 1901", ev1)
    both = editor.edit_batch(
        [("the tower was built in 1901", ev1), ("the tower was built in 1901", ev2)]
    )
    assert both[0].text == alone.text


def test_fid_training_signal_reaches_the_passages(t5_path):
    """The same claim with different evidence must come out differently: after fitting four
    examples whose only difference is a year in one of the separately encoded passages (in
    varying positions, beside distractors), each one's own year is the likeliest revision given
    its passages, and its passages make that year likelier than any other case's passages do.
    (Likelihoods, not greedy decoding, so that a tiny model fitted on any CPU's kernels passes.)"""
    import torch

    torch.manual_seed(0)
    tok, model = load_seq2seq(str(t5_path), None, "cpu")
    claim = "the tower was built in 1901"
    cases = [
        (["the tower was built in 1905"], "the tower was built in 1905"),
        (["the bridge is old", "the tower was built in 1907"], "the tower was built in 1907"),
        (["the tower was built in 1909", "the castle is old"], "the tower was built in 1909"),
        (
            ["the museum is old", "the bridge is old", "the tower was built in 1911"],
            "the tower was built in 1911",
        ),
    ]
    inputs = [fid_passages(claim, ps) for ps, _ in cases]
    targets = [t for _, t in cases]
    model.train()
    # the loss reaches every separately encoded passage: words that only distractor passages
    # hold (never a target) get a gradient, through the decoder's attention over the passages
    fid_loss(model, tok, inputs, targets, max_length=32).backward()
    grad = model.get_input_embeddings().weight.grad
    for word in ("castle", "museum", "bridge"):
        assert grad[tok.convert_tokens_to_ids(word)].abs().sum() > 0, word
    model.zero_grad()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    editor = FiDEditor(model, tok, max_new_tokens=12)

    def scores() -> list[list[float]]:
        """scores[i][j]: log P(case j's revision | the claim, case i's passages)."""
        model.eval()
        out = [editor.score_targets([(claim, ps, t) for t in targets]) for ps, _ in cases]
        model.train()
        return out

    def each_reads_its_year(s: list[list[float]]) -> bool:
        n = range(len(cases))
        return all(s[i][i] > s[i][j] and s[i][i] > s[j][i] for i in n for j in n if j != i)

    first = fid_loss(model, tok, inputs, targets, max_length=32).item()
    for step in range(1, 1001):  # fitted until it holds: how long depends on the CPU's kernels
        loss = fid_loss(model, tok, inputs, targets, max_length=32)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if step % 25 == 0 and loss.item() < 0.1 * first and each_reads_its_year(scores()):
            break
    final = scores()
    # each case's own year is its likeliest revision, and its passages make that year
    # likelier than any other case's passages do
    assert each_reads_its_year(final), final


def test_fid_lora_adapter_loads_through_the_config_registry(t5_path, tmp_path):
    from peft import LoraConfig, TaskType, get_peft_model
    from transformers import AutoModelForSeq2SeqLM

    base = AutoModelForSeq2SeqLM.from_pretrained(str(t5_path))
    lora = get_peft_model(
        base, LoraConfig(task_type=TaskType.SEQ_2_SEQ_LM, r=4, target_modules=["q", "v"])
    )
    lora.save_pretrained(tmp_path / "adapter")
    cfg = load_config(
        "default",
        ["editor.type=fid", f"editor.model={t5_path}", f"editor.adapter={tmp_path / 'adapter'}"],
    )
    editor = build_editor(cfg.editor, attribution=lambda: None, llm=lambda: None)
    assert isinstance(editor, FiDEditor)
    out = editor.edit(
        "the tower was built in 1901", given_evidence(["the tower was built in 1905"])
    )
    assert isinstance(out.text, str) and out.reason
    with pytest.raises(ValueError, match="editor.model"):
        load_config("default", ["editor.type=fid"])


def test_fid_missing_model_says_what_to_do(tmp_path):
    editor = build_editor(
        EditorConfig(type="fid", model=str(tmp_path / "nope")), lambda: None, lambda: None
    )
    with pytest.raises(Exception, match="does not exist|cannot load"):
        editor.edit("x", given_evidence(["y"]))


# -- causal -----------------------------------------------------------------------------------


def test_causal_editor_prompt_generation_and_lora_adapter(tiny_model_dir, tmp_path):
    from peft import LoraConfig, TaskType, get_peft_model
    from transformers import AutoModelForCausalLM

    prompt = render_causal(
        "Evidence:\n{{evidence}}\n{{context}}Claim: {{text}}\nRevision:",
        "the tower was built in 1901",
        ["the tower was built in 1905", "the bridge was built in 1907"],
        context="when was the tower built",
    )
    assert prompt.splitlines() == [
        "Evidence:",
        "[1] the tower was built in 1905",
        "[2] the bridge was built in 1907",
        "Context: when was the tower built",
        "Claim: the tower was built in 1901",
        "Revision:",
    ]
    base = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir))
    get_peft_model(base, LoraConfig(task_type=TaskType.CAUSAL_LM, r=4)).save_pretrained(
        tmp_path / "adapter"
    )
    tok, model = load_causal(str(tiny_model_dir), str(tmp_path / "adapter"), "cpu")
    editor = CausalEditor(model, tok, max_new_tokens=6)
    ev = given_evidence(["the tower was built in 1905"])
    out = editor.edit_batch(
        [("the tower was built in 1901", ev), ("the bridge was built in 1902", ev)]
    )
    assert len(out) == 2 and all(r.reason for r in out)
    with pytest.raises(FileNotFoundError, match="adapter_config.json"):
        load_causal(str(tiny_model_dir), str(tmp_path), "cpu")
