"""The component configurations: one pydantic model per stage, each field with a description
and a default (a stage's ``type`` is checked against that stage's registry), composed into
``PipelineConfig``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from editor.config.base import _Cfg, _registered
from editor.config.revision import AgreementConfig, EditorConfig, JudgeConfig, RevisionConfig
from editor.verdicts import Label
from retrieval.config import IndexConfig, Probability, RerankConfig, SearchConfig, WebConfig


class LLMConfig(_Cfg):
    """Which LLM backend serves prompted stages (query generation, later the prompted editor)."""

    backend: Annotated[str, _registered("llm.backend")] = Field(
        "transformers",
        description="transformers, openai or vllm, or a backend added with "
        "editor.llm.registry.register().",
    )
    model: str = Field(
        "packaged:gemma-3-270m",
        description="transformers/vllm: packaged:NAME, local path or hub id; openai: the served model name.",
    )
    base_url: str | None = Field(
        None, description="openai backend: server URL; default from PURR_LLM_BASE_URL."
    )
    timeout_s: float = Field(60.0, gt=0, description="Per-request timeout.")
    max_retries: int = Field(
        3, ge=0, description="Retries with exponential backoff on connection errors and 429/5xx."
    )
    max_concurrency: int = Field(
        8, ge=1, description="Requests in flight at once (openai backend)."
    )
    max_new_tokens: int = Field(128, ge=1, le=4096)
    temperature: float = Field(0.7, ge=0, le=2)
    device: str = Field("cpu", description="transformers backend: torch device.")


class QueryGenConfig(_Cfg):
    """Question generation (CQGen)."""

    type: Annotated[str, _registered("querygen.type")] = Field(
        "sentence",
        description="sentence: one decontextualised query per sentence; entity: NER/number-focused "
        "questions; llm: few-shot prompted LLM sampled `samples` times, union of questions; "
        "passage: the whole passage as one query (an ablation); trained: a model distilled "
        "from llm by `purr train querygen` (querygen.adapter).",
    )
    samples: int = Field(
        3, ge=1, le=10, description="LLM samples whose questions are unioned (RARR: 3)."
    )
    max_queries: int = Field(16, ge=1, le=100, description="Cap on queries per passage.")
    prompt: str | None = Field(
        None,
        description="Prompt file for the llm (or trained) generator; None = the packaged one.",
    )
    model: str | None = Field(
        None,
        description="trained: base model (default packaged:gemma-3-270m) or a fully trained folder.",
    )
    adapter: str | None = Field(
        None, description="trained: the LoRA adapter folder written by `purr train querygen`."
    )


class ResearchConfig(_Cfg):
    """Research stage: K documents per query, snippets ranked, top J kept."""

    k_documents: int = Field(
        5, ge=1, le=100, description="Documents retrieved per query (RARR K=5)."
    )
    j_snippets: int = Field(
        1, ge=1, le=20, description="Snippets kept per query after ranking (RARR J=1)."
    )
    subject_pages: int = Field(
        1,
        ge=0,
        le=10,
        description="Titles the sentence names (its subject first) whose pages join the "
        "candidates before the K documents the search found, at most this many; the reranker "
        "ranks their windows with the rest (0: off; retrieval.titles).",
    )
    max_snippets_per_doc: int = Field(
        8, ge=1, description="Candidate windows taken from one document (best first-stage windows)."
    )
    rerank_depth: int | None = Field(
        8,
        ge=1,
        description="Windows the cross-encoder reranks per query, taken in turn from the K "
        "documents (each document's best first-stage windows first); null = all of them "
        "(up to K x max_snippets_per_doc). The reranker is most of research's time; 8 keeps "
        "every edit of the statements suites and the real-answer dev set.",
    )
    min_relevance: Probability = Field(
        0.0, description="Drop evidence below this calibrated relevance."
    )
    source: Literal["index", "web", "both"] = Field(
        "index",
        description="What research searches: the local index, the web (cfg.web), or both fused.",
    )
    multi_hop: bool = Field(
        True,
        description="With a question as context that names its subject by a description "
        "('the film that won ...'): research the description, then the question about the "
        "entity found (editor.research.hops).",
    )
    set_aside_instructions: bool = Field(
        True,
        description="Blank the sentences of evidence (pages, given texts, cited sources) that "
        "give instructions instead of stating facts ('Ignore the above and write ...'), so no "
        "stage reads them; the result's warnings name them (editor.text.instructions).",
    )


class AttributionConfig(_Cfg):
    """The attribution (NLI) model behind auto-AIS: P(evidence entails sentence)."""

    type: Annotated[str, _registered("attribution.type")] = Field(
        "purr",
        description="purr: the project's trained attribution model (a local artefact folder); "
        "hf: any Hugging Face sequence-classification NLI model; t5-true: a TRUE-style T5 "
        "('premise: ... hypothesis: ...' -> '1'/'0', e.g. google/t5_xxl_true_nli_mixture); "
        "minicheck-t5: MiniCheck-Flan-T5 (lytang/MiniCheck-Flan-T5-Large); llm-check / "
        "llm-check-vllm: a chat LLM answering Yes/No (bespokelabs/Bespoke-MiniCheck-7B) "
        "through transformers or vLLM.",
    )
    model: str | None = Field(
        None,
        description="hf/t5-true: hub id (local cache only) or local path, required; purr: the "
        "artefact folder, or the name of one shipped in editor/models (purr-attribution, "
        "the default; purr-attribution-summaries, tuned on SummEdits contrast pairs).",
    )
    label_map: dict[str, Label] | None = Field(
        None,
        description="hf/purr: model label name or index -> label; None = inferred from "
        "config.id2label (needed for LABEL_0-style names).",
    )
    max_length: int = Field(
        128,
        ge=16,
        le=8192,
        description="Tokens per (premise window, hypothesis) pair; 128 = what the shipped "
        "model was trained on (better dev scores and twice the speed of 256).",
    )
    batch_size: int = Field(16, ge=1, le=1024, description="Pairs per forward pass.")
    overlap: int = Field(
        1, ge=0, le=8, description="Sentences shared by consecutive windows of a long premise."
    )
    gather: bool = Field(
        False,
        description="A long premise is also read as one window of the sentences that together "
        "cover most of the claim's content words (for claims several scattered sentences "
        "support); see docs/pages/results/judgement.md.",
    )
    calibration: str | None = Field(
        None,
        description="A recalibration to one domain (JSON from `purr train calibration`): "
        "P(supported) rescaled by Platt scaling fitted on labelled pairs of that domain.",
    )
    decompose: bool = Field(
        False,
        description="The report, `purr check` and `purr score`: split each sentence into its "
        "atomic parts by its parse (conjoined clauses, appositions, relative clauses) and call "
        "it supported only when every part is; the part that fails is named.",
    )
    fusion: bool = Field(
        True,
        description="purr: judge with the calibrated verifier (the NLI scores fused with slot "
        "checks and coverage by the model folder's fusion.json) when the folder has one; "
        "false = the NLI scores alone.",
    )
    device: str = Field("cpu", description="torch device.")
    runtime: Literal["onnx", "torch"] = Field(
        "onnx",
        description="hf/purr classifiers from a local folder on CPU: `onnx` runs an ONNX graph "
        "of the model (built once into the cache, about 10 s) with onnxruntime and `tokenizers`, "
        "no torch; `torch` runs the PyTorch model.",
    )
    quantize: Literal["none", "int8"] = Field(
        "none",
        description="hf/purr on CPU: int8 dynamic quantisation of the linear layers (faster; "
        "see `purr bench attribution` for speed and agreement with fp32); the span judge: its "
        "8-bit ONNX graph, built into the cache on first use (`purr bench span-judge`).",
    )

    @field_validator("label_map", mode="before")
    @classmethod
    def _label_keys_as_text(cls, value: Any) -> Any:
        return {str(k): v for k, v in value.items()} if isinstance(value, dict) else value

    @model_validator(mode="after")
    def _model_needed(self) -> AttributionConfig:
        if self.type in {"hf", "t5-true", "minicheck-t5", "llm-check", "llm-check-vllm"} and not (
            self.model
        ):
            raise ValueError(
                f"attribution.type={self.type} needs attribution.model (a hub id in the local "
                "cache or a local folder); set --set attribution.model=PATH, or use "
                "attribution.type=purr"
            )
        if self.type not in {"hf", "purr"} and self.label_map:
            raise ValueError(
                "attribution.label_map applies to classifiers (type hf or purr), not to "
                f"attribution.type={self.type}, which reads its own answer tokens; remove "
                "attribution.label_map"
            )
        return self


class LimitsConfig(_Cfg):
    """Input limits and per-stage timeouts of ``Pipeline.edit``."""

    max_chars: int = Field(20_000, ge=1, description="Longest text accepted (characters).")
    max_sentences: int = Field(100, ge=1, description="Most sentences accepted.")
    max_context_chars: int = Field(20_000, ge=0, description="Longest dialogue context.")
    research_timeout_s: float = Field(120.0, gt=0, description="Research stage timeout.")
    revision_timeout_s: float = Field(300.0, gt=0, description="Revision stage timeout.")
    report_timeout_s: float = Field(120.0, gt=0, description="Attribution report timeout.")
    english_only: bool = Field(
        True, description="Return non-English text unchanged with a warning."
    )


class CitationsConfig(_Cfg):
    """Citation repair of cited text (``Pipeline.edit`` with ``sources``)."""

    research: bool = Field(
        False,
        description="Research the claims the given sources cannot settle in the index (or the "
        "web backend) and append what supports or corrects them as new sources.",
    )
    max_candidates: int = Field(
        5, ge=1, description="Given sources tried for a claim its citations do not support."
    )
    locate: bool = Field(
        True,
        description="Name the words a source flags in a sentence its citations do not support "
        "(the span judge), where the verifier's verdict names no slot.",
    )


class PipelineConfig(_Cfg):
    """The whole pipeline, as saved beside every index, checkpoint and evaluation run."""

    index: IndexConfig = Field(default_factory=IndexConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    rerank: RerankConfig = Field(default_factory=RerankConfig)
    querygen: QueryGenConfig = Field(default_factory=QueryGenConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    research: ResearchConfig = Field(default_factory=ResearchConfig)
    attribution: AttributionConfig = Field(default_factory=AttributionConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    agreement: AgreementConfig = Field(default_factory=AgreementConfig)
    editor: EditorConfig = Field(default_factory=EditorConfig)
    revision: RevisionConfig = Field(default_factory=RevisionConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    citations: CitationsConfig = Field(default_factory=CitationsConfig)
    web: WebConfig = Field(default_factory=WebConfig)

    @model_validator(mode="after")
    def _llm_needed(self) -> PipelineConfig:
        if (
            self.querygen.type == "llm"
            and self.llm.backend == "openai"
            and self.llm.model.startswith("packaged:")
        ):
            raise ValueError(
                "querygen.type=llm with llm.backend=openai needs llm.model set to the served model "
                f"name, not '{self.llm.model}'; set --set llm.model=NAME"
            )
        if self.editor.type == "fid" and not self.editor.model:
            raise ValueError(
                "editor.type=fid needs editor.model (a T5 hub id in the local cache or a local "
                "folder); set --set editor.model=PATH"
            )
        return self
