"""The revision stage's configurations: the judge, the rules judge's agreement gate and
editor, and the loop."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from editor.config.base import _Cfg, _registered
from retrieval.config import Probability

RuleFamily = Literal[
    "slot",
    "role",
    "negation",
    "nli",
    "form",
    "negated",
    "type",
    "value",
    "refuted",
    "support",
    "better",
    "statement",
    "reader",
    "question",
]
"""The rules judge's rule families (``GATE_RULES`` and ``ACCEPTANCE_RULES`` together, the
reader's signal and the question's answer comparison)."""


class ReaderPolicy(_Cfg):
    """The reader's signal (``judge.reader``): with a question as context, the trained
    extractive reader answers it from the text and from the evidence, and two confident,
    different answers name the text's words and propose the evidence's. Every number here is
    a probability of the reader's (``editor.reader``)."""

    enabled: bool = Field(True, description="ask the reader where a question is the context.")
    model: str | None = Field(None, description="the reader folder; None = the shipped one.")
    quantize: Literal["none", "int8"] = Field(
        "int8", description="int8: the reader as its 8-bit ONNX graph (built once into the cache)."
    )
    answers: Literal["span", "answer"] = Field(
        "span",
        description="span: each probability is one span's; answer: the spans of one value "
        "summed (editor.reader.answers) and calibrated (the reader's answer_calibration.json, "
        "fitted by purr eval confidence --save), so every number below reads an answer's.",
    )
    decision: Literal["head", "rules"] = Field(
        "rules",
        description="head: the judge's learned head (editor.judge.reader_head, its reader.json) "
        "decides each proposal of the reader from its answers' masses, the question's and the "
        "answers' kinds and the edit: applied, proven, suggested or doubted; rules: the "
        "thresholds below (apply_min, prove_min, proves, rival_ratio), an evidence answer of a kind the "
        "question does not ask for never proposed.",
    )
    head: str | None = Field(
        None, description="head: the reader head's reader.json; None = the shipped one."
    )
    other_sentences: bool = Field(
        True,
        description="with a question: each sentence of a longer answer that answers no part of "
        "it is read like a statement, its names, numbers and dates asked as clozes (the "
        "thresholds of statements).",
    )
    typed: bool = Field(
        True,
        description="rules: an evidence answer of another family of kinds than the question "
        "asks for (a year for 'who', a name for 'how many'; editor.claims.answer_types) is no "
        "proposal. The head always weighs the question's kind.",
    )
    min_evidence: Probability = Field(
        0.3, description="the evidence's answer must be at least this likely."
    )
    min_text: Probability = Field(
        0.3, description="the text's own answer must be at least this likely."
    )
    max_no_answer: Probability = Field(
        0.3, description="above this P(no answer) the evidence is read as silent."
    )
    rival_ratio: Probability = Field(
        0.3,
        description="no finding where an evidence answer that agrees with the text is at "
        "least this share of the best answer's probability (the evidence is ambiguous).",
    )
    doubt_min: Probability = Field(
        0.1,
        description="below the thresholds of a finding, an evidence answer that differs from "
        "the text's from this probability on (the evidence may state another value for the "
        "question, a wrong value standing elsewhere in it) leaves the sentence unverified, never "
        "supported: its words named, that answer suggested, nothing edited. 1 turns it off.",
    )
    apply_min: Probability = Field(
        0.5,
        description="the evidence's answer is applied (safe) from this probability on, both "
        "readings this sure; below it the fix is suggested.",
    )
    proves: bool = Field(
        True,
        description="a sure reader proves its own fix where the verifier only fails to "
        "(support too low, no better, no sentence stating it), from prove_min; a refutation or "
        "a form problem still rejects it.",
    )
    prove_min: Probability = Field(
        0.73,
        description="proves: the evidence's answer must be at least this likely for the "
        "reader alone to prove its fix.",
    )
    rewrite: bool = Field(
        True,
        description="where the text gives no answer the reader finds and the evidence surely "
        "does (from apply_min), the causal editor proposes a rewrite stating it.",
    )
    statements: bool = Field(
        False,
        description="without a question, ask each name, number and date of a sentence as a "
        "cloze (the sentence with it blanked) of the evidence too.",
    )
    silent: bool = Field(
        True,
        description="with a question: a contradiction another rule found (the slot checks, "
        "NLI) in researched evidence the reader finds silent on the question (P(no answer) "
        "above max_no_answer: evidence about something else), in the sentence holding the "
        "text's answer, has its edit suggested, not applied. The caller's evidence is exempt.",
    )
    cloze_form: Literal["cloze", "question", "generated"] = Field(
        "generated",
        description="how a sentence without a question asks for a value: cloze (the sentence "
        "with it blanked), question (a wh-word in its place: 'The tower was completed in "
        "when?') or generated (the entity query generator's question about it: 'The tower was "
        "completed in what year?'; a value no entity covers is asked as a cloze).",
    )
    cloze_min: Probability = Field(
        0.5,
        description="statements: the evidence's answer to a cloze must be at least this likely.",
    )


