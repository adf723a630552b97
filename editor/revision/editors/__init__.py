"""Editors: revise a text so it agrees with evidence, minimally. One interface, chosen in config.

``edit(text, evidence, context) -> Revision`` (and ``edit_batch``): the revised text and a short
reason. The revision loop (``editor.revision.reviser``) decides *when* to call an editor (the agreement
gate), on which span (sentence or passage) and rejects edits that are too large; an editor only
decides *how* to fix.

- ``identity``: changes nothing (the baseline).
- ``substitute``: the offline default until a trained editor ships. Candidate minimal edits swap
  one name, number or date of the text for a same-type one the evidence states (or swap two
  same-type names of the text, for role errors); the attribution model scores every candidate
  against the evidence and the best is kept if it raises P(supported) - P(contradicted) by at
  least ``min_gain`` and ends up supported more than contradicted.
- ``prompted``: RARR's editor: a few-shot LLM prompt per evidence ("copy the wrong words, then
  the fix"), applied as a span replacement, so the LLM cannot rewrite what it was not asked to.
- ``fid`` (``fid.py``) and ``causal`` (``causal.py``): trained seq2seq / causal editors.

Contract: ``base.py``; one editor per file; the revision loop asks several in turn
(``editor.revision.proposers``). Built-in editors are registered here.
"""

from __future__ import annotations

from typing import Any

from editor.claims.slots import typed_spans
from editor.config import EditorConfig
from editor.revision.editors.base import Editor, Revision, available, build, register
from editor.revision.editors.identity import IdentityEditor
from editor.revision.editors.model import ModelEditor, trained_evidence
from editor.revision.editors.prompted import PromptedEditor, apply_fix
from editor.revision.editors.substitute import SubstituteEditor, fit_replacement

__all__ = [
    "Editor",
    "IdentityEditor",
    "ModelEditor",
    "PromptedEditor",
    "Revision",
    "SubstituteEditor",
    "apply_fix",
    "available",
    "build",
    "fit_replacement",
    "register",
    "trained_evidence",
    "typed_spans",
]


def _fid(cfg: EditorConfig, **_: Any) -> Editor:
    from editor.revision.editors.fid import FiDEditor

    assert cfg.model is not None  # PipelineConfig refuses editor.type=fid without a model
    return FiDEditor(
        cfg.model,
        adapter=cfg.adapter,
        max_evidence=cfg.max_evidence or trained_evidence(cfg.adapter),
        max_input_tokens=cfg.max_input_tokens,
        max_new_tokens=cfg.max_new_tokens,
        num_beams=cfg.num_beams,
        device=cfg.device,
    )


def _causal(cfg: EditorConfig, llm_cfg: Any = None, **_: Any) -> Editor:
    from editor.revision.editors.causal import DEFAULT_BASE, CausalEditor, default_causal_adapter

    base = cfg.model or (llm_cfg.model if llm_cfg is not None else DEFAULT_BASE)
    adapter = cfg.adapter
    if adapter is None and base == DEFAULT_BASE and default_causal_adapter().is_dir():
        adapter = str(default_causal_adapter())  # the shipped adapter, trained on this base
    return CausalEditor(
        base,
        adapter=adapter,
        prompt=cfg.prompt,
        max_evidence=cfg.max_evidence or trained_evidence(adapter),
        max_new_tokens=cfg.max_new_tokens,
        num_beams=cfg.num_beams,
        device=cfg.device,
        prompt_lookup=cfg.prompt_lookup,
    )


register("identity", lambda cfg, **_: IdentityEditor())
register(
    "substitute",
    lambda cfg, attribution, policy, **_: SubstituteEditor(attribution(), policy.min_gain),
)
register(
    "prompted",
    lambda cfg, llm, **_: PromptedEditor(llm(), cfg.prompt, max_new_tokens=cfg.max_new_tokens),
)
register("fid", _fid)

register("causal", _causal)
