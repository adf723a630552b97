"""The root configuration: one field per component."""

from __future__ import annotations

from pydantic import (
    Field,
    model_validator,
)

from editor.config.components import (
    AgreementConfig,
    AttributionConfig,
    EditorConfig,
    LimitsConfig,
    LLMConfig,
    QueryGenConfig,
    ResearchConfig,
    RevisionConfig,
    _Cfg,
)
from retrieval.config import IndexConfig, RerankConfig, SearchConfig


class PipelineConfig(_Cfg):
    """The whole pipeline, as saved beside every index, checkpoint and evaluation run."""

    index: IndexConfig = Field(default_factory=IndexConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    rerank: RerankConfig = Field(default_factory=RerankConfig)
    querygen: QueryGenConfig = Field(default_factory=QueryGenConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    research: ResearchConfig = Field(default_factory=ResearchConfig)
    attribution: AttributionConfig = Field(default_factory=AttributionConfig)
    agreement: AgreementConfig = Field(default_factory=AgreementConfig)
    editor: EditorConfig = Field(default_factory=EditorConfig)
    revision: RevisionConfig = Field(default_factory=RevisionConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)

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