class JudgeConfig(_Cfg):
    """The judge: what decides whether a sentence is wrong, names the words, proposes a fix and
    accepts an edit (``editor.judge``)."""

    type: Annotated[str, _registered("judge.type")] = Field(
        "rules",
        description="rules: the agreement gate (agreement.*) with its slot checks decides, the "
        "editor (editor.*) proposes, the verifier, form rules and proofs accept; span: the span "
        "judge decides, names the words, copies the evidence's words in and accepts; union: "
        "both, the span judge's edit where it makes one, else the rules judge's; learned: both, "
        "decided by a trained head that applies an edit only where it is sure.",
    )
    head: str | None = Field(
        None, description="learned: the head's folder (head.json); None = the shipped one."
    )
    rules_off: list[RuleFamily] = Field(
        default_factory=list,
        description="rules: rule families not asked, for ablations (`purr eval rules`): the "
        "gate's slot, role, negation, nli; the acceptance's form, negated, type, value, "
        "refuted, support, better, statement; the reader's signal (reader) and the "
        "question's answer comparison (question).",
    )
    model: str | None = Field(
        None, description="span: the span judge folder; None = the shipped purr-span-judge."
    )
    guards: bool = Field(
        True,
        description="span: reject an edit the form guards refuse (a pronoun for a name, a "
        "question made of an answer, a doubled name, a value of another kind).",
    )
    device: str = Field("cpu", description="span: torch device.")
    quantize: Literal["none", "int8"] = Field(
        "none",
        description="span on CPU: the judge as its 8-bit ONNX graph (also the citation "
        "locator's); built into the cache on first use (`purr bench span-judge`).",
    )
    reader: ReaderPolicy = Field(
        default_factory=ReaderPolicy,
        description="the extractive reader's answers as a signal (with a question as context).",
    )
    # -- the policy: every number that turns a score into a decision ------------------------
    contradicted_min: Probability = Field(
        0.7,
        description="P(contradicted) from which the evidence contradicts a sentence (and above "
        "its P(supported)) where no slot check names the difference: the gate, the report "
        "and the citation check (editor.policy.refutes).",
    )
    supported_min: Probability = Field(
        0.5, description="the gate: P(supported) from which the evidence agrees."
    )
    verify_edits: bool = Field(
        True,
        description="Do no harm: accept an edit only when the verifier rates the revised "
        "sentence supported by the same evidence (at least accept_min_supported, and more "
        "than the original) and the sentence keeps its form (no question made of an answer, "
        "no name doubled, nothing pasted from the user's question).",
    )
    accept_min_supported: Probability = Field(
        0.5, description="P(supported) the revised sentence needs (verify_edits)."
    )
    min_gain: Probability = Field(
        0.2,
        description="substitute and the answer editor: how much P(supported) - P(contradicted) "
        "must rise to keep a swap.",
    )
    max_edit_chars: int = Field(
        50, ge=1, description="Reject an edit whose Levenshtein distance exceeds this (RARR: 50)."
    )
    max_edit_ratio: float = Field(
        0.5, gt=0, le=1, description="Reject an edit larger than this share of the text (RARR)."
    )
    outranked: bool = Field(
        False,
        description="Set aside a contradiction (report it, edit nothing) where a more relevant "
        "evidence supports the same sentence (editor.judge.base.outranked). Worth it with "
        "research.j_snippets of 2 or more; at 1 it changed no statement and cost a real fix.",
    )
    apply_unsure: bool = Field(
        False,
        description="Apply the edits the judge is unsure of too (rejected for want of proof, "
        "not refuted; otherwise reported as suggestions: `purr edit --apply-unsure`).",
    )
    attributed_min: Probability = Field(
        0.5,
        description="P(supported) from which auto-AIS counts a sentence attributable, and the "
        "report calls a sentence the judge did not assess supported.",
    )
    remove_citation_below: Probability = Field(
        0.02,
        description="Citation repair: a citation whose source gives its claim P(supported) "
        "under this, and no source supports it, is removed.",
    )


