"""The MiniCheck checkers (``minicheck-t5``, ``llm-check``) on tiny random models built offline:
the input each model reads and the probability read from it, checked against the model itself."""

from __future__ import annotations

import pytest
import torch
from helpers import save_tiny_t5

from editor.attribution import build
from editor.config import AttributionConfig

WORDS = ["<pad>", "</s>", "<unk>", "predict", ":", "premise", "hypothesis", "1", "0", "the",
         "tower", "opened", "in", "1889", "1887", "it", "is", "paris", "."]  # fmt: skip


def test_minicheck_t5_reads_predict_document_eos_claim(tmp_path):
    path = save_tiny_t5(tmp_path / "t5", WORDS)
    model = build(AttributionConfig(type="minicheck-t5", model=str(path), batch_size=2))
    premise, claim = "the tower opened in 1889 .", "it opened in 1887 ."
    got = model.score(premise, claim)
    assert got.contradicted == 0.0 and 0.0 < got.supported < 1.0
    # the same number by hand: "predict : <premise> </s> <claim> </s>", first decoder step
    tok, t5 = model._tokenizer, model._model
    ids = tok(f"predict: {premise}</s>{claim}", add_special_tokens=False)["input_ids"] + [1]
    with torch.inference_mode():
        logits = t5(input_ids=torch.tensor([ids]), decoder_input_ids=torch.tensor([[0]])).logits
    pair = logits[0, -1, [WORDS.index("1"), WORDS.index("0")]].softmax(-1)
    assert got.supported == pytest.approx(float(pair[0]), abs=1e-5)
    true = build(AttributionConfig(type="t5-true", model=str(path), batch_size=2))
    assert true.score(premise, claim).supported != pytest.approx(got.supported, abs=1e-6)


CHAT = (
    "{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} </s>{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


def _tiny_chat_llm(path):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = ["<pad>", "</s>", "<unk>", "<system>", "<user>", "<assistant>", "Yes", "No",
             "Document", "Claim", ":", "the", "tower", "opened", "in", "1889", "1887", "it",
             "is", "in", "paris", ".", "answer", "or", "decide"]  # fmt: skip
    vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split(r"<\w+>|\w+|[^\w\s]", "isolated")
    tok = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    tok.add_special_tokens({"additional_special_tokens": ["<system>", "<user>", "<assistant>"]})
    tok.chat_template = CHAT
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=512, pad_token_id=0, eos_token_id=1)  # fmt: skip
    LlamaForCausalLM(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def test_llm_check_reads_yes_against_no_at_the_first_answer_token(tmp_path):
    path = _tiny_chat_llm(tmp_path / "llm")
    model = build(AttributionConfig(type="llm-check", model=str(path), batch_size=2))
    pairs = [("the tower opened in 1889 .", "it opened in 1887 ."),
             ("the tower is in paris .", "it is in paris .")]  # fmt: skip
    got = model.score_batch(pairs)
    tok, llm = model._tokenizer, model._model
    for (premise, claim), s in zip(pairs, got, strict=True):
        text = tok.apply_chat_template(
            [{"role": "system", "content": model.instruction},
             {"role": "user", "content": f"Document: {premise}\nClaim: {claim}"}],
            add_generation_prompt=True, tokenize=False,
        )  # fmt: skip
        assert text.endswith("<assistant>") and f"Document: {premise}" in text
        ids = tok(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            probs = llm(input_ids=ids).logits[0, -1].softmax(-1)
        yes, no = (
            float(probs[tok.convert_tokens_to_ids("Yes")]),
            float(probs[tok.convert_tokens_to_ids("No")]),
        )
        assert s.supported == pytest.approx(yes / (yes + no), abs=1e-4)
        assert s.contradicted == 0.0
    with pytest.raises(ValueError, match="needs attribution.model"):
        AttributionConfig(type="llm-check")