class AgreementConfig(_Cfg):
    """Agreement model: does the text imply the same answer to a query as the evidence?"""

    type: Annotated[str, _registered("agreement.type")] = Field(
        "nli",
        description="The rules judge's gate. nli: question-guided NLI with the attribution "
        "model's P(contradicted) and the slot checks; llm: RARR's prompted chain-of-thought "
        "check through the LLM backend.",
    )
    sentences_per_query: int = Field(
        1, ge=1, le=10, description="nli: sentences of the text judged per query."
    )
    prompt: str | None = Field(None, description="llm: prompt file; None = the packaged one.")
    max_new_tokens: int = Field(96, ge=8, le=1024, description="llm: tokens of reasoning.")


class EditorConfig(_Cfg):
    """The rules judge's editor: what proposes a fix where the gate finds a contradiction."""

    type: Annotated[str, _registered("editor.type")] = Field(
        "substitute",
        description="identity: no edits; substitute: NLI-verified swap of contradicted names, "
        "numbers and dates for the evidence's (the default, tried first); prompted: RARR's "
        "few-shot LLM editor; fid: fusion-in-decoder T5 (PURR); causal: a causal LM denoising "
        "editor (LoRA adapter; the shipped purr-editor-causal).",
    )
    model: str | None = Field(
        None,
        description="fid: T5 hub id or local path (required); causal: base model (None = "
        "the LLM config's model).",
    )
    adapter: str | None = Field(None, description="fid/causal: a peft LoRA adapter folder.")
    fallback: Annotated[str, _registered("editor.fallback")] | None = Field(
        "causal",
        description="Editor asked where the judge applies none of `type`'s revisions (the text "
        "unchanged, an edit over the revision limits, or one it refuses or doubts; the default: "
        "substitute, then the causal LLM editor, which costs about 2 s a call on two CPU "
        "cores); None = no second editor.",
    )
    prompt: str | None = Field(None, description="prompted/causal: prompt file; None = packaged.")
    answers: bool = Field(
        True,
        description="With a question as context, edit the answer span (the type the question "
        "asks for) with the evidence's answer to it, before the editor itself.",
    )
    max_evidence: int | None = Field(
        None,
        ge=1,
        le=16,
        description="fid/causal: evidence per input; None = what the adapter was trained with "
        "(its train_config.json), else 4.",
    )
    max_input_tokens: int = Field(256, ge=16, le=4096, description="fid: tokens per pair.")
    max_new_tokens: int = Field(96, ge=4, le=1024, description="Tokens of the revision.")
    num_beams: int = Field(1, ge=1, le=16, description="fid/causal: beam search width.")
    prompt_lookup: int = Field(
        10,
        ge=0,
        le=64,
        description="causal, greedy: draft tokens copied from the prompt per step "
        "(prompt-lookup decoding; same output, about 1.8x faster on CPU because a revision "
        "mostly repeats the claim); 0 = plain decoding.",
    )
    device: str = Field("cpu", description="fid/causal: torch device.")


class RevisionConfig(_Cfg):
    """The revision loop: agreement gate, then edit; iterative (RARR) or one pass (PURR)."""

    mode: Literal["iterative", "one-pass"] = Field(
        "iterative",
        description="iterative: each (query, evidence) gated and edited in turn (RARR); "
        "one-pass: all evidence given to the editor at once (PURR).",
    )
    gate: bool = Field(True, description="Call the editor only where the evidence disagrees.")
    scope: Literal["sentence", "passage"] = Field(
        "sentence",
        description="sentence: the editor sees the sentence the agreement model judged, "
        "spliced back after; passage: the whole text.",
    )
    max_steps: int = Field(16, ge=1, le=100, description="Cap on (query, evidence) steps.")
